"""Snakemake script: check a PyKEEN model trained elsewhere against its dataset and file it as a trained model."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.lp.checkpoint import import_checkpoint

with log_to(snakemake.log[0], snakemake.threads):
    import_checkpoint(
        spec=snakemake.params.entry,
        dataset_spec=snakemake.params.dataset_spec,
        data_dir=snakemake.params.data_dir,
        model_out=snakemake.output.model,
        info_out=snakemake.output.source,
    )
