"""Snakemake script: S3 seed mappings of every (bias, training ratio) for one pair and seed."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s3.jobs import seed_sets_to_files

with log_to(snakemake.log[0], snakemake.threads):
    seed_sets_to_files(
        features_path=snakemake.input.features,
        biases=snakemake.params.biases,
        train_ratios=snakemake.params.train_ratios,
        valid_fraction=snakemake.params.valid_fraction,
        seed=int(snakemake.wildcards.seed),
        seeds_out=snakemake.output.seeds,
        status_out=snakemake.output.status,
        bias_out=snakemake.output.bias,
    )
