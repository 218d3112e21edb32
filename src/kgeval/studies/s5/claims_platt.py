"""S5's claims on Platt scaling against isotonic regression out of sample (paper 004, Sec. 6.1, Appendix B).

The paper procedure (``studies.s5.platt.procedure``) runs a gradient descent whose learning rate, batch size and
epochs the paper does not give; where its outcome is what that budget leaves, the row says so: basis
``by construction: decided by the budget: <learning_rate, batch_size, epochs>``, hence the ``by construction``
verdict, with what was computed in the reason. For a comparison of posteriors (out of sample, Appendix B) that is
the case when a paper fit stops short of the optimum (its ``converged`` flag, gradient norm below ``1e-6``, false);
the converged procedure's rows are measured.

- ``s5.isotonic_beats_platt_out_of_sample`` (basis measured; converged procedure): isotonic's test ``R2_w`` (LCWA,
  the best function of each method by validation ``R2_w``) is above that of the best converged Platt function, in
  every run. Each run's difference ``R2_w(iso) - R2_w(platt)`` has a paired percentile-bootstrap interval over the
  test triples, a triple's head and tail negatives with it (the per-triple sums of
  :mod:`kgeval.studies.s5.triple_sums`, every function of a run on the same resamples: :func:`platt_replicates`).
  The held-out validation share (``holdout_r2_w`` of ``calibrators.tsv``; its negatives disjoint from the
  fit's) is reported beside it, by point value. ``s5.isotonic_beats_platt_out_of_sample@paper``: the same for the
  best paper Platt function, its own row and basis.
- ``s5.platt_initialisations_differ@<procedure>`` (Sec. 6.1, Fig. 3: "six additional functions ... where we varied
  parameter initialization"): the six initialisations give different functions: the spread (max - min) of ``a`` or
  of ``b`` across the six fits exceeds :data:`SPREAD_TOLERANCE` times ``max(1, |median|)`` in every run. The fits
  are deterministic (seeded): no interval, decided exactly. The paper implies that the six differ (it varies the
  initialisation and summarises the functions) but never states it. Both verdicts are ``by construction``: the
  converged procedure's fits reach the optimum of the convex logistic loss, so the six coincide whatever the
  scores; the paper procedure's spread is decided by its budget, and the reason gives it after 1, 10 and 100 times
  the epochs (:func:`kgeval.studies.s5.fitting.budget_columns`).
- Appendix B, "Platt scaling is generally not well calibrated", in two parts per procedure:
  ``s5.appendix_b_platt_below_isotonic@<procedure>``: the best Platt function's test ``R2_w`` is below isotonic's
  in every run (the intervals above); ``s5.appendix_b_platt_negative_mean_r2w@<procedure>``: the mean test ``R2_w``
  over the six Platt functions is negative for HolE and TransE: per method, the mean over its runs and functions,
  with the percentile interval of that mean over the runs' resamples (:func:`platt_mean_intervals`; without
  per-triple sums no interval, at most ``inconclusive``; not checkable without HolE or TransE runs).

``R2_w`` is Eq. 8 with ``y_bar`` the Eq. 11-weighted mean of the posteriors; the reasons name how far the two other
readings (``r2_w_unweighted_mean``, ``r2_w_positive_mean`` of :mod:`kgeval.studies.s5.measures`) move it on test.
"""

from __future__ import annotations

import os
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
from kgeval.studies.s5.claims_levels import Run
from kgeval.studies.s5.spread import LONGER_BUDGETS, table_platt_spread
from kgeval.studies.s5.triple_sums import NEGATIVE_SUMS, calibrator_replicates, column
from kgeval.uncertainty.resampling import percentile_interval, stream_seed

__all__ = ["SPREAD_TOLERANCE", "platt_replicates", "r2_difference_intervals", "platt_mean_intervals", "platt_claims"]

#: the relative spread of (a, b) across the six initialisations above which they give different functions
SPREAD_TOLERANCE = 1e-3
#: Appendix B's methods with a negative mean Platt R2_w
_NEGATIVE_METHODS = ("HolE", "TransE")
_RUN = ["dataset", "model", "seed"]
#: the ``paper`` column of the spread claims: what the paper says of the six functions
_SIX_FUNCTIONS = (
    'implied, not stated: Sec. 6.1 learns "six additional functions using Platt scaling, where we varied parameter '
    'initialization"; Fig. 3 gives their "five-number summary ... aggregated and grouped by link prediction method" '
    "(over datasets and functions together); no sentence says that the six differ"
)
#: the paper procedure's budget, as the columns of ``calibrators.tsv`` name it
_BUDGET = ("learning_rate", "batch_size", "epochs")


