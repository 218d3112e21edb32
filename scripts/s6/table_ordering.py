"""Snakemake script: Kendall tau of the sampled against the full model ordering (S6)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s6.jobs import table_ordering

with log_to(snakemake.log[0], snakemake.threads):
    table_ordering(snakemake.input.estimates, snakemake.input.replicates, snakemake.params.level, snakemake.output.table)
