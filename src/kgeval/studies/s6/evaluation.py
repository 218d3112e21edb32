"""Sampled and full evaluation of the test queries of one dataset's models, from the models' own scores.

The candidate samples are drawn once per dataset (every sampler and draw, from a stream seeded by the study's seed,
the dataset, the sampler, the draw and the side), so every model is evaluated on the same candidates, as OGB's fixed
negatives are. Each model scores every entity for each test query (:meth:`kgeval.lp.scorer_interface.Scorer.score`,
the scorer the ranking engine uses); the full filtered rank (realistic: ``1 + #greater + #equal / 2`` among the
candidates left after filtering train, valid and test) and each sample's counts
(:func:`~kgeval.lp.sampled.estimators.sample_counts`) are read off the same score row, so a sample of all candidates
gives the full rank exactly.

Queries are the test triples' tail queries (``side`` ``tail``) and head queries (``head``), query ``i`` of a side
belonging to test triple ``i`` (the resampling unit).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from kgeval.lp.filtering import FilterIndex
from kgeval.lp.sampled.counts import SIDE_COLUMNS
from kgeval.lp.sampled.estimators import sample_counts
from kgeval.lp.sampled.samplers import RelationPositions, draw_candidates, known_mask
from kgeval.uncertainty.resampling import stream_seed

if TYPE_CHECKING:
    from kgeval.lp.scorer_interface import Scorer

__all__ = ["S6Settings", "query_batches", "draw_samples", "full_ranks", "full_and_sampled"]

logger = logging.getLogger(__name__)



@dataclass(frozen=True)
class S6Settings:
    """The ``studies.s6`` section of the validated config, and the ranking memory budget."""

    samplers: tuple[str, ...]
    ks: tuple[int, ...]
    draws: int
    seed: int
    gamma: float
    buckets: int
    timing_triples: int
    memory_budget_mb: float

    @classmethod
    def from_config(cls, section: Mapping, memory_budget_mb: float) -> S6Settings:
        """The settings from the validated section (defaults filled in)."""
        return cls(
            samplers=tuple(section["samplers"]),
            ks=tuple(sorted(int(k) for k in section["k"])),
            draws=int(section["draws"]),
            seed=int(section["seed"]),
            gamma=float(section["gamma"]),
            buckets=int(section["correction_buckets"]),
            timing_triples=int(section["timing_triples"]),
            memory_budget_mb=float(memory_budget_mb),
        )


def query_batches(num_queries: int, num_entities: int, memory_budget_mb: float) -> list[slice]:
    """Batches of queries whose (b, E) score rows, keys and masks fit the memory budget (about 40 bytes per entry)."""
    size = max(1, int(memory_budget_mb * 2**20 // (40 * max(num_entities, 1))))
    return [slice(start, min(start + size, num_queries)) for start in range(0, num_queries, size)]


def draw_samples(
    test: np.ndarray, known: FilterIndex, positions: RelationPositions, settings: S6Settings, dataset: str
) -> dict[tuple[str, int, str], np.ndarray]:
    """The candidate lists of every sampler, draw and side: (sampler, draw, side) -> (queries, width) int64, ``-1``
    padding, in draw order (:mod:`~kgeval.lp.sampled.samplers`)."""
    out = {}
    for sampler in settings.samplers:
        for draw in range(settings.draws):
            for side, (anchor, _) in SIDE_COLUMNS.items():
                rng = np.random.default_rng(stream_seed(settings.seed, dataset, sampler, str(draw), side))
                out[sampler, draw, side] = draw_candidates(
                    sampler, side, test[:, anchor], test[:, 1], known, positions, max(settings.ks), rng,
                    where="studies.s6.samplers",
                )
    return out


def full_ranks(rows: np.ndarray, answers: np.ndarray, excluded: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The realistic filtered rank, the candidate count and the true score of each query of a batch.

    :param rows: shape: (b, E) scores
    :param answers: shape: (b,) the true answers
    :param excluded: shape: (b, E) the known answers (the true answer among them)
    """
    true = rows[np.arange(len(answers)), answers]
    kept = ~excluded
    greater = ((rows > true[:, None]) & kept).sum(axis=1)
    equal = ((rows == true[:, None]) & kept).sum(axis=1)
    return 1.0 + greater + 0.5 * equal, kept.sum(axis=1) + 1, true


def _sample_rows(rows, true, samples, batch, settings, side, model) -> list[pd.DataFrame]:
    frames = []
    for sampler in settings.samplers:
        for draw in range(settings.draws):
            ids = samples[sampler, draw, side][batch]
            scores = np.take_along_axis(rows, np.maximum(ids, 0), axis=1)
            scores[ids < 0] = np.nan
            better, drawn = sample_counts(true, scores, settings.ks)
            frame = {"model": model, "sampler": sampler, "draw": draw, "side": side}
            frame["query"] = np.arange(batch.start, batch.stop)
            for i, k in enumerate(settings.ks):
                frame[f"better_{k}"], frame[f"drawn_{k}"] = better[i], drawn[i]
            frames.append(pd.DataFrame(frame))
    return frames


def full_and_sampled(
    scorer: Scorer,
    test: np.ndarray,
    known: FilterIndex,
    samples: Mapping[tuple[str, int, str], np.ndarray],
    settings: S6Settings,
    model: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One model's full ranks and sample counts on every test query.

    :return: ``(full, sampled)``: ``full`` one row per query (``model, side, query, head, relation, tail, rank,
        num_candidates``), ``sampled`` one row per sampler, draw and query (``model, sampler, draw, side, query``, then
        ``better_<k>``, ``drawn_<k>`` for each k)
    """
    full, sampled = [], []
    for side, (anchor, answer) in SIDE_COLUMNS.items():
        for batch in query_batches(len(test), known.num_entities, settings.memory_budget_mb):
            part = test[batch]
            rows = scorer.score_array(side, part[:, anchor], part[:, 1]).astype(np.float64)
            excluded = known_mask(known, side, part[:, anchor], part[:, 1], rows.shape)
            rank, count, true = full_ranks(rows, part[:, answer], excluded)
            full.append(pd.DataFrame({
                "model": model, "side": side, "query": np.arange(batch.start, batch.stop),
                "head": part[:, 0], "relation": part[:, 1], "tail": part[:, 2], "rank": rank, "num_candidates": count,
            }))
            sampled += _sample_rows(rows, true, samples, batch, settings, side, model)
    return pd.concat(full, ignore_index=True), pd.concat(sampled, ignore_index=True)

