"""Snakemake script: S2 expectation plot."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s2.expectations import write_expectation_figure

with log_to(snakemake.log[0], snakemake.threads):
    write_expectation_figure(snakemake.input.table, snakemake.output.pdf, snakemake.output.png)
