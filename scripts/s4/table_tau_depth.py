"""Snakemake script: Kendall's tau between the sparse-label ranking and every label level (Figs. 4-5 data)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.jobs import table_tau_depth

with log_to(snakemake.log[0]):  # no torch here: skip its import
    table_tau_depth(metrics_path=snakemake.input.metrics, out=snakemake.output.table)
