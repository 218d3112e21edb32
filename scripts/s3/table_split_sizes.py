"""Snakemake script: the S3 split-size table of every pair."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s3.jobs import collate_tables_to_file

with log_to(snakemake.log[0], snakemake.threads):
    collate_tables_to_file(snakemake.input.sizes, snakemake.output.table, sort_by=["dataset"])
