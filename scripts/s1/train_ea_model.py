"""Snakemake script: split one EA pair's alignment (seeded) and train GCN-Align on #train pairs."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.studies.s1.alignment_runs import TrainingFiles, train_ea_to_files
from kgeval.logs import log_to
from kgeval.runtime.usage import record_usage

with log_to(snakemake.log[0], snakemake.threads), record_usage(snakemake.output.usage):
    train_ea_to_files(
        key=snakemake.wildcards.ea_dataset,
        spec=snakemake.params.spec,
        data_dir=snakemake.params.data_dir,
        model_spec=snakemake.params.model_spec,
        num_train=int(snakemake.wildcards.num_train),
        seed=int(snakemake.wildcards.seed),
        files=TrainingFiles(
            representations=snakemake.output.representations,
            split=snakemake.output.split,
            losses=snakemake.output.losses,
            config=snakemake.output.config,
            timing=snakemake.output.timing,
        ),
        device="cuda" if snakemake.resources.get("gpu", 0) else "cpu",
    )
