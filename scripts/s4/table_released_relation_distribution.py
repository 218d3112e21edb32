"""Snakemake script: Fig. 2 data, relation distributions of FB-Test-O, FB-Test-S, FB-Test-S-C and their KL divergences."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.released_jobs import write_relation_distribution

with log_to(snakemake.log[0]):  # no torch here: skip its import
    write_relation_distribution(
        data_dir=snakemake.params.data_dir,
        labels=snakemake.params.labels,
        dataset_key=snakemake.params.dataset_key,
        dataset_spec=snakemake.params.dataset_spec,
        distribution_out=snakemake.output.distribution,
        kl_out=snakemake.output.kl,
    )
