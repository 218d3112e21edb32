"""Snakemake script: one S5 figure (five-number summaries per link-prediction method)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s5.figures import plot_s5_figure

with log_to(snakemake.log[0], snakemake.threads):
    plot_s5_figure(
        figure=snakemake.params.figure,
        assessment_path=snakemake.input.assessment,
        pdf=snakemake.output.pdf,
        png=snakemake.output.png,
    )
