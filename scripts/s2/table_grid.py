"""Snakemake script: S2 models x datasets grid of base, adjusted and z-scored metrics (trained and released tiers)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s2.grid import GridSelection, write_grid_table

with log_to(snakemake.log[0], snakemake.threads):
    write_grid_table(
        snakemake.input.metrics,
        snakemake.input.expectations,
        snakemake.input.summaries,
        snakemake.output.table,
        GridSelection(
            families=snakemake.params.families,
            split=snakemake.params.split,
            side=snakemake.params.side,
            datasets=snakemake.params.datasets,
            models=snakemake.params.models,
        ),
    )
