"""Snakemake script: every rank metric of one ranks table."""

from kgeval.logs import log_to
from kgeval.metrics import compute_metrics_file

with log_to(snakemake.log[0], snakemake.threads):
    compute_metrics_file(snakemake.input.ranks, snakemake.output.metrics)
