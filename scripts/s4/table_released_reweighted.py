"""Snakemake script: Table 4 from the release, tau with FB-Test-S-C's and FB-Test-S's relation distributions."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.released_jobs import write_tau_reweighted

with log_to(snakemake.log[0]):  # no torch here: skip its import
    write_tau_reweighted(
        data_dir=snakemake.params.data_dir,
        folder=snakemake.params.folder,
        hits_at=snakemake.params.hits_at,
        out=snakemake.output.table,
    )
