"""Snakemake script: S5 Table 2 (models ordered by MR' and by mean posterior; overlap of the comparisons)."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.studies.s5.tables import write_table_comparison

with log_to(snakemake.log[0], snakemake.threads):
    write_table_comparison(
        summary_path=snakemake.input.summary,
        assessment_path=snakemake.input.assessment,
        outputs={
            "comparison": snakemake.output.comparison,
            "overlap": snakemake.output.overlap,
            "paper": snakemake.output.paper,
        },
        unavailable=snakemake.params.unavailable,
        ranks_paths=list(snakemake.input.ranks),
        uncertainty=snakemake.params.uncertainty,
        run_files={"positives": list(snakemake.input.positives), "triple_sums": list(snakemake.input.triple_sums)},
        rank_type=snakemake.params.rank_type,
    )
