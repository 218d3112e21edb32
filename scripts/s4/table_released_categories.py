"""Snakemake script: Table 3 from the release, tau per question side and relation category."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.released_jobs import write_tau_by_category

with log_to(snakemake.log[0]):  # no torch here: skip its import
    write_tau_by_category(
        data_dir=snakemake.params.data_dir,
        folder=snakemake.params.folder,
        hits_at=snakemake.params.hits_at,
        out=snakemake.output.table,
    )
