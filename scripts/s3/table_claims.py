"""Snakemake script: S3 claims table (claims/s3.tsv) with bootstrap intervals over test mappings."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s3.claims import write_s3_claims

with log_to(snakemake.log[0], snakemake.threads):
    write_s3_claims(
        table_path=snakemake.input.table,
        ranks_paths=list(snakemake.input.ranks),
        features_paths=dict(zip(snakemake.params.datasets, snakemake.input.features, strict=True)),
        settings={
            "ideal": snakemake.params.ideal,
            "industrial": snakemake.params.industrial,
            "models": snakemake.params.models,
            "uncertainty": snakemake.params.uncertainty,
        },
        out=snakemake.output.table,
        # the strength table where the tier builds it (studies.s3.strength.enabled), else None: the fixed list
        strength_path=snakemake.params.strength,
    )
