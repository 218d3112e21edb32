"""Snakemake script: S1 constant and random reference scorers, each metric next to its theoretical value."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s1.reference_table import write_reference_scorer_table

with log_to(snakemake.log[0], snakemake.threads):
    write_reference_scorer_table(
        dataset_specs=snakemake.params.dataset_specs,
        data_dir=snakemake.params.data_dir,
        out=snakemake.output.table,
        split=snakemake.params.split,
        metrics=snakemake.params.metrics,
        random_seed=snakemake.params.random_seed,
        memory_budget_mb=snakemake.params.memory_budget_mb,
    )
