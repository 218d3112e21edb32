"""Snakemake script: micro and macro ranks and metrics of every system at every S4 label level."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.jobs import evaluate_levels
from kgeval.studies.s4.settings import LevelSettings

with log_to(snakemake.log[0]):  # no torch here: skip its import
    evaluate_levels(
        triples_path=snakemake.input.triples,
        judgments_path=snakemake.input.judgments,
        ranks_paths=dict(zip(snakemake.params.systems, snakemake.input.ranks, strict=True)),
        settings=LevelSettings(
            max_depth=snakemake.params.max_depth,
            rank_type=snakemake.params.rank_type,
            hits_at=snakemake.params.hits_at,
            ir_cutoff=snakemake.params.ir_cutoff,
        ),
        answers_path=snakemake.output.answers,
        questions_path=snakemake.output.questions,
        metrics_path=snakemake.output.metrics,
    )
