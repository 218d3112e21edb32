"""Snakemake script: S5 Table 1 (time of the alternative protocol and its reduction)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s5.tables import write_table_timing

with log_to(snakemake.log[0], snakemake.threads):
    write_table_timing(
        summary_path=snakemake.input.summary,
        out=snakemake.output.table,
        paper_out=snakemake.output.paper,
        unavailable=snakemake.params.unavailable,
    )
