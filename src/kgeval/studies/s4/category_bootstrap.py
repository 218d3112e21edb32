"""Bootstrap replicates of S4's Table 3 and Table 4 taus (Zhou et al. 2022, Sec. 4.2) over components of linked
questions.

Both tables rank the systems by micro metrics on parts of the questions: Table 3 per question side and relation
category (:func:`kgeval.studies.s4.analysis.tau_by_category`), Table 4 on all questions of the pooled level with
the relation distribution of the sparse labels (:func:`kgeval.studies.s4.analysis.tau_reweighted`). The resampling
unit is the one of :mod:`kgeval.studies.s4.tau_bootstrap`: the connected component of the questions linked by a
shared answer triple, drawn with replacement, one draw serving the sparse and the pooled level. A resample's
per-group sums are one sparse matrix product (components x groups), so no rank is recomputed; resample counts of
all ones give the tables' own taus.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kgeval.studies.s4.labels import level_depth
from kgeval.studies.s4.metrics import micro_metric_names
from kgeval.studies.s4.stability import UnitValues, question_components, unit_values
from kgeval.studies.s4.tau_bootstrap import level_units, paired_tau_batch
from kgeval.uncertainty.resampling import percentile_interval, resample_counts

__all__ = ["GroupTaus", "category_taus", "reweighted_taus", "compute_group_taus"]


@dataclass(frozen=True)
class GroupTaus:
    """Taus of system rankings between the sparse and the pooled level, on all questions and in resamples.

    :ivar point: shape: (G, M), the tau of every group (a Table 3 cell, or a Table 4 distribution) and micro metric
    :ivar replicates: shape: (G, B, M), the same in each resample (NaN where a ranking is constant or empty)
    :ivar groups: the G group names (``(side, category)`` or the distribution)
    :ivar metrics: the M micro metric names
    :ivar unit: the resampling unit, for the ``interval`` column
    :ivar answers: shape: (G, 2), the answers of one system in each group at the sparse and at the pooled level
    """

    point: np.ndarray
    replicates: np.ndarray
    groups: list
    metrics: list[str]
    unit: str
    answers: np.ndarray

    def taus(self, level: float = 0.95) -> dict[tuple, tuple[float, float, float]]:
        """``(*group, metric)`` -> (tau, low, high), the percentile interval of the replicates (NaN where all are)."""
        out = {}
        for g, group in enumerate(self.groups):
            key = group if isinstance(group, tuple) else (group,)
            for m, metric in enumerate(self.metrics):
                low, high = percentile_interval(self.replicates[g, :, m], level)
                out[(*key, metric)] = (float(self.point[g, m]), low, high)
        return out


def _group_matrix(values: UnitValues, group: np.ndarray, num_groups: int, component: np.ndarray):
    """Sparse (C, G * (S*M + M)): per component and group, the numerators then the denominators of its questions."""
    from scipy.sparse import coo_matrix  # here, not at the top: most S4 jobs never need SciPy

    Q, S, M = values.numerators.shape
    width = S * M + M
    keep = group >= 0
    data = np.concatenate([values.numerators.reshape(Q, S * M), values.denominators], axis=1)[keep]
    rows = np.repeat(component[keep], width)
    columns = (group[keep][:, None] * width + np.arange(width)[None, :]).ravel()
    shape = (int(component.max()) + 1 if component.size else 0, num_groups * width)
    return coo_matrix((data.ravel(), (rows, columns)), shape=shape).tocsr()


def _sums(matrix, w: np.ndarray, num_groups: int, S: int, M: int) -> tuple[np.ndarray, np.ndarray]:
    """Per resample and group the numerators (b, G, S, M) and denominators (b, G, M)."""
    total = np.asarray((matrix.T @ w.T).T).reshape(len(w), num_groups, S * M + M)
    return total[:, :, : S * M].reshape(len(w), num_groups, S, M), total[:, :, S * M :]


def _draws(num_components: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """The full sample (counts of one), then the bootstrap resamples."""
    yield np.ones((1, num_components))
    yield from resample_counts(num_components, resamples, seed)


def _mean(numerators: np.ndarray, denominators: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return numerators / denominators[..., None, :]


def category_taus(
    sparse: UnitValues, pooled: UnitValues, group: np.ndarray, names: Sequence, component: np.ndarray,
    resamples: int, seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Table 3's taus per group of questions (``group``: shape (Q,), 0..G-1, -1 for none); (point, replicates)."""
    G, (Q, S, M) = len(names), sparse.numerators.shape
    matrices = [_group_matrix(v, group, G, component) for v in (sparse, pooled)]
    out = []
    for w in _draws(matrices[0].shape[0], resamples, seed):
        ref, other = (_mean(*_sums(m, w, G, S, M)) for m in matrices)
        taus = paired_tau_batch(ref.reshape(-1, S, M), other.reshape(-1, S, M)).reshape(len(w), G, M)
        out.append(taus.transpose(1, 0, 2))
    taus = np.concatenate(out, axis=1)
    return taus[:, 0], taus[:, 1:]


