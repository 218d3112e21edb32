"""Scores of sampled candidates against the true answer, per query, for a dataset evaluated with sampled candidates.

Each evaluation triple gives a tail query and a head query. For each, the sampler
(:mod:`~kgeval.lp.sampled.samplers`) draws up to ``k`` filtered candidates, the model scores the true triple and the
``k`` corrupted ones with ``score_hrt`` (the cost grows with ``k``, not with the number of entities), and the query
keeps ``greater`` and ``equal`` (sampled candidates scored above and equal to the true answer), ``drawn`` (``d``, at
most ``k``) and ``num_candidates`` (``N``: the filtered candidates of the full ranking, the true answer included,
from the filter index alone). Every query of a split draws from its own stream, seeded by the configured seed, the
dataset, the split and the side, so the same config gives the same samples for every model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kgeval.lp.filtering import FilterIndex
from kgeval.lp.sampled.samplers import RelationPositions, check_sampler, draw_candidates
from kgeval.uncertainty.resampling import stream_seed

__all__ = ["SampledCandidates", "COUNT_COLUMNS", "SIDE_COLUMNS", "score_pairs", "sampled_counts"]

#: the columns of a sampled counts table, one row per query (head queries first, then tail, each in triple order)
COUNT_COLUMNS: tuple[str, ...] = (
    "side", "triple", "head", "relation", "tail", "num_candidates", "drawn", "greater", "equal",
)
#: the anchor and answer column of each side's queries in an (n, 3) triples array
SIDE_COLUMNS: dict[str, tuple[int, int]] = {"head": (2, 0), "tail": (0, 2)}
#: scored (query, candidate) pairs held at once
PAIRS_PER_BATCH = 2**18


@dataclass(frozen=True)
class SampledCandidates:
    """One dataset's entry of ``ranking.candidates``: the sampler, the sample size and the seed."""

    sampler: str
    k: int
    seed: int

    @classmethod
    def from_config(cls, entry: Mapping[str, Any], dataset: str) -> SampledCandidates:
        """The settings from the validated entry of ``dataset`` (defaults filled in)."""
        check_sampler(entry["sampler"], f"ranking.candidates.{dataset}.sampler")
        return cls(sampler=str(entry["sampler"]), k=int(entry["k"]), seed=int(entry["seed"]))

    def describe(self) -> str:
        """The sample in words, for tables and logs."""
        return f"{self.sampler} sample of k={self.k:,} filtered candidates per query (seed {self.seed})"


def score_pairs(model, triples: np.ndarray, batch_size: int = PAIRS_PER_BATCH) -> np.ndarray:
    """The model's scores of individual triples (``score_hrt``, on the model's device), shape (n,)."""
    import torch

    out = []
    with torch.no_grad():
        for start in range(0, len(triples), batch_size):
            batch = torch.as_tensor(triples[start : start + batch_size], dtype=torch.long,
                                    device=getattr(model, "device", None))
            out.append(model.score_hrt(batch).reshape(-1).double().cpu().numpy())
    return np.concatenate(out) if out else np.zeros(0, dtype=np.float64)


def _side_counts(model, triples, known, positions, settings, side, rng) -> dict[str, np.ndarray]:
    anchor, answer = SIDE_COLUMNS[side]
    batch = max(1, PAIRS_PER_BATCH // max(settings.k, 1))
    greater, equal, drawn = (np.zeros(len(triples)) for _ in range(3))
    for start in range(0, len(triples), batch):
        part = triples[start : start + batch]
        ids = draw_candidates(settings.sampler, side, part[:, anchor], part[:, 1], known, positions, settings.k, rng)
        rows, columns = np.nonzero(ids >= 0)
        corrupted = part[rows].copy()
        corrupted[:, answer] = ids[rows, columns]
        true = score_pairs(model, part)
        scores = score_pairs(model, corrupted)
        n = len(part)
        greater[start : start + n] = np.bincount(rows, weights=(scores > true[rows]).astype(float), minlength=n)
        equal[start : start + n] = np.bincount(rows, weights=(scores == true[rows]).astype(float), minlength=n)
        drawn[start : start + n] = (ids >= 0).sum(axis=1)
    count = known.num_entities - known.counts(side, triples[:, anchor], triples[:, 1]) + 1
    return {"greater": greater, "equal": equal, "drawn": drawn.astype(np.int64), "num_candidates": count}


def sampled_counts(
    model,
    triples: np.ndarray,
    known: FilterIndex,
    positions: RelationPositions,
    settings: SampledCandidates,
    stream: tuple[str, str],
) -> pd.DataFrame:
    """The :data:`COUNT_COLUMNS` table of one split's queries.

    :param model: a PyKEEN model (its ``score_hrt`` scores the sampled triples)
    :param triples: shape: (n, 3) the split's id triples
    :param known: the known answers of train, valid and test (no sample holds one)
    :param positions: the training positions (the guided samplers' pools)
    :param stream: the dataset key and the split, naming the draws' streams
    """
    triples = np.asarray(triples, dtype=np.int64)
    frames = []
    for side in SIDE_COLUMNS:
        rng = np.random.default_rng(stream_seed(settings.seed, *stream, side))
        counts = _side_counts(model, triples, known, positions, settings, side, rng)
        frames.append(pd.DataFrame({
            "side": side, "triple": np.arange(len(triples)), "head": triples[:, 0], "relation": triples[:, 1],
            "tail": triples[:, 2], **counts,
        }))
    return pd.concat(frames, ignore_index=True)[list(COUNT_COLUMNS)]
