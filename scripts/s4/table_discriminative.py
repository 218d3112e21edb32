"""Snakemake script: discriminative power, paired sign-flip (and t-test) p-values of every system pair (Fig. 8 data)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.jobs import table_discriminative

with log_to(snakemake.log[0]):  # no torch here: skip its import
    table_discriminative(
        answers_path=snakemake.input.answers,
        questions_path=snakemake.input.questions,
        levels=snakemake.params.levels,
        max_depth=snakemake.params.max_depth,
        hits_at=snakemake.params.hits_at,
        ir_cutoff=snakemake.params.ir_cutoff,
        permutations=snakemake.params.permutations,
        seed=snakemake.params.seed,
        out=snakemake.output.table,
    )