def reweighted_taus(
    sparse: UnitValues, pooled: UnitValues, relation: np.ndarray, num_relations: int, component: np.ndarray,
    resamples: int, seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Table 4's taus, rows ``complete`` and ``sparse`` (``relation``: shape (Q,), 0..R-1); (point, replicates).

    ``complete`` ranks by the pooled level's plain micro mean, ``sparse`` by Eq. 1 with each relation weighted by its
    share of the sparse level's answers (relations without a pooled answer weigh 0), both against the sparse level's
    plain micro mean.
    """
    Q, S, M = sparse.numerators.shape
    matrices = [_group_matrix(v, relation, num_relations, component) for v in (sparse, pooled)]
    out = []
    for w in _draws(matrices[0].shape[0], resamples, seed):
        (ref_n, ref_d), (lvl_n, lvl_d) = (_sums(m, w, num_relations, S, M) for m in matrices)
        ref, complete = _mean(ref_n.sum(1), ref_d.sum(1)), _mean(lvl_n.sum(1), lvl_d.sum(1))
        psi = np.where(lvl_d[:, :, 0] > 0, ref_d[:, :, 0], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            psi = psi / psi.sum(axis=1, keepdims=True)
        means = np.nan_to_num(_mean(lvl_n, lvl_d))
        reweighted = np.einsum("br,brsm->bsm", psi, means)
        out.append(np.stack([paired_tau_batch(ref, complete), paired_tau_batch(ref, reweighted)]))
    taus = np.concatenate(out, axis=1)
    return taus[:, 0], taus[:, 1:]


def compute_group_taus(
    answers: pd.DataFrame,
    questions: pd.DataFrame,
    categories: Mapping[str, str] | pd.Series,
    *,
    hits_at: Sequence[int],
    ir_cutoff: int,
    resamples: int,
    seed: int,
) -> tuple[GroupTaus, GroupTaus]:
    """Table 3's and Table 4's taus between the sparse and the deepest pooled level of one label set, with their
    replicates (``categories``: category per relation)."""
    depths = sorted(level_depth(level) for level in set(questions["level"]) if str(level).startswith("depth"))
    if not depths:
        raise ValueError("compute_group_taus: no pooled level in the questions table")
    levels = ["sparse", f"depth{depths[-1]}"]
    metrics = [("micro", m) for m in micro_metric_names(hits_at)]
    units = level_units({lv: unit_values(answers, questions, lv, hits_at, ir_cutoff) for lv in levels}, metrics)
    sparse, pooled = units["sparse"], units[levels[1]]
    keys = sparse.questions
    linking = answers.loc[answers["level"].isin(levels), ["side", "relation", "anchor", "head", "tail"]]
    component = question_components(linking.drop_duplicates(), keys)
    category = keys["relation"].map(pd.Series(categories)).to_numpy()
    cells = [(side, c) for side in ("head", "tail") for c in ("1-1", "1-N", "N-1", "N-N")]
    lookup = {cell: i for i, cell in enumerate(cells)}
    group = np.array([lookup.get((s, c), -1) for s, c in zip(keys["side"], category, strict=True)])
    names = [m for _, m in sparse.metrics]
    relation, relations = pd.factorize(keys["relation"])
    unit = (f"bootstrap over {int(component.max()) + 1:,} components of {len(keys):,} questions linked by shared "
            f"triples, {resamples:,} resamples")
    counts = np.stack([np.bincount(group[group >= 0], weights=v.denominators[group >= 0, 0], minlength=len(cells))
                       for v in (sparse, pooled)], axis=1)
    totals = np.array([[sparse.denominators[:, 0].sum(), pooled.denominators[:, 0].sum()]] * 2)
    table3 = category_taus(sparse, pooled, group, cells, component, resamples, seed)
    table4 = reweighted_taus(sparse, pooled, relation, len(relations), component, resamples, seed)
    return (GroupTaus(table3[0], table3[1], cells, names, unit, counts.astype(np.int64)),
            GroupTaus(table4[0], table4[1], ["complete", "sparse"], names, unit, totals.astype(np.int64)))
