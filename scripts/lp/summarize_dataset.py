"""Snakemake script: load a dataset and write its summary table."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.lp.datasets import summarize_to_file
from kgeval.logs import log_to

with log_to(snakemake.log[0], snakemake.threads):
    summarize_to_file(
        snakemake.wildcards.dataset, snakemake.params.spec, snakemake.params.data_dir, snakemake.output.summary
    )
