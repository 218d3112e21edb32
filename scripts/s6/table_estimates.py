"""Snakemake script: estimates of the full metrics with intervals over test triples and draws (S6)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s6.evaluation import S6Settings
from kgeval.studies.s6.jobs import table_estimates
from kgeval.uncertainty.resampling import BootstrapSettings

with log_to(snakemake.log[0], snakemake.threads):
    table_estimates(
        list(snakemake.input.full),
        list(snakemake.input.sampled),
        S6Settings.from_config(snakemake.params.settings, snakemake.params.memory_budget_mb),
        BootstrapSettings.from_config(snakemake.params.uncertainty),
        {name: getattr(snakemake.output, name) for name in ("estimates", "replicates", "sizes")},
    )