def _bool(series: pd.Series) -> pd.Series:
    return series.astype(str).str.lower().isin(["true", "1", "1.0"])


def _best_lcwa(assessment: pd.DataFrame) -> pd.DataFrame:
    """One row per run and best function (isotonic; Platt per procedure): the LCWA test metrics as columns."""
    a = assessment[_bool(assessment["best_of_method"]) & (assessment["strategy"] == "lcwa")]
    index = [*_RUN, "method", "procedure"]
    return a.pivot_table(index=index, columns="metric", values="value", aggfunc="first").reset_index()


def _lcwa_r2(assessment: pd.DataFrame) -> pd.DataFrame:
    """The isotonic and Platt functions' test R2_w on LCWA, one row per run and calibrator."""
    a = assessment[(assessment["strategy"] == "lcwa") & (assessment["metric"] == "r2_w")]
    return a[a["method"].isin(["isotonic", "platt"])]


def platt_replicates(
    assessment: pd.DataFrame,
    triple_sums: Mapping[Run, str | os.PathLike | pd.DataFrame],
    resamples: int,
    seed: int,
) -> dict[Run, dict[str, np.ndarray]]:
    """Per run, the test ``R2_w`` (LCWA) of isotonic and of every Platt function on the same bootstrap resamples of
    the test triples, a triple's negatives with it (:func:`~kgeval.studies.s5.triple_sums.calibrator_replicates`,
    stream ``stream_seed(seed, dataset, model, seed, "s5")``, the runs' stream of
    :func:`~kgeval.studies.s5.triple_sums.run_stream_seed`). A run without per-triple sums is left out.

    :param triple_sums: run -> its ``triple_sums.parquet`` (path, read for the needed columns, or the table)
    :return: run -> calibrator -> shape: (resamples,)
    """
    out: dict[Run, dict[str, np.ndarray]] = {}
    for key, run in _lcwa_r2(assessment).groupby(_RUN, sort=True):
        key = tuple(str(k) for k in key)
        source = triple_sums.get(key)
        if source is None:
            continue
        names = sorted(set(run["calibrator"].astype(str)))
        wanted = [column("num_neg", "lcwa")]
        for name in names:
            wanted += [column("pos_posterior", name)] + [column(f, name, "lcwa") for f in NEGATIVE_SUMS]
        frame = source if isinstance(source, pd.DataFrame) else pd.read_parquet(source, columns=wanted)
        pairs = [(name, "lcwa") for name in names]
        found = calibrator_replicates(frame, pairs, resamples, stream_seed(seed, *key, "s5"))
        out[key] = {name: found[(name, "lcwa")]["r2_w"] for name in names}
    return out


def r2_difference_intervals(
    assessment: pd.DataFrame, replicates: Mapping[Run, Mapping[str, np.ndarray]], level: float
) -> pd.DataFrame:
    """Per run and Platt procedure: ``R2_w(iso) - R2_w(platt)`` on test (LCWA, best functions) and its paired
    bootstrap interval over the test triples (:func:`platt_replicates`); NaN bounds where a run has no resamples.

    :return: columns ``dataset, model, seed, procedure, difference, low, high``
    """
    best = _best_lcwa(assessment)
    names = assessment[_bool(assessment["best_of_method"]) & (assessment["strategy"] == "lcwa")]
    names = names.drop_duplicates(subset=[*_RUN, "method", "procedure"]).set_index([*_RUN, "method", "procedure"])
    rows = []
    for key, run in best.groupby(_RUN, sort=True):
        key = tuple(str(k) for k in key)
        iso = run[run["method"] == "isotonic"]
        reps = replicates.get(key, {})
        for platt in run[run["method"] == "platt"].itertuples(index=False):
            difference = float(iso["r2_w"].iloc[0]) - float(platt.r2_w) if len(iso) else float("nan")
            low = high = float("nan")
            if len(iso):
                iso_name = str(names.loc[(*iso.iloc[0][_RUN], "isotonic", iso.iloc[0]["procedure"]), "calibrator"])
                platt_name = str(names.loc[(platt.dataset, platt.model, platt.seed, "platt", platt.procedure),
                                           "calibrator"])
                if iso_name in reps and platt_name in reps:
                    low, high = percentile_interval(reps[iso_name] - reps[platt_name], level)
            rows.append((*key, str(platt.procedure), difference, low, high))
    return pd.DataFrame(rows, columns=[*_RUN, "procedure", "difference", "low", "high"])


