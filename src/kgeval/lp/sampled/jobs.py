"""The file-in/file-out functions of the sampled-evaluation rules (``scripts/lp/evaluate_sampled.py`` and
``scripts/lp/collate_sampled_metrics.py``)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from kgeval.io import read_tsv, write_parquet, write_tsv
from kgeval.lp.sampled.counts import SampledCandidates, sampled_counts
from kgeval.lp.sampled.estimates import ESTIMATE_COLUMNS, estimates_table
from kgeval.lp.sampled.samplers import RelationPositions
from kgeval.uncertainty.resampling import BootstrapSettings

__all__ = ["evaluate_sampled", "collate_sampled_metrics", "SORT_KEYS"]

logger = logging.getLogger(__name__)

#: the row order of the sampled metrics tables
SORT_KEYS: list[str] = ["dataset", "model", "seed", "split", "side", "rank_type", "estimator", "metric"]


def evaluate_sampled(
    model_path: str | os.PathLike,
    dataset: tuple[str, dict[str, Any], str | None],
    names: tuple[str, int],
    splits: Sequence[str],
    settings: tuple[SampledCandidates, BootstrapSettings],
    outputs: Mapping[str, Sequence[str | os.PathLike]],
    device: str = "cpu",
) -> None:
    """Evaluate one model on sampled candidates: per split, the counts (parquet) and the estimates table (TSV).

    :param dataset: the dataset's key, config entry and ``data_dir``
    :param names: the model key and the seed
    :param settings: the dataset's ``ranking.candidates`` entry and the ``uncertainty`` settings
    :param outputs: ``counts`` and ``metrics``, one path per split in ``splits`` order
    :param device: where the model scores the sampled triples
    """
    from kgeval.lp.datasets import load_dataset
    from kgeval.lp.filtering import FilterIndex, as_triples_array
    from kgeval.lp.ranks import load_model

    key, spec, data_dir = dataset
    candidates, boot = settings
    data = load_dataset(key, spec, data_dir)
    known = FilterIndex([as_triples_array(t) for t in data.all_mapped_triples()], num_entities=data.num_entities,
                        num_relations=data.num_relations)
    train = as_triples_array(data.training.mapped_triples)
    positions = RelationPositions.fit(train, data.num_entities, data.num_relations)
    model = load_model(str(model_path), device)
    for split, counts_path, metrics_path in zip(splits, outputs["counts"], outputs["metrics"], strict=True):
        start = time.perf_counter()
        triples = as_triples_array(data.factory(split).mapped_triples)
        counts = sampled_counts(model, triples, known, positions, candidates, (key, split))
        seconds = time.perf_counter() - start
        logger.info("%s/%s %s: %d queries on a %s in %.1f s", key, names[0], split, len(counts),
                    candidates.describe(), seconds)
        table = estimates_table(counts, candidates, boot, (key, names[0], int(names[1]), split))
        write_parquet(counts, counts_path)
        write_tsv(table, metrics_path, sort_by=SORT_KEYS)


def collate_sampled_metrics(paths: Sequence[str | os.PathLike], out: str | os.PathLike) -> pd.DataFrame:
    """``tables/metrics_sampled.tsv``: every sampled-evaluation table, one header (empty when no dataset is sampled)."""
    frames = [read_tsv(path) for path in paths]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(ESTIMATE_COLUMNS))
    write_tsv(table[list(ESTIMATE_COLUMNS)], out, sort_by=SORT_KEYS)
    return table
