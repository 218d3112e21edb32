"""Snakemake script: S1 every trained model's metrics under the four rank types, with their spread."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s1.rank_types import write_rank_types_table

with log_to(snakemake.log[0], snakemake.threads):
    write_rank_types_table(
        snakemake.input.metrics,
        snakemake.output.table,
        datasets=snakemake.params.datasets,
        models=snakemake.params.models,
    )
