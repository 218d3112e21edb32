"""S5's claims on Platt scaling against isotonic regression out of sample (paper 004, Sec. 6.1, Appendix B).

- ``s5.isotonic_beats_platt_out_of_sample`` (basis measured): isotonic's test ``R2_w`` (LCWA, the best function of
  each method by validation ``R2_w``) is above that of the best Platt function of every procedure, in every run.
  Each run's difference ``R2_w(iso) - R2_w(platt)`` has a paired percentile-bootstrap interval over the test
  triples of the *positives' share*, the negatives' sums held fixed at their totals (read from ``assessment.tsv``,
  not from the per-triple sums of :mod:`kgeval.studies.s5.triple_sums`); the interval is therefore conditional on
  the negatives and narrower than a bootstrap of the triples with their negatives would be. The held-out validation share (``holdout_r2_w`` of
  ``calibrators.tsv``) is reported beside it, by point value.
- ``s5.platt_initialisations_differ@<procedure>`` (Sec. 6.1, Fig. 3: "six additional functions ... where we varied
  parameter initialization"): the six initialisations give different functions: the spread (max - min) of ``a`` or
  of ``b`` across the six fits exceeds :data:`SPREAD_TOLERANCE` times ``max(1, |median|)`` in every run. The fits
  are deterministic (seeded): no interval, decided exactly. Under the converged procedure the verdict is
  ``by construction`` (each fit reaches the optimum of the convex logistic loss, so the six coincide whatever the
  scores); the reason keeps what the spread gave.
- ``s5.appendix_b_platt_not_well_calibrated@<procedure>`` (Appendix B): "Platt scaling is generally not well
  calibrated": the best Platt function's test ``R2_w`` is below isotonic's in every run (the intervals above), and
  the mean test ``R2_w`` over the six Platt functions of the procedure is negative for HolE and TransE (point values
  of ``assessment.tsv``, no interval: at most ``inconclusive`` for that part; not checkable without HolE or TransE
  runs).

``R2_w`` is Eq. 8 with ``y_bar`` the Eq. 11-weighted mean of the posteriors; the reasons name how far the two other
readings (``r2_w_unweighted_mean``, ``r2_w_positive_mean`` of :mod:`kgeval.studies.s5.measures`) move it on test.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from kgeval.claims import (
    EXACT,
    INCONCLUSIVE,
    MEASURED,
    NOT_CHECKABLE,
    Claim,
    by_construction,
    Criterion,
    Judgement,
    combine,
    format_interval,
    interval_claim,
    judge,
    ordinal_claim,
)
from kgeval.studies.s5.spread import table_platt_spread
from kgeval.uncertainty.resampling import percentile_interval, resample_counts, stream_seed

__all__ = ["SPREAD_TOLERANCE", "r2_difference_intervals", "platt_claims"]

#: the relative spread of (a, b) across the six initialisations above which they give different functions
SPREAD_TOLERANCE = 1e-3
#: Appendix B's methods with a negative mean Platt R2_w
_NEGATIVE_METHODS = ("HolE", "TransE")
_RUN = ["dataset", "model", "seed"]


def _bool(series: pd.Series) -> pd.Series:
    return series.astype(str).str.lower().isin(["true", "1", "1.0"])


def _best_lcwa(assessment: pd.DataFrame) -> pd.DataFrame:
    """One row per run and best function (isotonic; Platt per procedure): the LCWA test metrics as columns."""
    a = assessment[_bool(assessment["best_of_method"]) & (assessment["strategy"] == "lcwa")]
    index = [*_RUN, "method", "procedure"]
    return a.pivot_table(index=index, columns="metric", values="value", aggfunc="first").reset_index()


def _r2_replicates(p: np.ndarray, row: pd.Series, counts: np.ndarray) -> np.ndarray:
    """R2_w (Eq. 8, weighted y_bar) on resampled positives, the negatives' per-class sums held at their totals."""
    pos_sq = float(np.mean((1.0 - p) ** 2))
    neg_sq = 2.0 * float(row["bs_w"]) - pos_sq  # the negatives' mean p^2
    neg_mean = 2.0 * float(row["y_bar"]) - float(row["mean_posterior"])
    m_pos = counts @ p / counts.sum(axis=1)
    q_pos = counts @ (1.0 - p) ** 2 / counts.sum(axis=1)
    bs = (q_pos + neg_sq) / 2.0
    y_bar = (m_pos + neg_mean) / 2.0
    return 1.0 - 2.0 * bs / ((1.0 - y_bar) ** 2 + y_bar**2)


