"""Snakemake script: S5 claims table (claims/s5.tsv)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s5.claims import write_s5_claims
from kgeval.uncertainty.resampling import BootstrapSettings

with log_to(snakemake.log[0], snakemake.threads):
    write_s5_claims(
        tables={
            "calibrators": snakemake.input.calibrators,
            "assessment": snakemake.input.assessment,
            "timing": snakemake.input.timing,
            "overlap": snakemake.input.overlap,
        },
        run_files={
            "positives": list(snakemake.input.positives),
            "triple_sums": list(snakemake.input.triple_sums),
        },
        bootstrap=BootstrapSettings.from_config(snakemake.params.uncertainty),
        out=snakemake.output.table,
    )
