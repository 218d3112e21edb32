"""Snakemake script: S3 heatmaps of Hits@1 and AMRI per split and setting for one pair."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s3.figures import plot_splits_to_files

with log_to(snakemake.log[0], snakemake.threads):
    plot_splits_to_files(
        metrics_path=snakemake.input.metrics,
        dataset=snakemake.wildcards.s3_dataset,
        models=snakemake.params.models,
        pdf_out=snakemake.output.pdf,
        png_out=snakemake.output.png,
        side=snakemake.params.side,
        rank_type=snakemake.params.rank_type,
    )
