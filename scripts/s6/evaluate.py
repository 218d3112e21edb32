"""Snakemake script: draw the samples of one dataset and evaluate its studied models, full and sampled (S6)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s6.evaluation import S6Settings
from kgeval.studies.s6.jobs import evaluate_dataset

with log_to(snakemake.log[0], snakemake.threads):
    evaluate_dataset(
        models={key: getattr(snakemake.input, key) for key in snakemake.params.models if hasattr(snakemake.input, key)},
        dataset=(snakemake.wildcards.dataset, snakemake.params.dataset_spec, snakemake.params.data_dir),
        seed=int(snakemake.wildcards.seed),
        outputs={name: getattr(snakemake.output, name) for name in ("full", "sampled", "timing")},
        settings=S6Settings.from_config(snakemake.params.settings, snakemake.params.memory_budget_mb),
        device="cuda" if snakemake.resources.get("gpu", 0) else "cpu",
    )
