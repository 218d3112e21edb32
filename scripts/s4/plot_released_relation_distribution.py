"""Snakemake script: Fig. 2, relation distributions of FB-Test-O, FB-Test-S and FB-Test-S-C."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.figures import plot_relation_distribution

with log_to(snakemake.log[0]):  # no torch here: skip its import
    plot_relation_distribution(
        distribution_path=snakemake.input.distribution,
        kl_path=snakemake.input.kl,
        pdf=snakemake.output.pdf,
        png=snakemake.output.png,
    )