def r2_difference_intervals(
    assessment: pd.DataFrame,
    positives: Mapping[tuple[str, str, str], pd.DataFrame],
    resamples: int,
    seed: int,
    level: float,
) -> pd.DataFrame:
    """Per run and Platt procedure: ``R2_w(iso) - R2_w(platt)`` on test (LCWA, best functions) and its paired
    bootstrap interval over the test positives (module docstring); NaN bounds where the posteriors are missing.

    :return: columns ``dataset, model, seed, procedure, difference, low, high``
    """
    best = _best_lcwa(assessment)
    rows = []
    for key, run in best.groupby(_RUN, sort=True):
        key = tuple(str(k) for k in key)
        iso = run[run["method"] == "isotonic"]
        for platt in run[run["method"] == "platt"].itertuples(index=False):
            procedure = str(platt.procedure)
            row_p = pd.Series(platt._asdict())
            difference = float(iso["r2_w"].iloc[0]) - float(row_p["r2_w"]) if len(iso) else float("nan")
            low = high = float("nan")
            frame = positives.get(key)
            column = f"posterior_platt_{procedure}"
            if len(iso) and frame is not None and column in frame and "posterior_isotonic" in frame:
                reps = []
                for counts in resample_counts(len(frame), resamples, stream_seed(seed, *key, procedure, "r2")):
                    counts = np.asarray(counts, dtype=np.float64)
                    r_iso = _r2_replicates(frame["posterior_isotonic"].to_numpy(float), iso.iloc[0], counts)
                    r_platt = _r2_replicates(frame[column].to_numpy(float), row_p, counts)
                    reps.append(r_iso - r_platt)
                low, high = percentile_interval(np.concatenate(reps), level)
            rows.append((*key, procedure, difference, low, high))
    return pd.DataFrame(rows, columns=[*_RUN, "procedure", "difference", "low", "high"])


def _names(frame: pd.DataFrame) -> list[str]:
    return ["/".join(map(str, k)) for k in frame[_RUN].itertuples(index=False)]


def _readings_text(assessment: pd.DataFrame) -> str:
    """How far the other readings of Eq. 8's y_bar move the best functions' test R2_w (LCWA)."""
    best = _best_lcwa(assessment)
    if "r2_w_unweighted_mean" not in best:
        return ""
    parts = []
    for column, label in (("r2_w_unweighted_mean", "unweighted mean"), ("r2_w_positive_mean", "Eq. 10 mean")):
        shift = (best[column] - best["r2_w"]).to_numpy(float)
        if len(shift):
            parts.append(f"{label} of the posteriors moves it by {np.nanmin(shift):+.4f} to {np.nanmax(shift):+.4f}")
    return "R2_w with y_bar the Eq. 11-weighted mean of the posteriors; " + ", ".join(parts)


def _holdout_text(calibrators: pd.DataFrame) -> str:
    """Isotonic vs the best Platt function (validation R2_w) on the held-out validation share, by point value."""
    if "holdout_r2_w" not in calibrators or calibrators["holdout_r2_w"].isna().all():
        return "no held-out validation share (holdout_fraction 0)"
    wins = total = 0
    for _, run in calibrators.groupby(_RUN):
        iso = run[run["method"] == "isotonic"]
        platt = run[run["method"] == "platt"]
        if len(iso) and len(platt):
            best = platt.loc[platt["r2_w"].astype(float).idxmax()]
            total += 1
            wins += int(float(iso["holdout_r2_w"].iloc[0]) > float(best["holdout_r2_w"]))
    return f"held-out validation share: isotonic above the best Platt in {wins} of {total} runs (point values)"


def _out_of_sample_claim(intervals: pd.DataFrame, calibrators: pd.DataFrame, readings: str, level: float) -> Claim:
    claim = "s5.isotonic_beats_platt_out_of_sample"
    statement = "Sec. 6.1 takeaways, out of sample: isotonic's test R2_w (LCWA, best of each method) exceeds Platt's"
    tolerance = "R2_w(iso) - R2_w(platt) > 0 in every run and procedure"
    if not len(intervals):
        return Claim(claim, statement, "isotonic better in every run", "", tolerance, NOT_CHECKABLE, "no run")
    names = [f"{n} ({p})" for n, p in zip(_names(intervals), intervals["procedure"])]
    judgements = [
        judge(d, lo, hi, Criterion(lower=0.0, strict=True), name=f"difference of {n}")
        for n, d, lo, hi in zip(names, intervals["difference"], intervals["low"], intervals["high"])
    ]
    d = intervals["difference"].to_numpy(float)
    return interval_claim(
        claim,
        statement,
        "isotonic better in every run (validation; Appendix B: Platt's test R2_w lower)",
        f"difference {np.nanmin(d):+.4f} to {np.nanmax(d):+.4f}; > 0 in {int(np.sum(d > 0))} of {len(d)}; "
        + _holdout_text(calibrators),
        combine(judgements),
        interval="; ".join(f"{n} {format_interval(lo, hi)}" for n, lo, hi in zip(names, intervals["low"], intervals["high"]))
        + f" ({100 * level:g} % paired percentile bootstrap over test positives, negatives' sums held fixed)",
        tolerance=tolerance,
        reason=readings,
    )


