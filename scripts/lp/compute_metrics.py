"""Snakemake script: every rank metric, with its bootstrap interval, of each ranks table (one per split) of one model."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.uncertainty.bootstrap_metrics import BootstrapSettings, metrics_with_intervals_files

with log_to(snakemake.log[0], snakemake.threads):
    metrics_with_intervals_files(
        list(snakemake.input.ranks),
        list(snakemake.output.metrics),
        dataset=snakemake.wildcards.dataset,
        splits=list(snakemake.params.splits),
        settings=BootstrapSettings.from_config(snakemake.params.uncertainty),
    )
