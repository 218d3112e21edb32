"""Snakemake script: Fig. 6 from the release, one system's micro MRR over relations per test set."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.figures import plot_released_relation_mrr

with log_to(snakemake.log[0]):  # no torch here: skip its import
    plot_released_relation_mrr(
        table_path=snakemake.input.table,
        system=snakemake.params.system,
        pdf=snakemake.output.pdf,
        png=snakemake.output.png,
    )
