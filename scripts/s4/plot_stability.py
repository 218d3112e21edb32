"""Snakemake script: Fig. 7, stability of system rankings to the test data."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.figures import plot_stability

with log_to(snakemake.log[0]):  # no torch here: skip its import
    plot_stability(
        stability_path=snakemake.input.table,
        dataset=snakemake.wildcards.dataset,
        pdf=snakemake.output.pdf,
        png=snakemake.output.png,
        pooled_labels=snakemake.params.pooled,
    )
