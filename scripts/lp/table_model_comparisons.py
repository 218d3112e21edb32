"""Snakemake script: paired comparisons of every two models per dataset, split and seed (tables/model_comparisons.tsv)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.uncertainty.bootstrap_metrics import BootstrapSettings
from kgeval.uncertainty.model_comparisons import ComparedMetrics, model_comparisons_file

with log_to(snakemake.log[0]):  # no torch here: skip its import
    model_comparisons_file(
        list(snakemake.input.ranks),
        snakemake.output.table,
        settings=BootstrapSettings.from_config(snakemake.params.uncertainty),
        compared=ComparedMetrics.from_config(snakemake.params.comparisons),
    )
