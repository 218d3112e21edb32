"""Snakemake script: Table 2, FB-Test-S questions with their original and annotated answers, by name."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.released_jobs import write_examples

with log_to(snakemake.log[0]):  # no torch here: skip its import
    write_examples(
        data_dir=snakemake.params.data_dir,
        labels=snakemake.params.labels,
        questions=snakemake.params.questions,
        out=snakemake.output.table,
    )
