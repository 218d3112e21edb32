"""Snakemake script: every metric per relation and per relation category of every ranks table
(tables/metrics_by_relation.tsv)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.lp.relation_metrics import metrics_by_relation_file
from kgeval.uncertainty.bootstrap_metrics import BootstrapSettings

with log_to(snakemake.log[0], snakemake.threads):
    metrics_by_relation_file(
        list(snakemake.input.ranks),
        snakemake.output.table,
        datasets=snakemake.params.datasets,
        data_dir=snakemake.params.data_dir,
        settings=BootstrapSettings.from_config(snakemake.params.uncertainty),
    )
