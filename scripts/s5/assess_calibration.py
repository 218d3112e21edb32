"""Snakemake script: fit, time and assess the calibration functions of one trained model (S5)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s5.assessment import assess_calibration
from kgeval.studies.s5.settings import S5Settings

with log_to(snakemake.log[0], snakemake.threads):
    assess_calibration(
        model_path=snakemake.input.model,
        dataset_key=snakemake.wildcards.dataset,
        dataset_spec=snakemake.params.dataset_spec,
        data_dir=snakemake.params.data_dir,
        outputs={
            name: getattr(snakemake.output, name)
            for name in ("calibrators", "assessment", "summary", "positives", "triple_sums")
        },
        settings=S5Settings.from_config(
            snakemake.params.settings,
            memory_budget_mb=snakemake.params.memory_budget_mb,
            device="cuda" if snakemake.resources.get("gpu", 0) else "cpu",
        ),
    )
