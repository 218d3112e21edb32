"""Snakemake script: stack the sweep metrics of every (#train, split seed) of one EA pair."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.studies.s1.testsize import collate_testsize_to_file
from kgeval.logs import log_to

with log_to(snakemake.log[0], snakemake.threads):
    collate_testsize_to_file(paths=snakemake.input.metrics, out=snakemake.output.metrics)
