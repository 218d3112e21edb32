"""Snakemake script: ranks of one trained EA model on its whole test pool (both directions)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.studies.s1.alignment_runs import ea_ranks_to_file
from kgeval.logs import log_to

with log_to(snakemake.log[0], snakemake.threads):
    ea_ranks_to_file(
        key=snakemake.wildcards.ea_dataset,
        spec=snakemake.params.spec,
        data_dir=snakemake.params.data_dir,
        representations_path=snakemake.input.representations,
        split_path=snakemake.input.split,
        out=snakemake.output.ranks,
        memory_budget_mb=snakemake.params.memory_budget_mb,
    )
