"""Snakemake script: S2 expectation plot."""

from kgeval.logs import log_to
from kgeval.studies.s2.expectations import write_expectation_figure

with log_to(snakemake.log[0], snakemake.threads):
    write_expectation_figure(snakemake.input.table, snakemake.output.pdf, snakemake.output.png)
