"""Snakemake script: S2's claims checked on the released results (results/claims/s2_released.tsv)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s2.claims import write_released_claims

with log_to(snakemake.log[0], snakemake.threads):
    write_released_claims(
        grid_path=snakemake.input.grid,
        published_path=snakemake.input.published,
        check_path=snakemake.input.check,
        summary_paths=snakemake.input.summaries,
        datasets=snakemake.params.datasets,
        uncertainty=snakemake.params.uncertainty,
        out=snakemake.output.table,
    )
