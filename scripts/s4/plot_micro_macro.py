"""Snakemake script: Fig. 5, Kendall's tau against pooling depth for micro and macro MRR and Hits@k."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.figures import plot_micro_macro

with log_to(snakemake.log[0]):  # no torch here: skip its import
    plot_micro_macro(
        tau_path=snakemake.input.table,
        dataset=snakemake.params.dataset,
        pdf=snakemake.output.pdf,
        png=snakemake.output.png,
        pooled_labels=snakemake.params.pooled,
        metrics=("mrr", f"hits@{snakemake.params.hits_at}"),
    )
