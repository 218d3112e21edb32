"""Snakemake script: the model x model matrices of one dataset's paired comparisons (figures/model_comparisons/)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.uncertainty.model_comparisons import plot_model_comparisons

with log_to(snakemake.log[0]):  # no torch here: skip its import
    plot_model_comparisons(
        table_path=snakemake.input.table,
        dataset=snakemake.wildcards.dataset,
        pdf=snakemake.output.pdf,
        png=snakemake.output.png,
    )
