"""Snakemake script: the S4 release's metrics as kgeval's metrics table (levels) and every test set's metrics."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.released_jobs import write_metrics

with log_to(snakemake.log[0]):  # no torch here: skip its import
    write_metrics(
        data_dir=snakemake.params.data_dir,
        folder=snakemake.params.folder,
        hits_at=snakemake.params.hits_at,
        ir_cutoff=snakemake.params.ir_cutoff,
        metrics_out=snakemake.output.metrics,
        evaluation_out=snakemake.output.evaluation,
    )
