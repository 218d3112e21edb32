"""Snakemake script: collate every per-model metrics table into results/tables/metrics.tsv."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.metrics import collate_metrics

with log_to(snakemake.log[0], snakemake.threads):
    collate_metrics(snakemake.input.metrics, snakemake.output.table)
