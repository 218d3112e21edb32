"""Snakemake script: Kendall tau against k (S6)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s6.jobs import plot_tau_file

with log_to(snakemake.log[0], snakemake.threads):
    plot_tau_file(snakemake.input.ordering, snakemake.output.pdf, snakemake.output.png)
