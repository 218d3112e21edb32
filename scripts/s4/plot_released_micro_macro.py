"""Snakemake script: Fig. 5 from the release, Kendall's tau against pooling depth for micro and macro metrics."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.figures import plot_micro_macro

with log_to(snakemake.log[0]):  # no torch here: skip its import
    plot_micro_macro(
        tau_path=snakemake.input.table,
        dataset="FB15k-237 (released)",
        pdf=snakemake.output.pdf,
        png=snakemake.output.png,
        metrics=("mrr", f"hits@{snakemake.params.hits_at}"),
    )
