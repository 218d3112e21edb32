"""Snakemake script: stack every S3 run's split metrics and status."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s3.jobs import collate_to_files

with log_to(snakemake.log[0], snakemake.threads):
    collate_to_files(
        metric_paths=snakemake.input.metrics,
        status_paths=snakemake.input.status,
        metrics_out=snakemake.output.metrics,
        status_out=snakemake.output.runs,
    )
