"""Snakemake script: one model on a dataset evaluated with sampled candidates, per split its counts and estimates."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.lp.sampled.counts import SampledCandidates
from kgeval.lp.sampled.jobs import evaluate_sampled
from kgeval.uncertainty.resampling import BootstrapSettings

with log_to(snakemake.log[0], snakemake.threads):
    evaluate_sampled(
        snakemake.input.model,
        (snakemake.wildcards.dataset, snakemake.params.dataset_spec, snakemake.params.data_dir),
        (snakemake.wildcards.model, int(snakemake.wildcards.seed)),
        list(snakemake.params.splits),
        (
            SampledCandidates.from_config(snakemake.params.candidates, snakemake.wildcards.dataset),
            BootstrapSettings.from_config(snakemake.params.uncertainty),
        ),
        {"counts": list(snakemake.output.counts), "metrics": list(snakemake.output.metrics)},
        device="cuda" if snakemake.resources.get("gpu", 0) else "cpu",
    )