def platt_mean_intervals(
    assessment: pd.DataFrame, replicates: Mapping[Run, Mapping[str, np.ndarray]], level: float
) -> pd.DataFrame:
    """Per link-prediction method (``model_class``, else the model) and Platt procedure: the mean test ``R2_w``
    (LCWA) over its runs and their Platt functions (Appendix B's mean over the six), and its percentile interval
    (each run's functions on the same resamples, :func:`platt_replicates`); NaN bounds where a run has none.

    :return: columns ``model_class, procedure, mean, num_functions, low, high``
    """
    a = _lcwa_r2(assessment)
    a = a[a["method"] == "platt"].copy()
    a["model_class"] = (a["model_class"] if "model_class" in a else a["model"]).astype(str)
    rows = []
    for (method, procedure), group in a.groupby(["model_class", "procedure"], sort=True):
        reps = [replicates.get(tuple(str(v) for v in r[_RUN]), {}).get(str(r["calibrator"]))
                for _, r in group.iterrows()]
        low = high = float("nan")
        if reps and all(r is not None for r in reps):
            low, high = percentile_interval(np.mean(reps, axis=0), level)
        rows.append((method, str(procedure), float(group["value"].astype(float).mean()), len(group), low, high))
    return pd.DataFrame(rows, columns=["model_class", "procedure", "mean", "num_functions", "low", "high"])


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


def _paper_fits(calibrators: pd.DataFrame) -> pd.DataFrame:
    return calibrators[(calibrators["method"] == "platt") & (calibrators["procedure"] == "paper")]


def _budget_text(calibrators: pd.DataFrame) -> str:
    """The paper procedure's budget (``learning_rate``, ``batch_size``, ``epochs`` of ``calibrators.tsv``)."""
    paper = _paper_fits(calibrators)
    if not len(paper) or not set(_BUDGET) <= set(paper) or paper[list(_BUDGET)].isna().to_numpy().any():
        return "the configured studies.s5.platt.learning_rate, batch_size and epochs"
    budgets = paper[list(_BUDGET)].astype(float).drop_duplicates().itertuples(index=False)
    return "; ".join(f"learning_rate {lr:g}, batch_size {int(bs)}, epochs {int(ep)}" for lr, bs, ep in budgets)


def _budget_basis(calibrators: pd.DataFrame, argument: str) -> str:
    return by_construction(f"decided by the budget: {_budget_text(calibrators)} (the paper gives none); {argument}")


def _procedure_basis(calibrators: pd.DataFrame, procedure: str) -> tuple[str, str]:
    """The basis of a comparison of ``procedure``'s Platt posteriors and a sentence on its fits: measured, or decided
    by the budget where a paper fit stopped short of the optimum (``converged`` false)."""
    if procedure != "paper":
        return MEASURED, ""
    paper = _paper_fits(calibrators)
    if not len(paper) or "converged" not in paper:
        return MEASURED, ""
    short = int((~_bool(paper["converged"])).sum())
    text = f"{short} of {len(paper)} paper fits stopped short of the optimum (gradient norm above 1e-6)"
    if not short:
        return MEASURED, text
    return _budget_basis(calibrators, "the under-fitted functions set Platt's posteriors"), text


def _holdout_text(calibrators: pd.DataFrame, procedure: str) -> str:
    """Isotonic vs the best Platt function of ``procedure`` (validation R2_w) on the held-out validation share."""
    if "holdout_r2_w" not in calibrators or calibrators["holdout_r2_w"].isna().all():
        return "no held-out validation share (holdout_fraction 0)"
    wins = total = 0
    for _, run in calibrators.groupby(_RUN):
        iso = run[run["method"] == "isotonic"]
        platt = run[(run["method"] == "platt") & (run["procedure"] == procedure)]
        if len(iso) and len(platt):
            best = platt.loc[platt["r2_w"].astype(float).idxmax()]
            total += 1
            wins += int(float(iso["holdout_r2_w"].iloc[0]) > float(best["holdout_r2_w"]))
    return (f"held-out validation share (negatives disjoint from the fit's): isotonic above the best Platt in {wins} "
            f"of {total} runs (point values)")


def _differences(intervals: pd.DataFrame, procedure: str) -> tuple[pd.DataFrame, list[str], Judgement]:
    """``procedure``'s rows of :func:`r2_difference_intervals`, their run names and the judgement of ``> 0``."""
    mine = intervals[intervals["procedure"] == procedure]
    names = _names(mine)
    judgements = [
        judge(d, lo, hi, Criterion(lower=0.0, strict=True), name=f"difference of {n}")
        for n, d, lo, hi in zip(names, mine["difference"], mine["low"], mine["high"])
    ]
    return mine, names, combine(judgements)


