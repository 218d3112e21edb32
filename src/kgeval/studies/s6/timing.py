"""Time of full against sampled evaluation of the same test queries on the same host.

Full evaluation is kgeval's ranking engine (:func:`kgeval.lp.ranking.rank_lp`, filtered by train, valid and test).
Sampled evaluation is what a sampled protocol costs, timed through the code of the sampled mode
(:func:`kgeval.lp.sampled.counts.sampled_counts`): drawing each query's ``k`` candidates (the largest ``k`` of the
grid), scoring only those ``(query, candidate)`` triples with the model's ``score_hrt``, and counting. Both run on
the first ``timing_triples`` test triples (both their queries) after one untimed warm-up of each.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from kgeval.lp.filtering import FilterIndex
from kgeval.lp.sampled.counts import SampledCandidates, sampled_counts
from kgeval.lp.sampled.samplers import RelationPositions
from kgeval.studies.s6.evaluation import S6Settings

__all__ = ["TIMING_COLUMNS", "time_sampled", "time_run"]

#: the columns of a timing table
TIMING_COLUMNS: tuple[str, ...] = ("dataset", "model", "seed", "method", "k", "queries", "seconds", "seconds_per_query")


def time_sampled(model, test, known: FilterIndex, positions: RelationPositions, sampler: str, settings: S6Settings) -> float:
    """Seconds to draw, score and count a sample of the largest ``k`` for every query of ``test``."""
    candidates = SampledCandidates(sampler, max(settings.ks), settings.seed)
    start = time.perf_counter()
    sampled_counts(model, np.asarray(test), known, positions, candidates, ("timing", sampler))
    return time.perf_counter() - start


def _time_full(scorer, test: np.ndarray, known: FilterIndex, settings: S6Settings) -> float:
    import torch

    from kgeval.lp.ranking import rank_lp

    start = time.perf_counter()
    rank_lp(scorer, torch.as_tensor(test), filter_triples=known, memory_budget_mb=settings.memory_budget_mb)
    return time.perf_counter() - start


def time_run(model, scorer, test, known, positions, settings: S6Settings, names: tuple[str, str, int]) -> pd.DataFrame:
    """One model's timing rows (:data:`TIMING_COLUMNS`): ``full`` and each sampler at the largest ``k``.

    :param names: the dataset, the model and the seed
    """
    subset = np.asarray(test)[: settings.timing_triples]
    queries = 2 * len(subset)
    _time_full(scorer, subset[:1], known, settings)
    rows = [("full", 0, _time_full(scorer, subset, known, settings))]
    for sampler in settings.samplers:
        time_sampled(model, subset[:1], known, positions, sampler, settings)
        rows.append((sampler, max(settings.ks), time_sampled(model, subset, known, positions, sampler, settings)))
    dataset, model_key, seed = names
    return pd.DataFrame(
        [(dataset, model_key, seed, method, k, queries, seconds, seconds / queries) for method, k, seconds in rows],
        columns=list(TIMING_COLUMNS),
    )
