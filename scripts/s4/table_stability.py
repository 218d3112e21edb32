"""Snakemake script: stability of system rankings to random question subsets (Fig. 7 data)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.jobs import table_stability
from kgeval.studies.s4.settings import StabilitySettings

with log_to(snakemake.log[0]):  # no torch here: skip its import
    table_stability(
        answers_path=snakemake.input.answers,
        questions_path=snakemake.input.questions,
        settings=StabilitySettings(
            levels=snakemake.params.levels,
            max_depth=snakemake.params.max_depth,
            fractions=snakemake.params.fractions,
            repeats=snakemake.params.repeats,
            seed=snakemake.params.seed,
            hits_at=snakemake.params.hits_at,
            ir_cutoff=snakemake.params.ir_cutoff,
        ),
        out=snakemake.output.table,
    )