def _out_of_sample_claim(
    intervals: pd.DataFrame, calibrators: pd.DataFrame, readings: str, level: float, procedure: str
) -> Claim:
    claim = "s5.isotonic_beats_platt_out_of_sample" + ("" if procedure == "converged" else f"@{procedure}")
    statement = ("Sec. 6.1 takeaways, out of sample: isotonic's test R2_w (LCWA, best of each method) exceeds that of "
                 f"the best Platt function ({procedure} procedure)")
    paper = "isotonic better in every run (validation; Appendix B: Platt's test R2_w lower)"
    tolerance = "R2_w(iso) - R2_w(platt) > 0 in every run"
    mine, names, judgement = _differences(intervals, procedure)
    if not len(mine):
        return Claim(claim, statement, paper, "", tolerance, NOT_CHECKABLE,
                     f"no {procedure} Platt functions assessed (studies.s5.platt.procedure)")
    basis, fits = _procedure_basis(calibrators, procedure)
    d = mine["difference"].to_numpy(float)
    return interval_claim(
        claim, statement, paper,
        f"difference {np.nanmin(d):+.4f} to {np.nanmax(d):+.4f}; > 0 in {int(np.sum(d > 0))} of {len(d)}; "
        + _holdout_text(calibrators, procedure),
        judgement,
        interval="; ".join(f"{n} {format_interval(lo, hi)}" for n, lo, hi in zip(names, mine["low"], mine["high"]))
        + f" ({100 * level:g} % paired percentile bootstrap over test triples, a triple's negatives with it)",
        tolerance=tolerance, basis=basis, reason="; ".join(t for t in (fits, readings) if t),
    )


def _spread_text(spread: pd.DataFrame, column: str, label: str) -> str:
    values = spread[column].to_numpy(dtype=float)
    if np.isnan(values).all():
        return f"{label}: not run"
    finite = values[~np.isnan(values)]
    text = (f"{label}: {finite.min():.3g} to {finite.max():.3g}, above tolerance in "
            f"{int(np.sum(finite > SPREAD_TOLERANCE))} of {len(finite)} runs")
    return text + (f" ({len(values) - len(finite)} diverged)" if len(finite) < len(values) else "")


def _spread_claim(calibrators: pd.DataFrame, procedure: str) -> Claim:
    claim = f"s5.platt_initialisations_differ@{procedure}"
    statement = f"Sec. 6.1, Fig. 3: the six Platt initialisations give different functions ({procedure} procedure)"
    tolerance = f"max - min of a or b > {SPREAD_TOLERANCE:g} max(1, |median|) in every run"
    spread = table_platt_spread(calibrators)
    spread = spread[spread["procedure"] == procedure]
    if not len(spread):
        return Claim(claim, statement, _SIX_FUNCTIONS, "", tolerance, NOT_CHECKABLE,
                     f"the {procedure} procedure was not run (studies.s5.platt.procedure)")
    spreads = spread["relative_spread"].to_numpy(dtype=float)
    differ = int(np.sum(spreads > SPREAD_TOLERANCE))
    kgeval = (f"relative spread of (a, b) from {spreads.min():.3g} to {spreads.max():.3g}; above tolerance in {differ} "
              f"of {len(spreads)} runs; distinct functions per run {int(spread['num_distinct'].min())} to "
              f"{int(spread['num_distinct'].max())} of 6")
    if procedure == "converged":
        # each fit runs to the optimum of the logistic loss, convex in (a, b): the six meet whatever the scores
        basis = by_construction("the logistic loss is convex in (a, b), so every initialisation reaches its optimum")
        why = "each fit reaches the optimum of a convex loss, so the six coincide"
    else:
        basis = _budget_basis(calibrators, "each start descends with a fixed step in its own batch order and stops "
                              "where the epochs run out")
        why = "relative spread " + "; ".join(
            _spread_text(spread, column, label) for column, label in (
                ("relative_spread", "at 1x the epochs"),
                *((f"relative_spread_x{m}", f"at {m}x the epochs") for m in LONGER_BUDGETS),
            )
        )
    return ordinal_claim(
        claim, statement, _SIX_FUNCTIONS, kgeval, differ == len(spreads),
        why if differ == len(spreads) else f"{why}; the spread is below tolerance in {len(spreads) - differ} runs",
        tolerance, interval=EXACT, basis=basis,
    )


