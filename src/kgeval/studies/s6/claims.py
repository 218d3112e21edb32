"""S6's claims: the papers' statements on sampled evaluation, and kgeval's own on the adjusted indices.

Every statistic pools the runs (dataset, model, seed) and the *partial* sample sizes: the k of the grid below the
run's median number of filtered negatives (a k that draws every candidate of most queries is a full ranking, not a
sample). A pooled statistic is the mean over those rows, replicate by replicate (:mod:`~kgeval.studies.s6.tables`:
each replicate resamples test triples and picks a draw), so its interval covers test triples and draws.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from kgeval.claims import (
    Claim, Criterion, by_construction, combine, format_interval, format_value, interval_claim, judge, write_claims,
)
from kgeval.io import read_tsv
from kgeval.uncertainty.resampling import percentile_interval

__all__ = ["GUIDED", "pooled", "partial_sizes", "s6_claims", "write_s6_claims"]

#: the relation-guided samplers (Cornell et al.)
GUIDED: tuple[str, ...] = ("static", "probabilistic")

_UNIT = "percentile bootstrap over test triples and sample draws, pooled over runs and partial k"
_CORNELL = "Cornell et al. 2025"


def pooled(replicates: pd.DataFrame, value, level: float) -> tuple[float, float, float, int]:
    """The mean over the selected rows of ``value(frame)`` per replicate: (point, low, high, rows pooled), the point
    being the mean over replicates' means and the interval their percentile interval of coverage ``level`` (NaN when
    nothing is selected)."""
    if replicates.empty:
        return float("nan"), float("nan"), float("nan"), 0
    frame = replicates.assign(_v=value(replicates))
    per_replicate = frame.groupby("replicate")["_v"].mean().to_numpy()
    low, high = percentile_interval(per_replicate, level)
    groups = len(frame.groupby(["dataset", "model", "seed", "sampler", "k"]))
    return float(np.mean(per_replicate)), low, high, groups


def _partial(replicates: pd.DataFrame, partial_k: pd.DataFrame, **match) -> pd.DataFrame:
    sub = replicates.merge(partial_k, on=["dataset", "k"])
    for column, values in match.items():
        sub = sub[sub[column].isin(values if isinstance(values, (list, tuple)) else [values])]
    return sub


def _error(frame: pd.DataFrame) -> np.ndarray:
    return (frame["estimate"] - frame["full"]).to_numpy()


def _uniform_claim(reps, partial_k, level: float) -> Claim:
    sub = _partial(reps, partial_k, sampler="uniform", estimator="naive", metric="mrr")
    point, low, high, n = pooled(sub, _error, level)
    return interval_claim(
        "s6.uniform_overestimates_mrr",
        f"{_CORNELL}, abstract and Sec. 4: sampling candidates uniformly at random vastly overestimates the ranking "
        "performance (the sampled MRR exceeds the full filtered MRR)",
        "\"sampling uniformly at random vastly overestimates the ranking performance of a method\"",
        f"mean error of the uniform sampled MRR = {format_value(point)} over {n} run x k cells",
        judge(point, low, high, Criterion(lower=0.0, strict=True), "the mean error"),
        format_interval(low, high, _UNIT), "error > 0",
    )


def _guided_claim(reps, partial_k, tolerance: float, level: float) -> Claim:
    parts, texts, intervals = [], [], []
    for sampler in GUIDED:
        sub = _partial(reps, partial_k, sampler=sampler, estimator="naive", metric="mrr")
        point, low, high, n = pooled(sub, lambda f: np.abs(_error(f)), level)
        parts.append(judge(point, low, high, Criterion(upper=tolerance), f"the {sampler} MAE"))
        texts.append(f"{sampler} MAE {format_value(point)} ({n} cells)")
        intervals.append(f"{sampler} {format_interval(low, high)}")
    return interval_claim(
        "s6.guided_estimates_full_mrr",
        f"{_CORNELL}, abstract and Sec. 5: candidates drawn from each relation's domain and range (static and "
        "probabilistic strategies, simple recommender) estimate the full filtered MRR closely",
        "\"accurate estimations of the full, filtered ranking\"",
        "; ".join(texts), combine(parts), "; ".join(intervals) + f" ({_UNIT})",
        f"mean absolute error <= {tolerance:g} (studies.s6.guided_tolerance: kgeval's bound; the paper's own MAE "
        "table could not be read offline)",
    )


#: Kendall tau at or above which two orderings count as the same ranking (Voorhees' bar, as in S4)
SAME_ORDER_TAU = 0.9


def _ordering_claim(ordering: pd.DataFrame, partial_k) -> Claim:
    claim = "s6.guided_keeps_model_order"
    statement = (
        f"{_CORNELL}, Sec. 5 (Kendall tau): the ordering of models by the sampled MRR under guided sampling is the "
        "full ordering"
    )
    paper = "\"stable Kendall-Tau\" under guided sampling"
    sub = ordering.merge(partial_k, on=["dataset", "k"])
    sub = sub[(sub["estimator"] == "naive") & (sub["metric"] == "mrr")]
    if sub.empty:
        return Claim(claim, statement, paper, "no dataset with two models and a partial k", "", "not checkable",
                     "Kendall tau needs two or more models on a dataset")
    parts, texts, intervals = [], [], []
    for r in sub.sort_values(["dataset", "sampler", "k"]).itertuples():
        cell = f"{r.dataset} {r.sampler} k={r.k}"
        if r.sampler in GUIDED:
            parts.append(judge(r.tau, r.ci_low, r.ci_high, Criterion(lower=SAME_ORDER_TAU), f"tau at {cell}"))
        texts.append(f"{cell} tau {format_value(r.tau, 3)}")
        intervals.append(f"{cell} [{format_value(r.ci_low, 3)}, {format_value(r.ci_high, 3)}]")
    if not parts:
        return Claim(claim, statement, paper, "; ".join(texts), "", "not checkable", "no guided sampler configured")
    return interval_claim(
        claim, statement, paper, "; ".join(texts) + " (uniform as context)", combine(parts),
        "; ".join(intervals) + " (percentile bootstrap of tau-b over test triples and draws)",
        f"tau >= {SAME_ORDER_TAU} (Voorhees' bar for the same ranking; the paper gives no number) for every guided "
        "sampler, dataset and partial k",
    )


def _adjusted_claim(reps, partial_k, level: float) -> Claim:
    parts, texts, intervals = [], [], []
    for raw, adjusted in (("mrr", "amrr"), ("hits@10", "ah@10")):
        a = _partial(reps, partial_k, estimator="naive", metric=raw).sort_values(
            ["dataset", "model", "seed", "sampler", "k", "replicate"])
        b = _partial(reps, partial_k, estimator="adjusted", metric=adjusted).sort_values(
            ["dataset", "model", "seed", "sampler", "k", "replicate"])
        diff = a.assign(estimate=np.abs(_error(a)) - np.abs(_error(b)), full=0.0)
        point, low, high, n = pooled(diff, _error, level)
        parts.append(judge(point, low, high, Criterion(lower=0.0, strict=True), f"|err {raw}| - |err {adjusted}|"))
        texts.append(f"{raw} vs {adjusted}: {format_value(point)} ({n} cells)")
        intervals.append(f"{raw}/{adjusted} {format_interval(low, high)}")
    return interval_claim(
        "s6.x.adjusted_move_less_under_sampling",
        "kgeval: the adjusted indices (AMRR, AH@10), computed with the sample's own expectation, move less under "
        "sampling than their raw metrics (MRR, Hits@10): mean |error| difference over every sampler",
        "not in the papers (kgeval's test of Hoyt et al.'s comparability across candidate-set sizes)",
        "; ".join(texts), combine(parts), "; ".join(intervals) + f" ({_UNIT})",
        "|error raw| - |error adjusted| > 0",
    )


#: the largest relative error of the uniform scaled MR that kgeval's check of its unbiasedness accepts
UNBIASED_TOLERANCE = 0.01
#: the basis of the unbiasedness claim
SCALED_UNBIASED = by_construction(
    "under uniform sampling without replacement the better count b of a query of full rank r among N is "
    "hypergeometric with mean d (r - 1) / (N - 1), so E[1 + (N - 1) b / d] = r whatever the model; the row checks the "
    "implementation and the sampled mode's unbiased flag (kgeval.lp.sampled.estimates)"
)


def _unbiased_claim(reps, partial_k, level: float) -> Claim:
    sub = _partial(reps, partial_k, sampler="uniform", estimator="scaled", metric="mr")
    point, low, high, n = pooled(sub, lambda f: (_error(f) / f["full"].to_numpy()), level)
    judgement = judge(point, low, high, Criterion(-UNBIASED_TOLERANCE, UNBIASED_TOLERANCE), "relative error")
    return interval_claim(
        "s6.x.uniform_scaled_mr_unbiased",
        "kgeval: under uniform sampling the scaled rank 1 + (N - 1) b / d is unbiased for the full rank, so the "
        "scaled MR (and AMRI, linear in it) estimate the full ones without bias, while MRR and Hits@k have no such "
        "estimator",
        "not in the papers (Krichene and Rendle correct MRR and Hits@k; the mean rank needs no correction)",
        f"mean relative error of the uniform scaled MR = {format_value(point)} over {n} run x k cells",
        judgement, f"{format_interval(low, high)} ({_UNIT})",
        f"|relative error| <= {UNBIASED_TOLERANCE} (kgeval's tolerance)", basis=SCALED_UNBIASED,
    )


def partial_sizes(full_counts: pd.DataFrame, ks) -> pd.DataFrame:
    """Per dataset and k: the median number of filtered negatives ``N - 1`` and whether k is below it (``partial``)."""
    median = full_counts.groupby("dataset")["num_candidates"].median() - 1
    rows = [(d, int(k), float(m), bool(k < m)) for d, m in median.items() for k in ks]
    return pd.DataFrame(rows, columns=["dataset", "k", "median_negatives", "partial"])


def s6_claims(
    replicates: pd.DataFrame, ordering: pd.DataFrame, partial_k: pd.DataFrame, tolerance: float, level: float
) -> list[Claim]:
    """The claims rows (module docstring); ``level``: the intervals' coverage (``uncertainty.level``)."""
    return [
        _uniform_claim(replicates, partial_k, level),
        _guided_claim(replicates, partial_k, tolerance, level),
        _ordering_claim(ordering, partial_k),
        _adjusted_claim(replicates, partial_k, level),
        _unbiased_claim(replicates, partial_k, level),
    ]


def write_s6_claims(
    replicates_path, ordering_path, sizes_path, tolerance: float, level: float, out: str | os.PathLike
) -> pd.DataFrame:
    """Read the replicates, ordering and candidate-size tables and write ``claims/s6.tsv``."""
    replicates = pd.read_parquet(replicates_path)
    sizes = read_tsv(sizes_path)
    partial_k = sizes.loc[sizes["partial"].astype(str).isin(["True", "true", "1"]), ["dataset", "k"]].drop_duplicates()
    return write_claims(s6_claims(replicates, read_tsv(ordering_path), partial_k, tolerance, level), out)
