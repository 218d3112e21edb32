"""Snakemake script: S2 desiderata table (paper Table 1) computed on synthetic rank sets."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s2.desiderata import write_desiderata

with log_to(snakemake.log[0], snakemake.threads):
    write_desiderata(snakemake.output.table, snakemake.output.evidence, **snakemake.params.settings)
