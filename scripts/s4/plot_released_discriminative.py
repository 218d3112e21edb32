"""Snakemake script: Fig. 8 from the release, p-values of all system pairs per test set."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.figures import plot_released_discriminative

with log_to(snakemake.log[0]):  # no torch here: skip its import
    k, c = snakemake.params.hits_at, snakemake.params.ir_cutoff
    plot_released_discriminative(
        pairs_path=snakemake.input.pairs,
        pdf=snakemake.output.pdf,
        png=snakemake.output.png,
        metrics=("mrr", f"hits@{k}", f"map@{c}", f"ndcg@{c}"),
    )
