"""Snakemake script: S5 Fig. 3's six-fit spread of the Platt functions and its table."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s5.figures import plot_s5_platt_spread

with log_to(snakemake.log[0], snakemake.threads):
    plot_s5_platt_spread(
        calibrators_path=snakemake.input.calibrators,
        table_out=snakemake.output.table,
        pdf=snakemake.output.pdf,
        png=snakemake.output.png,
    )
