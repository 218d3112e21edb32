"""The file-in/file-out function of each S6 rule (``scripts/s6/<rule>.py`` calls one of them)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from kgeval.io import read_tsv, write_parquet, write_tsv
from kgeval.studies.s6.claims import partial_sizes, write_s6_claims
from kgeval.studies.s6.evaluation import S6Settings, draw_samples, full_and_sampled
from kgeval.studies.s6.figures import plot_estimates, plot_tau
from kgeval.lp.sampled.samplers import RelationPositions
from kgeval.studies.s6.tables import estimates_table, ordering_table
from kgeval.studies.s6.timing import TIMING_COLUMNS, time_run
from kgeval.uncertainty.resampling import BootstrapSettings

__all__ = ["evaluate_dataset", "table_estimates", "table_ordering", "table_timing", "plot_estimates_file",
           "plot_tau_file", "table_claims"]

logger = logging.getLogger(__name__)


def evaluate_dataset(
    models: Mapping[str, str | os.PathLike],
    dataset: tuple[str, dict[str, Any], str | None],
    seed: int,
    outputs: Mapping[str, str | os.PathLike],
    settings: S6Settings,
    device: str = "cpu",
) -> None:
    """Draw the samples of one dataset, evaluate every model on them and time full against sampled evaluation.

    :param models: model key -> trained model file
    :param dataset: the dataset's key, config entry and ``data_dir``
    :param outputs: ``full``, ``sampled`` (parquet) and ``timing`` (TSV) paths
    :param device: where the models score (every entity, and the timed samples)
    """
    import torch

    from kgeval.lp.datasets import load_dataset
    from kgeval.lp.filtering import FilterIndex, as_triples_array
    from kgeval.lp.ranks import load_model
    from kgeval.lp.scoring import make_scorer

    key, spec, data_dir = dataset
    data = load_dataset(key, spec, data_dir)
    train, valid, test = (as_triples_array(f.mapped_triples) for f in (data.training, data.validation, data.testing))
    known = FilterIndex([train, valid, test], num_entities=data.num_entities, num_relations=data.num_relations)
    positions = RelationPositions.fit(train, data.num_entities, data.num_relations)
    samples = draw_samples(test, known, positions, settings, key)
    full, sampled, timing = [], [], []
    for model_key, path in sorted(models.items()):
        model = load_model(str(path), device)
        scorer = make_scorer(model, device=device)
        with torch.no_grad():
            f, s = full_and_sampled(scorer, test, known, samples, settings, model_key)
            timing.append(time_run(model, scorer, test, known, positions, settings, (key, model_key, seed)))
        full.append(f.assign(dataset=key, seed=seed))
        sampled.append(s.assign(dataset=key, seed=seed))
        logger.info("%s/%s: full MRR %.4f", key, model_key, float((1.0 / f["rank"]).mean()))
    write_parquet(pd.concat(full, ignore_index=True), outputs["full"])
    write_parquet(pd.concat(sampled, ignore_index=True), outputs["sampled"])
    write_tsv(pd.concat(timing, ignore_index=True), outputs["timing"], sort_by=["dataset", "model", "method"])


def table_estimates(
    full_paths: Sequence[str | os.PathLike],
    sampled_paths: Sequence[str | os.PathLike],
    settings: S6Settings,
    boot: BootstrapSettings,
    outputs: Mapping[str, str | os.PathLike],
) -> pd.DataFrame:
    """estimates.tsv, replicates.parquet and sizes.tsv from every dataset's full and sampled tables."""
    runs, counts = {}, []
    for full_path, sampled_path in zip(full_paths, sampled_paths, strict=True):
        full, sampled = pd.read_parquet(full_path), pd.read_parquet(sampled_path)
        counts.append(full[["dataset", "num_candidates"]])
        for (dataset, model, seed), part in full.groupby(["dataset", "model", "seed"]):
            own = sampled[(sampled["model"] == model)]
            runs[dataset, model, int(seed)] = (part, own)
    table, replicates = estimates_table(runs, settings, boot)
    keys = ["dataset", "model", "seed", "sampler", "k", "estimator", "metric"]
    write_tsv(table, outputs["estimates"], sort_by=keys)
    write_parquet(replicates, outputs["replicates"])
    sizes = partial_sizes(pd.concat(counts, ignore_index=True), settings.ks)
    write_tsv(sizes, outputs["sizes"], sort_by=["dataset", "k"])
    return table


def table_ordering(estimates_path, replicates_path, level: float, out: str | os.PathLike) -> pd.DataFrame:
    """ordering.tsv: Kendall tau of the sampled against the full model ordering."""
    table = ordering_table(read_tsv(estimates_path), pd.read_parquet(replicates_path), level)
    write_tsv(table, out, sort_by=["dataset", "seed", "sampler", "k", "estimator", "metric"])
    return table


def table_timing(paths: Sequence[str | os.PathLike], out: str | os.PathLike) -> pd.DataFrame:
    """timing.tsv: every dataset's timing rows, collated."""
    frames = [read_tsv(p) for p in paths]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(TIMING_COLUMNS))
    write_tsv(table, out, sort_by=["dataset", "model", "seed", "method"])
    return table


def plot_estimates_file(estimates_path, pdf, png) -> None:
    """Figure: estimated against full MRR per sampler, estimator and k."""
    plot_estimates(read_tsv(estimates_path), pdf, png)


def plot_tau_file(ordering_path, pdf, png) -> None:
    """Figure: Kendall tau against k."""
    plot_tau(read_tsv(ordering_path), pdf, png)


def table_claims(replicates_path, ordering_path, sizes_path, tolerance: float, level: float, out) -> pd.DataFrame:
    """claims/s6.tsv."""
    return write_s6_claims(replicates_path, ordering_path, sizes_path, tolerance, level, out)
