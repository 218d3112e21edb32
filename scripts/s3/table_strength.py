"""Snakemake script: the S3 strength table (each method's Hits@1 in its paper's protocol beside the published one)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s3.strength import strength_table_to_file

with log_to(snakemake.log[0], snakemake.threads):
    strength_table_to_file(list(snakemake.input.rows), snakemake.output.table)
