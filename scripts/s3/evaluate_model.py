"""Snakemake script: train one S3 method on every setting's seed mappings of one pair and seed, rank the test
mappings, and compute the split metrics (one output folder per setting)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.runtime.usage import record_usage
from kgeval.studies.s3.grid import settings_of
from kgeval.studies.s3.jobs import MethodRun, RunFiles, SeedFiles, evaluate_model_to_files

with log_to(snakemake.log[0], snakemake.threads), record_usage(snakemake.output.usage):
    evaluate_model_to_files(
        key=snakemake.wildcards.s3_dataset,
        source_spec=snakemake.params.spec,
        settings=snakemake.params.settings,
        data_dir=snakemake.params.data_dir,
        inputs=SeedFiles(
            features=snakemake.input.features,
            seeds=snakemake.input.seeds,
            seed_status=snakemake.input.seed_status,
        ),
        method=MethodRun(
            model=snakemake.wildcards.s3_model,
            model_spec=snakemake.params.model_spec,
            seed=int(snakemake.wildcards.seed),
            candidates=snakemake.params.candidates,
            memory_budget_mb=snakemake.params.memory_budget_mb,
            side=snakemake.params.side,
            device="cuda" if snakemake.resources.get("gpu", 0) else "cpu",
            settings=settings_of(snakemake.params.only_settings),
        ),
        outputs=RunFiles(
            ranks=snakemake.output.ranks, metrics=snakemake.output.metrics, status=snakemake.output.status
        ),
    )
