"""Snakemake script: time of full against sampled evaluation, collated (S6)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s6.jobs import table_timing

with log_to(snakemake.log[0], snakemake.threads):
    table_timing(list(snakemake.input.timing), snakemake.output.table)
