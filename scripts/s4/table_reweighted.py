"""Snakemake script: Table 4, micro metrics re-weighted to the sparse relation distribution."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.jobs import table_reweighted

with log_to(snakemake.log[0]):  # no torch here: skip its import
    table_reweighted(
        answers_path=snakemake.input.answers,
        level=snakemake.params.level,
        max_depth=snakemake.params.max_depth,
        hits_at=snakemake.params.hits_at,
        out=snakemake.output.table,
    )
