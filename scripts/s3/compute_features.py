"""Snakemake script: S3 mapping features (s_name, n_attr, splits) and split sizes of one pair."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s3.jobs import features_to_files

with log_to(snakemake.log[0], snakemake.threads):
    features_to_files(
        key=snakemake.wildcards.s3_dataset,
        source_spec=snakemake.params.spec,
        settings=snakemake.params.settings,
        data_dir=snakemake.params.data_dir,
        features_out=snakemake.output.features,
        sizes_out=snakemake.output.sizes,
    )
