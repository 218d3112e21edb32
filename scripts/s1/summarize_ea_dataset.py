"""Snakemake script: load one EA pair (checking its files) and write its one-row summary."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.studies.s1.alignment_runs import summarize_ea_pair
from kgeval.logs import log_to

with log_to(snakemake.log[0], snakemake.threads):
    summarize_ea_pair(
        key=snakemake.wildcards.ea_dataset,
        spec=snakemake.params.spec,
        data_dir=snakemake.params.data_dir,
        out=snakemake.output.summary,
    )