def _spread_claim(calibrators: pd.DataFrame, procedure: str) -> Claim:
    claim = f"s5.platt_initialisations_differ@{procedure}"
    statement = f"Sec. 6.1, Fig. 3: the six Platt initialisations give different functions ({procedure} procedure)"
    tolerance = f"max - min of a or b > {SPREAD_TOLERANCE:g} max(1, |median|) in every run"
    spread = table_platt_spread(calibrators)
    spread = spread[spread["procedure"] == procedure]
    if not len(spread):
        return Claim(claim, statement, "six functions spread (Fig. 3)", "", tolerance, NOT_CHECKABLE,
                     f"the {procedure} procedure was not run (studies.s5.platt.procedure)")
    spreads = spread["relative_spread"].to_numpy(dtype=float)
    differ = int(np.sum(spreads > SPREAD_TOLERANCE))
    holds = differ == len(spreads)
    if procedure == "converged":
        # each fit runs to the optimum of the logistic loss, convex in (a, b): the six meet whatever the scores
        basis = by_construction("the logistic loss is convex in (a, b), so every initialisation reaches its optimum")
        why = "each fit reaches the optimum of a convex loss, so the six coincide"
    else:
        basis = MEASURED
        why = ("the epoch budget (studies.s5.platt.epochs, learning_rate, batch_size) stops the descent before the "
               "six meet; a larger budget brings them together")
    return ordinal_claim(
        claim, statement, "six functions spread (Fig. 3)",
        f"relative spread of (a, b) from {spreads.min():.3g} to {spreads.max():.3g}; above tolerance in {differ} of "
        f"{len(spreads)} runs; distinct functions per run {int(spread['num_distinct'].min())} to "
        f"{int(spread['num_distinct'].max())} of 6",
        holds, why if holds else f"{why}; the spread is below tolerance in {len(spreads) - differ} runs",
        tolerance, interval=EXACT, basis=basis,
    )


def _appendix_b_claim(intervals: pd.DataFrame, assessment: pd.DataFrame, procedure: str, readings: str) -> Claim:
    claim = f"s5.appendix_b_platt_not_well_calibrated@{procedure}"
    statement = f"Appendix B: Platt scaling is not well calibrated: lower test R2_w than isotonic; negative mean R2_w for HolE and TransE ({procedure})"
    paper = "R2_w lower than isotonic's; mean R2_w < 0 for HolE and TransE"
    tolerance = "difference > 0 in every run; mean Platt R2_w < 0 for HolE and TransE"
    mine = intervals[intervals["procedure"] == procedure]
    a = assessment[(assessment["method"] == "platt") & (assessment.get("procedure", "") == procedure)]
    a = a[(a["strategy"] == "lcwa") & (a["metric"] == "r2_w")]
    if not len(mine) or not len(a):
        return Claim(claim, statement, paper, "", tolerance, NOT_CHECKABLE, f"no {procedure} Platt functions assessed")
    lower = combine([judge(d, lo, hi, Criterion(lower=0.0, strict=True), name=f"difference of {n}")
                     for n, d, lo, hi in zip(_names(mine), mine["difference"], mine["low"], mine["high"])])
    means = a.groupby("model_class")["value"].mean() if "model_class" in a else pd.Series(dtype=float)
    present = [m for m in _NEGATIVE_METHODS if m in means.index]
    if not present:
        negative = Judgement(NOT_CHECKABLE, "no HolE or TransE runs")
    elif all(means[m] < 0 for m in present):
        negative = Judgement(INCONCLUSIVE, "mean Platt R2_w below 0 for " + ", ".join(present) + " by point value "
                             "(no interval)")
    else:
        negative = Judgement(INCONCLUSIVE, "no interval; the point values lie on the differs side (mean Platt R2_w "
                             "not below 0 for " + ", ".join(m for m in present if means[m] >= 0) + ")")
    text = "; ".join(f"{m} mean {means[m]:+.4f}" for m in present) or "HolE and TransE not studied"
    return interval_claim(claim, statement, paper, f"mean Platt R2_w (six functions, LCWA, test): {text}",
                          combine([lower, negative]),
                          interval="paired percentile bootstrap of each run's difference over test positives "
                          "(negatives held fixed); the per-method means are not resampled (point values)",
                          tolerance=tolerance, reason=readings)


def platt_claims(
    calibrators: pd.DataFrame, assessment: pd.DataFrame, intervals: pd.DataFrame, level: float
) -> list[Claim]:
    """The claims of the module docstring from the collated tables and :func:`r2_difference_intervals`."""
    readings = _readings_text(assessment) if "best_of_method" in assessment else ""
    claims = [_out_of_sample_claim(intervals, calibrators, readings, level)]
    for procedure in ("converged", "paper"):
        claims.append(_spread_claim(calibrators, procedure))
        claims.append(_appendix_b_claim(intervals, assessment, procedure, readings))
    return claims
