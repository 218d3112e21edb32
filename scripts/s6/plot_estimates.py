"""Snakemake script: estimated against full MRR per sampler, estimator and k (S6)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s6.jobs import plot_estimates_file

with log_to(snakemake.log[0], snakemake.threads):
    plot_estimates_file(snakemake.input.estimates, snakemake.output.pdf, snakemake.output.png)
