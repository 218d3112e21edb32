"""Snakemake script: every rank metric of each ranks table (one per split) of one trained model."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.metrics import compute_metrics_files

with log_to(snakemake.log[0], snakemake.threads):
    compute_metrics_files(list(snakemake.input.ranks), list(snakemake.output.metrics))
