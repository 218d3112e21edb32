"""Snakemake script: S4 label set of one dataset (released S4 labels or simulated pooling)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s4.jobs import LabelFiles, build_labels
from kgeval.studies.s4.settings import LabelSettings

with log_to(snakemake.log[0], snakemake.threads):
    build_labels(
        dataset_key=snakemake.wildcards.dataset,
        dataset_spec=snakemake.params.dataset_spec,
        data_dir=snakemake.params.data_dir,
        settings=LabelSettings(
            released=snakemake.wildcards.dataset in snakemake.params.released,
            release_folder=snakemake.params.released.get(snakemake.wildcards.dataset),
            hide_fraction=snakemake.params.hide_fraction,
            seed=snakemake.params.simulation_seed,
            max_depth=snakemake.params.max_depth,
        ),
        test_ranks_path=snakemake.input.get("test_ranks"),
        topk_paths=dict(zip(snakemake.params.pool_systems, snakemake.input.get("topk", []))),
        out=LabelFiles(
            triples=snakemake.output.triples,
            judgments=snakemake.output.judgments,
            meta=snakemake.output.meta,
            summary=snakemake.output.levels,
        ),
    )
