"""Snakemake script: slope of each sweep metric against the number of test alignments, per #train."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.studies.s1.testsize import slopes_to_file
from kgeval.logs import log_to

with log_to(snakemake.log[0], snakemake.threads):
    slopes_to_file(
        collated_path=snakemake.input.metrics, out=snakemake.output.slopes, rank_type=snakemake.params.rank_type
    )
