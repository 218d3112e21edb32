"""Snakemake script: Fig. 6 data, one system's released micro MRR per relation on each FB15k-237 test set."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.released_jobs import write_relation_mrr

with log_to(snakemake.log[0]):  # no torch here: skip its import
    write_relation_mrr(
        data_dir=snakemake.params.data_dir,
        folder=snakemake.params.folder,
        system=snakemake.params.system,
        out=snakemake.output.table,
    )
