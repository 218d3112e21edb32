"""Snakemake script: relation categories of one dataset (checked against the S4 release where it applies)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.jobs import compute_categories

with log_to(snakemake.log[0], snakemake.threads):
    compute_categories(
        dataset_key=snakemake.wildcards.dataset,
        dataset_spec=snakemake.params.dataset_spec,
        data_dir=snakemake.params.data_dir,
        threshold=snakemake.params.threshold,
        released=snakemake.wildcards.dataset in snakemake.params.released,
        release_folder=snakemake.params.released.get(snakemake.wildcards.dataset),
        out=snakemake.output.categories,
    )
