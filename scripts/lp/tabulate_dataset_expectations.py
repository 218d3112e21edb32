"""Snakemake script: expectation and variance of every metric under random ranking for one dataset, per split."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.lp.candidates import dataset_expectations_to_file

with log_to(snakemake.log[0], snakemake.threads):
    dataset_expectations_to_file(
        snakemake.wildcards.dataset,
        snakemake.params.spec,
        snakemake.params.data_dir,
        snakemake.params.splits,
        snakemake.output.table,
    )
