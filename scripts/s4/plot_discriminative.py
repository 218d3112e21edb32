"""Snakemake script: Fig. 8, sorted p-values of all system pairs (discriminative power)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.figures import plot_discriminative

with log_to(snakemake.log[0]):  # no torch here: skip its import
    plot_discriminative(
        discriminative_path=snakemake.input.table,
        dataset=snakemake.wildcards.dataset,
        pdf=snakemake.output.pdf,
        png=snakemake.output.png,
        pooled_labels=snakemake.params.pooled,
    )
