"""Snakemake script: MRR by relation category per model (figures/metrics_by_relation.{pdf,png})."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.io import read_tsv
from kgeval.logs import log_to
from kgeval.lp.relation_metrics import plot_categories

with log_to(snakemake.log[0]):
    plot_categories(read_tsv(snakemake.input.table), snakemake.output.pdf, snakemake.output.png)
