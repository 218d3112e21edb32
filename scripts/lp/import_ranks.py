"""Snakemake script: the ranks tables of a model given as a ranks file, read and checked against its dataset."""

from kgeval.runtime.forkserver import run_in_forkserver

run_in_forkserver()  # a local run's jobs start from the pre-imported server (kgeval.runtime.forkserver)

from kgeval.logs import log_to
from kgeval.lp.ranks_file import import_ranks

with log_to(snakemake.log[0], snakemake.threads):
    import_ranks(
        spec=snakemake.params.entry,
        dataset_spec=snakemake.params.dataset_spec,
        data_dir=snakemake.params.data_dir,
        splits=list(snakemake.params.splits),
        seed=int(snakemake.wildcards.seed),
        ranks_outs=list(snakemake.output.ranks),
        info_out=snakemake.output.source,
    )
