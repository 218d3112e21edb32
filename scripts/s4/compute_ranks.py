"""Snakemake script: ranks of a label set's whole universe for one trained model (released S4 labels)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.lp.ranks import TrainedModel
from kgeval.studies.s4.jobs import compute_universe_ranks

with log_to(snakemake.log[0], snakemake.threads):
    compute_universe_ranks(
        TrainedModel(
            model_path=snakemake.input.model,
            dataset_key=snakemake.wildcards.dataset,
            dataset_spec=snakemake.params.dataset_spec,
            data_dir=snakemake.params.data_dir,
            device="cuda" if snakemake.resources.get("gpu", 0) else "cpu",
        ),
        labels_path=snakemake.input.triples,
        out=snakemake.output.ranks,
        timing_path=snakemake.output.timing,
        memory_budget_mb=snakemake.params.memory_budget_mb,
    )
