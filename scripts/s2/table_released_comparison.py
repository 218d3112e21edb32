"""Snakemake script: the authors' published adjusted values next to kgeval's, from the same base metrics."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s2.released import write_published_comparison

with log_to(snakemake.log[0], snakemake.threads):
    write_published_comparison(
        data_dir=snakemake.params.data_dir,
        folder=snakemake.params.folder,
        metrics_path=snakemake.input.metrics,
        datasets=snakemake.params.datasets,
        out=snakemake.output.table,
    )
