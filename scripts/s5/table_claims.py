"""Snakemake script: S5 claims table (claims/s5.tsv)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s5.claims import write_s5_claims

with log_to(snakemake.log[0], snakemake.threads):
    write_s5_claims(
        calibrators_path=snakemake.input.calibrators,
        assessment_path=snakemake.input.assessment,
        timing_path=snakemake.input.timing,
        overlap_path=snakemake.input.overlap,
        out=snakemake.output.table,
    )
