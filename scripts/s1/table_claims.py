"""Snakemake script: S1 claims table (claims/s1.tsv)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s1.claims import SweepSetup, write_s1_claims

with log_to(snakemake.log[0], snakemake.threads):
    write_s1_claims(
        ranks_paths=list(snakemake.input.ranks),
        setup=SweepSetup(**snakemake.params.setup),
        out=snakemake.output.table,
        uncertainty=snakemake.params.uncertainty,
        reference_path=snakemake.input.reference,
        rank_types_path=snakemake.input.rank_types,
    )
