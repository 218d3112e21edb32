"""Snakemake script: Fig. 3, micro MRR per system on the original, sparse and pooled labels."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.figures import plot_system_ranking

with log_to(snakemake.log[0]):  # no torch here: skip its import
    plot_system_ranking(
        metrics_path=snakemake.input.metrics,
        dataset=snakemake.params.dataset,
        pdf=snakemake.output.pdf,
        png=snakemake.output.png,
        pooled_labels=snakemake.params.pooled,
    )
