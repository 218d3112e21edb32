"""Snakemake script: one S3 method in the published protocol of its paper (the strength check's rows)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.runtime.usage import record_usage
from kgeval.studies.s3.strength import StrengthSettings, method_strength_to_file

with log_to(snakemake.log[0], snakemake.threads), record_usage(snakemake.output.usage):
    method_strength_to_file(
        key=snakemake.params.pair,
        source_spec=snakemake.params.spec,
        pair_settings=snakemake.params.pair_settings,
        data_dir=snakemake.params.data_dir,
        model=snakemake.wildcards.s3_model,
        spec=snakemake.params.model_spec,
        settings=StrengthSettings.from_config(snakemake.params.strength, snakemake.params.seed),
        out=snakemake.output.rows,
    )
