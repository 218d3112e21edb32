"""Snakemake script: S1 metrics of the reference scorers and every model under seeded permutations of the entity IDs."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s1.permutations import write_permutation_table

with log_to(snakemake.log[0], snakemake.threads):
    write_permutation_table(
        model_paths=list(snakemake.input.models),
        dataset_specs=snakemake.params.dataset_specs,
        data_dir=snakemake.params.data_dir,
        out=snakemake.output.table,
        split=snakemake.params.split,
        permutation_seeds=snakemake.params.permutation_seeds,
        metrics=snakemake.params.metrics,
        random_seed=snakemake.params.random_seed,
        memory_budget_mb=snakemake.params.memory_budget_mb,
    )
