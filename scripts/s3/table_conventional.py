"""Snakemake script: S3 Table 4 (seed-free lexical matcher, precision / recall / F1 per split; PARIS not run)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s3.conventional import conventional_to_file

with log_to(snakemake.log[0], snakemake.threads):
    conventional_to_file(
        keys=snakemake.params.datasets,
        source_specs=snakemake.params.specs,
        settings=snakemake.params.settings,
        data_dir=snakemake.params.data_dir,
        features_paths=snakemake.input.features,
        threshold=snakemake.params.threshold,
        out=snakemake.output.table,
    )
