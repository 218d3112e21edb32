"""Snakemake script: S2 claims table on the trained grid (claims/s2.tsv)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s2.claims import write_trained_claims

with log_to(snakemake.log[0], snakemake.threads):
    write_trained_claims(
        grid_path=snakemake.input.grid, out=snakemake.output.table, uncertainty=snakemake.params.uncertainty
    )
