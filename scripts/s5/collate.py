"""Snakemake script: stack the per-model S5 tables."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s5.collation import collate_s5

with log_to(snakemake.log[0], snakemake.threads):
    collate_s5(
        assessment_paths=snakemake.input.assessment,
        summary_paths=snakemake.input.summary,
        calibrator_paths=snakemake.input.calibrators,
        model_names=snakemake.params.model_classes,
        assessment_out=snakemake.output.assessment,
        summary_out=snakemake.output.summary,
        calibrators_out=snakemake.output.calibrators,
    )
