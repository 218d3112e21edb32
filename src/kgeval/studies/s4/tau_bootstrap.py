"""Bootstrap intervals of S4's tau-by-depth statistics (Sec. 4.2, Figs. 3-5) over components of linked questions.

A *question* ``(side, relation, anchor)`` is an IR topic: its answers share the anchor and the systems' ranking of
it, so they are not independent draws. Nor are all questions: a test triple ``(h, r, t)`` answers both its tail
question ``(tail, r, h)`` and its head question ``(head, r, t)``, and questions that share answer triples, directly
or through a chain (e.g. every ``(tail, r, x)`` whose answer is one popular entity ``y`` and the head question
``(head, r, y)``), share the triples the labels were drawn from. The independent unit is therefore the connected
component of the questions linked by a shared answer triple (:func:`kgeval.studies.s4.stability.question_components`;
docs/reproducing.md, "Intervals and verdicts"). A resample draws the components with replacement
(:func:`kgeval.uncertainty.resampling.resample_counts`; one draw serves every level, so a level's values and the
sparse reference move together) and recomputes every level's system values from per-question sums
(:func:`kgeval.studies.s4.stability.unit_values`), summed per component: micro metrics as the sum of the kept
questions' per-answer sums over the sum of their answer counts, macro metrics as the mean of the kept questions'
values. Kendall's tau between the resampled sparse ranking and the resampled ranking at each depth follows
(:func:`paired_tau_batch`, SciPy's tau-b), so no rank is recomputed.

A question missing from a level (no answer there) weighs nothing at that level.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kgeval.studies.s4.labels import level_depth
from kgeval.studies.s4.stability import UnitValues, component_sums, question_components, unit_values
from kgeval.uncertainty.resampling import percentile_interval, resample_counts

__all__ = ["paired_tau_batch", "level_units", "TauReplicates", "tau_replicates", "compute_tau_replicates"]

_KEY = ["side", "relation", "anchor"]


def paired_tau_batch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between ``x[b, :, m]`` and ``y[b, :, m]`` for every b and m (both rankings vary).

    :param x: shape: (B, S, M)
    :param y: shape: (B, S, M)
    :return: shape: (B, M), NaN where a ranking is constant or holds a NaN
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired_tau_batch: shapes differ, {x.shape} vs {y.shape}")
    first, second = np.triu_indices(x.shape[1], k=1)
    dx = np.sign(x[:, first, :] - x[:, second, :])
    dy = np.sign(y[:, first, :] - y[:, second, :])
    numerator = (dx * dy).sum(axis=1)
    denominator = np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan)


def level_units(per_level: Mapping[str, UnitValues], metrics: Sequence[tuple[str, str]]) -> dict[str, UnitValues]:
    """Align the levels' per-question values on the union of their questions and keep ``metrics``.

    :param per_level: level name -> :func:`kgeval.studies.s4.stability.unit_values` of that level (same systems)
    :param metrics: the ``(family, metric)`` pairs to keep (those absent at every level are dropped)
    :return: level -> values over the union's questions (sorted), a missing question with numerator and
        denominator 0
    :raises ValueError: when the levels rank different systems
    """
    levels = list(per_level)
    systems = per_level[levels[0]].systems
    for level in levels:
        if per_level[level].systems != systems:
            raise ValueError(f"level {level!r} ranks other systems than {levels[0]!r}")
    union = pd.concat([per_level[level].questions for level in levels], ignore_index=True)
    union = union.drop_duplicates().sort_values(_KEY).reset_index(drop=True)
    index = pd.MultiIndex.from_frame(union)
    keep = [m for m in metrics if all(m in per_level[level].metrics for level in levels)]
    out = {}
    for level in levels:
        values = per_level[level]
        rows = index.get_indexer(pd.MultiIndex.from_frame(values.questions))
        columns = [values.metrics.index(m) for m in keep]
        numerators = np.zeros((len(union), len(systems), len(keep)))
        denominators = np.zeros((len(union), len(keep)))
        numerators[rows] = values.numerators[:, :, columns]
        denominators[rows] = values.denominators[:, columns]
        out[level] = UnitValues(numerators, denominators, list(systems), list(keep), union)
    return out


@dataclass(frozen=True)
class TauReplicates:
    """Bootstrap replicates of tau (sparse against each pooled depth) per metric.

    :ivar taus: shape: (D, B, M), tau at each depth (rows of ``depths``) in each resample
    :ivar depths: the D pooling depths, increasing
    :ivar metrics: the M ``(family, metric)`` pairs
    :ivar num_questions: the questions (the union over the levels)
    :ivar num_components: the components of linked questions resampled
    """

    taus: np.ndarray
    depths: list[int]
    metrics: list[tuple[str, str]]
    num_questions: int
    num_components: int

    @property
    def resamples(self) -> int:
        """The number of resamples B."""
        return int(self.taus.shape[1])

    def at(self, family: str, metric: str, depth: int) -> np.ndarray:
        """The replicates of tau of one metric at one depth, shape: (B,)."""
        return self.taus[self.depths.index(depth), :, self.metrics.index((family, metric))]

    def has(self, family: str, metric: str) -> bool:
        """Whether the metric was resampled."""
        return (family, metric) in self.metrics

    def interval(self, replicates: np.ndarray, level: float = 0.95) -> tuple[float, float, int]:
        """The percentile interval of derived replicates and the number of resamples where they are undefined."""
        low, high = percentile_interval(replicates, level)
        return low, high, int(np.isnan(replicates).sum())

    def unit(self) -> str:
        """The resampling unit, for the ``interval`` column."""
        return (
            f"bootstrap over {self.num_components:,} components of {self.num_questions:,} questions linked by shared "
            f"triples, {self.resamples:,} resamples"
        )


def tau_replicates(
    units: Mapping[str, UnitValues],
    resamples: int,
    seed: int,
    reference: str = "sparse",
    components: np.ndarray | None = None,
) -> TauReplicates:
    """Replicates of tau between the ``reference`` ranking and every ``depth<d>`` level's, components resampled.

    :param units: level -> values aligned on the same questions (:func:`level_units`), with ``reference``
    :param resamples: bootstrap resamples B
    :param seed: the stream's seed (:func:`kgeval.uncertainty.resampling.stream_seed`)
    :param components: shape: (Q,), the component 0..C-1 of every question
        (:func:`kgeval.studies.s4.stability.question_components`); None: every question is its own component
    """
    if reference not in units:
        raise ValueError(f"tau_replicates: no {reference!r} level among {sorted(units)}")
    depths = sorted(level_depth(level) for level in units if level.startswith("depth"))
    ref = units[reference]
    Q, S, M = ref.numerators.shape
    component = np.arange(Q) if components is None else np.asarray(components, dtype=np.int64)
    if component.shape != (Q,) or (Q and not np.bincount(component).all()):
        raise ValueError(f"tau_replicates: components must number the {Q} questions 0..C-1, got {component.shape}")
    sums = {
        level: (component_sums(v.numerators.reshape(Q, S * M), component), component_sums(v.denominators, component))
        for level, v in units.items()
    }
    C = len(sums[reference][0])
    out = np.full((len(depths), resamples, M), np.nan)

    def values(level: str, w: np.ndarray) -> np.ndarray:
        numerators, denominators = sums[level]
        with np.errstate(invalid="ignore", divide="ignore"):
            return (w @ numerators).reshape(len(w), S, M) / (w @ denominators)[:, None, :]

    done = 0
    for w in resample_counts(C, resamples, seed):
        x = values(reference, w)
        for d, depth in enumerate(depths):
            out[d, done : done + len(w)] = paired_tau_batch(x, values(f"depth{depth}", w))
        done += len(w)
    return TauReplicates(taus=out, depths=depths, metrics=list(ref.metrics), num_questions=Q, num_components=C)


def compute_tau_replicates(
    answers: pd.DataFrame,
    questions: pd.DataFrame,
    *,
    metrics: Sequence[tuple[str, str]],
    hits_at: Sequence[int],
    ir_cutoff: int,
    resamples: int,
    seed: int,
) -> TauReplicates:
    """:func:`tau_replicates` from the answers and questions tables of one label set (sparse and every pooled level:
    the claims judge the gap at every depth), the components linked by the answer triples of those levels."""
    depths = sorted(level_depth(level) for level in set(questions["level"]) if str(level).startswith("depth"))
    if not depths:
        raise ValueError("compute_tau_replicates: no pooled level in the questions table")
    levels = ["sparse"] + [f"depth{d}" for d in depths]
    per_level = {level: unit_values(answers, questions, level, hits_at, ir_cutoff) for level in levels}
    units = level_units(per_level, metrics)
    linking = answers.loc[answers["level"].isin(levels), ["side", "relation", "anchor", "head", "tail"]]
    components = question_components(linking.drop_duplicates(), units["sparse"].questions)
    return tau_replicates(units, resamples, seed, components=components)
