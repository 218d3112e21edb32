"""Snakemake script: S4 claims table on this tier's systems (claims/s4.tsv), with bootstrap intervals over questions."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.claims import write_trained_claims

with log_to(snakemake.log[0], snakemake.threads):
    labels = snakemake.params.labels
    write_trained_claims(
        paths={
            name: dict(zip(labels, getattr(snakemake.input, name), strict=True))
            for name in ("taus", "answers", "questions", "stability", "discriminative", "categories")
        },
        hits_at=snakemake.params.hits_at,
        ir_cutoff=snakemake.params.ir_cutoff,
        uncertainty=snakemake.params.uncertainty,
        simulated=snakemake.params.simulated,
        out=snakemake.output.table,
    )
