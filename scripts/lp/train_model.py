"""Snakemake script: train one PyKEEN model on one dataset with one seed."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.lp.training import TrainingOutputs, train_to_files
from kgeval.runtime.usage import record_usage

with log_to(snakemake.log[0], snakemake.threads), record_usage(snakemake.output.usage):
    train_to_files(
        dataset_key=snakemake.wildcards.dataset,
        dataset_spec=snakemake.params.dataset_spec,
        data_dir=snakemake.params.data_dir,
        model_spec=snakemake.params.model_spec,
        seed=int(snakemake.wildcards.seed),
        outputs=TrainingOutputs(
            model=snakemake.output.model,
            losses=snakemake.output.losses,
            config=snakemake.output.config,
            timing=snakemake.output.timing,
        ),
        device="cuda" if snakemake.resources.get("gpu", 0) else "cpu",
    )
