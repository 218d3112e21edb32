"""Snakemake script: ranks and metrics of one trained EA model on every nested test subset (S1 sweep)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.studies.s1.testsize import SweepFiles, evaluate_testsize_to_files
from kgeval.logs import log_to

with log_to(snakemake.log[0], snakemake.threads):
    evaluate_testsize_to_files(
        key=snakemake.wildcards.ea_dataset,
        spec=snakemake.params.spec,
        data_dir=snakemake.params.data_dir,
        files=SweepFiles(
            representations=snakemake.input.representations,
            split=snakemake.input.split,
            ranks=snakemake.output.ranks,
            metrics=snakemake.output.metrics,
        ),
        test_sizes=snakemake.params.test_sizes,
        memory_budget_mb=snakemake.params.memory_budget_mb,
    )
