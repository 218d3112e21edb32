"""Snakemake script: the paper's Table 2 (ideal vs industrial) or Table 3 (ablations) with AMRI and ZMRR."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s3.jobs import tables_to_files

with log_to(snakemake.log[0], snakemake.threads):
    tables_to_files(
        metrics_path=snakemake.input.metrics,
        status_path=snakemake.input.runs,
        out=snakemake.output.table,
        which=snakemake.params.which,
        ideal=snakemake.params.ideal,
        industrial=snakemake.params.industrial,
        models=snakemake.params.models,
        side=snakemake.params.side,
        rank_type=snakemake.params.rank_type,
    )
