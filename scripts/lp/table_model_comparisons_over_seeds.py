"""Snakemake script: every two models with two or more seeds each, compared over their seeds
(tables/model_comparisons_over_seeds.tsv)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.uncertainty.resampling import BootstrapSettings
from kgeval.uncertainty.model_comparisons import ComparedMetrics
from kgeval.uncertainty.seed_comparisons import seed_comparisons_file

with log_to(snakemake.log[0]):  # no torch here: skip its import
    seed_comparisons_file(
        list(snakemake.input.ranks),
        snakemake.output.table,
        settings=BootstrapSettings.from_config(snakemake.params.uncertainty),
        compared=ComparedMetrics.from_config(snakemake.params.comparisons),
    )
