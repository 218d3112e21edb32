"""Snakemake script: Table 1 and the pool statistics, from the release's label files."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.released_jobs import write_label_sets

with log_to(snakemake.log[0]):  # no torch here: skip its import
    write_label_sets(
        data_dir=snakemake.params.data_dir,
        labels=snakemake.params.labels,
        dataset_key=snakemake.params.dataset_key,
        dataset_spec=snakemake.params.dataset_spec,
        table1_out=snakemake.output.table1,
        pool_out=snakemake.output.pool,
    )