def _appendix_b_lower_claim(intervals: pd.DataFrame, calibrators: pd.DataFrame, procedure: str, readings: str) -> Claim:
    claim = f"s5.appendix_b_platt_below_isotonic@{procedure}"
    statement = (f"Appendix B, Fig. 3: Platt scaling has a lower test R2_w than isotonic regression ({procedure} "
                 "procedure; the best Platt function of each run)")
    paper = ('"The R2_w and BS_w values are significantly lower and higher, respectively, than those achieved by '
             'isotonic regression"')
    tolerance = "R2_w(iso) - R2_w(platt) > 0 in every run"
    mine, _, judgement = _differences(intervals, procedure)
    if not len(mine):
        return Claim(claim, statement, paper, "", tolerance, NOT_CHECKABLE, f"no {procedure} Platt functions assessed")
    basis, fits = _procedure_basis(calibrators, procedure)
    d = mine["difference"].to_numpy(float)
    return interval_claim(
        claim, statement, paper, f"R2_w(iso) - R2_w(platt) {np.nanmin(d):+.4f} to {np.nanmax(d):+.4f}", judgement,
        interval="; ".join(f"{n} {format_interval(lo, hi)}" for n, lo, hi in zip(_names(mine), mine["low"], mine["high"]))
        + " (paired percentile bootstrap of each run's difference over test triples, a triple's negatives with it, as "
        "s5.isotonic_beats_platt_out_of_sample)", tolerance=tolerance, basis=basis,
        reason="; ".join(t for t in (fits, readings) if t),
    )


def _appendix_b_negative_claim(means: pd.DataFrame, calibrators: pd.DataFrame, procedure: str, level: float) -> Claim:
    claim = f"s5.appendix_b_platt_negative_mean_r2w@{procedure}"
    statement = (f"Appendix B, Fig. 3: the mean test R2_w of the six Platt functions is negative for HolE and TransE "
                 f"({procedure} procedure)")
    paper = '"the mean of the R2_w values is negative in the cases of HolE and TransE"'
    tolerance = "mean Platt R2_w < 0 for HolE and TransE"
    mine = means[means["procedure"] == procedure].set_index("model_class")
    if not len(mine):
        return Claim(claim, statement, paper, "", tolerance, NOT_CHECKABLE, f"no {procedure} Platt functions assessed")
    present = [m for m in _NEGATIVE_METHODS if m in mine.index]
    if not present:
        return Claim(claim, statement, paper, "HolE and TransE not studied", tolerance, NOT_CHECKABLE,
                     "no HolE or TransE runs")
    judgements, texts = [], []
    for m in present:
        row = mine.loc[m]
        judgements.append(judge(float(row["mean"]), float(row["low"]), float(row["high"]), Criterion(upper=0.0, strict=True),
                                name=f"{m}'s mean Platt R2_w"))
        texts.append(f"{m} {format_interval(row['low'], row['high'])}")
    judgement = combine(judgements)
    resampled = not any(j.verdict == NOT_CHECKABLE for j in judgements)
    if not resampled:
        below = all(mine.loc[m, "mean"] < 0 for m in present)
        judgement = Judgement(INCONCLUSIVE, "no per-triple sums, so no interval; the point values lie on the "
                              + ("holds side" if below else "differs side"))
    basis, fits = _procedure_basis(calibrators, procedure)
    unit = (f"{100 * level:g} % percentile bootstrap of the mean over the method's runs and Platt functions, each run's "
            "test triples resampled with their negatives" if resampled else
            "not resampled: no per-triple sums (triple_sums.parquet)")
    return interval_claim(
        claim, statement, paper,
        "mean Platt R2_w (LCWA, test): " + "; ".join(
            f"{m} mean {mine.loc[m, 'mean']:+.4f} over {int(mine.loc[m, 'num_functions'])} functions" for m in present),
        judgement, interval=("; ".join(texts) + f" ({unit})") if resampled else unit,
        tolerance=tolerance, basis=basis, reason=fits,
    )


def platt_claims(
    calibrators: pd.DataFrame,
    assessment: pd.DataFrame,
    replicates: Mapping[Run, Mapping[str, np.ndarray]],
    level: float,
) -> list[Claim]:
    """The claims of the module docstring from the collated tables and :func:`platt_replicates` (empty: point values
    only, so the compared claims are not checkable or inconclusive)."""
    intervals = r2_difference_intervals(assessment, replicates, level)
    means = platt_mean_intervals(assessment, replicates, level)
    readings = _readings_text(assessment) if "best_of_method" in assessment else ""
    claims = []
    for procedure in ("converged", "paper"):
        claims.append(_out_of_sample_claim(intervals, calibrators, readings, level, procedure))
        claims.append(_spread_claim(calibrators, procedure))
        claims.append(_appendix_b_lower_claim(intervals, calibrators, procedure, readings))
        claims.append(_appendix_b_negative_claim(means, calibrators, procedure, level))
    return claims
