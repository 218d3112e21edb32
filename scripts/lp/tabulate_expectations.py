"""Snakemake script: expectation and variance of every metric under random ranking, all datasets collated."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.metrics import tabulate_expectations

with log_to(snakemake.log[0], snakemake.threads):
    tabulate_expectations(snakemake.input.tables, snakemake.output.table)
