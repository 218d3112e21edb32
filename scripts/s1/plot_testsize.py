"""Snakemake script: one figure of the S1 test-size sweep (a panel per metric against #test)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.studies.s1.testsize_figures import plot_testsize_to_files
from kgeval.logs import log_to

with log_to(snakemake.log[0], snakemake.threads):
    plot_testsize_to_files(
        collated_path=snakemake.input.metrics,
        pdf=snakemake.output.pdf,
        png=snakemake.output.png,
        metrics=snakemake.params.metrics,
        rank_type=snakemake.params.rank_type,
        title=f"{snakemake.wildcards.ea_dataset}: GCN-Align, {snakemake.params.rank_type} ranks",
    )
