"""Snakemake script: the S2 release's base metrics with kgeval's adjusted indices and z-scores."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s2.released import write_released_metrics

with log_to(snakemake.log[0], snakemake.threads):
    write_released_metrics(
        data_dir=snakemake.params.data_dir,
        folder=snakemake.params.folder,
        expectations_path=snakemake.input.expectations,
        datasets=snakemake.params.datasets,
        out=snakemake.output.table,
        split=snakemake.params.split,
        side=snakemake.params.side,
    )
