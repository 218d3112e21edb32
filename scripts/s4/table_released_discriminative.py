"""Snakemake script: Fig. 8 data from the release, p-values per system pair and their summary per metric."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.released_jobs import write_discriminative

with log_to(snakemake.log[0]):  # no torch here: skip its import
    write_discriminative(
        data_dir=snakemake.params.data_dir,
        folder=snakemake.params.folder,
        hits_at=snakemake.params.hits_at,
        ir_cutoff=snakemake.params.ir_cutoff,
        pairs_out=snakemake.output.pairs,
        summary_out=snakemake.output.summary,
    )
