"""Snakemake script: the S3 bias check (mean s_name, n_attr and split shares of seed vs test mappings)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s3.jobs import collate_bias_to_file

with log_to(snakemake.log[0], snakemake.threads):
    collate_bias_to_file(snakemake.input.bias, snakemake.output.table)
