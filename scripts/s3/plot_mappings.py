"""Snakemake script: S3 Fig. 1 of one pair (mappings by name similarity and attribute count, seeds highlighted)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s3.figures import plot_mappings_to_files

with log_to(snakemake.log[0], snakemake.threads):
    plot_mappings_to_files(
        features_path=snakemake.input.features,
        seeds_path=snakemake.input.seeds,
        dataset=snakemake.wildcards.s3_dataset,
        bias=snakemake.params.bias,
        train_ratio=snakemake.params.train_ratio,
        pdf_out=snakemake.output.pdf,
        png_out=snakemake.output.png,
        table_out=snakemake.output.table,
    )
