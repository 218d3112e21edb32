"""Snakemake script: S4 claims table on this tier's systems (claims/s4.tsv)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.claims import write_trained_claims

with log_to(snakemake.log[0], snakemake.threads):
    write_trained_claims(
        tau_paths=dict(zip(snakemake.params.labels, snakemake.input.taus, strict=True)),
        out=snakemake.output.table,
    )
