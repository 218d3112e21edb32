"""Snakemake script: Table 3, Kendall's tau per relation category and question side."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.jobs import table_categories

with log_to(snakemake.log[0]):  # no torch here: skip its import
    table_categories(
        answers_path=snakemake.input.answers,
        categories_path=snakemake.input.categories,
        level=snakemake.params.level,
        max_depth=snakemake.params.max_depth,
        hits_at=snakemake.params.hits_at,
        out=snakemake.output.table,
    )
