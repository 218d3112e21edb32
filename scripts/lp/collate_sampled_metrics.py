"""Snakemake script: collate the sampled-evaluation estimates into results/tables/metrics_sampled.tsv."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.lp.sampled.jobs import collate_sampled_metrics

with log_to(snakemake.log[0], snakemake.threads):
    collate_sampled_metrics(list(snakemake.input.metrics), snakemake.output.table)
