"""Snakemake script: claims/s6.tsv (S6)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s6.jobs import table_claims

with log_to(snakemake.log[0], snakemake.threads):
    table_claims(snakemake.input.replicates, snakemake.input.ordering, snakemake.input.sizes,
                 snakemake.params.tolerance, snakemake.params.level, snakemake.output.claims)
