"""Snakemake script: ranks of one trained model on each evaluation split, and the test split's top-k lists."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.lp.ranks import TrainedModel, compute_ranks

with log_to(snakemake.log[0], snakemake.threads):
    compute_ranks(
        TrainedModel(
            model_path=snakemake.input.model,
            dataset_key=snakemake.wildcards.dataset,
            dataset_spec=snakemake.params.dataset_spec,
            data_dir=snakemake.params.data_dir,
            device="cuda" if snakemake.resources.get("gpu", 0) else "cpu",
        ),
        splits=snakemake.params.splits,
        ranks_paths=snakemake.output.ranks,
        topk_path=snakemake.output.topk,
        timing_path=snakemake.output.timing,
        top_k=snakemake.params.top_k,
        memory_budget_mb=snakemake.params.memory_budget_mb,
    )
