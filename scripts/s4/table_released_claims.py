"""Snakemake script: S4's claims checked on the released results (results/claims/s4_released.tsv)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.released_claims import write_released_claims

with log_to(snakemake.log[0]):  # no torch here: skip its import
    write_released_claims(paths=dict(snakemake.input.items()), out=snakemake.output.table)
