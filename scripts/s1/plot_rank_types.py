"""Snakemake script: S1 figure of every model's metrics under the four rank types (reference scorers for scale)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s1.rank_type_figures import write_rank_types_figure

with log_to(snakemake.log[0], snakemake.threads):
    write_rank_types_figure(
        snakemake.input.rank_types,
        snakemake.input.reference,
        snakemake.output.pdf,
        snakemake.output.png,
        split=snakemake.params.split,
        side=snakemake.params.side,
        metrics=snakemake.params.metrics,
    )
