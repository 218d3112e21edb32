"""Snakemake script: S5 claims table (claims/s5.tsv)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s5.claims import Bootstrap, write_s5_claims

with log_to(snakemake.log[0], snakemake.threads):
    uncertainty = snakemake.params.uncertainty
    write_s5_claims(
        tables={
            "calibrators": snakemake.input.calibrators,
            "assessment": snakemake.input.assessment,
            "timing": snakemake.input.timing,
            "overlap": snakemake.input.overlap,
        },
        positives_paths=list(snakemake.input.positives),
        bootstrap=Bootstrap(uncertainty["resamples"], uncertainty["seed"], uncertainty["level"]),
        out=snakemake.output.table,
    )
