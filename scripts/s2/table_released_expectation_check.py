"""Snakemake script: the expectations behind the published adjusted values, against kgeval's and a simulation."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s2.released import write_expectation_check

with log_to(snakemake.log[0], snakemake.threads):
    write_expectation_check(
        data_dir=snakemake.params.data_dir,
        folder=snakemake.params.folder,
        dataset_specs=snakemake.params.dataset_specs,
        datasets=snakemake.params.datasets,
        out=snakemake.output.table,
        split=snakemake.params.split,
        num_samples=snakemake.params.num_samples,
        seed=snakemake.params.seed,
    )
