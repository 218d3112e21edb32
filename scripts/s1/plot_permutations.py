"""Snakemake script: S1 figure of how much the non-deterministic rank's metrics move under permuted entity IDs."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s1.rank_type_figures import write_permutations_figure

with log_to(snakemake.log[0], snakemake.threads):
    write_permutations_figure(
        snakemake.input.table,
        snakemake.output.pdf,
        snakemake.output.png,
        split=snakemake.params.split,
        side=snakemake.params.side,
        metrics=snakemake.params.metrics,
    )
