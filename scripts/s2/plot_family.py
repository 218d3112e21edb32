"""Snakemake script: S2 figure of one metric family (base, adjusted index, z-score side by side), either tier."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s2.grid import write_family_figure

with log_to(snakemake.log[0], snakemake.threads):
    write_family_figure(snakemake.input.grid, snakemake.params.family, snakemake.output.pdf, snakemake.output.png)
