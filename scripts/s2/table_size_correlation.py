"""Snakemake script: S2 Spearman correlation of every metric with dataset size (trained and released tiers)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s2.grid import write_size_correlation

with log_to(snakemake.log[0], snakemake.threads):
    write_size_correlation(snakemake.input.grid, snakemake.output.table, size_column=snakemake.params.size_measure)
