"""S5's claims on the levels of Fig. 1 (paper 004, Sec. 6.2), checked on kgeval's ``assessment.tsv`` and each run's
per-triple sums.

Sec. 6.2 reads Fig. 1 (the best calibration function of each model by validation ``R2_w``, LCWA negatives, test
split; "We aggregate all of the R2_w values for the datasets and group by link prediction method"): "all mean values
are between 0.7 and 0.9", "the BS_w mean values are less or equal than 0.1", BA "mean values greater or equal than
0.9", "the r_xy mean values are greater than 0.55". Each is a statement about every method's mean:

- ``s5.fig1_r2w_in_0.7_0.9``: ``0.7 <= mean R2_w <= 0.9``;
- ``s5.fig1_bs_w_le_0.1``: ``mean BS_w <= 0.1``;
- ``s5.fig1_ba_ge_0.9``: ``mean BA >= 0.9``;
- ``s5.posteriors_correlate_with_ranks``: ``mean r_xy > 0.55`` (Eq. 18-19; the paper's "many calibration
  functions exhibit high correlation", made precise by its Fig. 1d sentence).

Criterion (fixed before looking at the results): per link-prediction method (``model_class`` of the collated table,
else the model key), the mean over its runs (datasets x seeds, the line of the figure's boxes) of the selected
function's test measure on LCWA lies in the level, for every method (:func:`~kgeval.claims.combine`). Interval:
each run's test triples are resampled, a triple's head and tail negatives with it (the per-triple sums of
:mod:`kgeval.studies.s5.triple_sums`; r_xy from the run's ``positives.parquet``), independently per run
(:func:`run_replicates`); each method's replicates are averaged over its runs and the percentile interval of that
mean is judged (:func:`~kgeval.claims.judge`). The share of runs that meet the level is context in the ``kgeval``
column. ``not checkable`` when no run has the measure, or for a method with a run that has no resamples.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kgeval.claims import NOT_CHECKABLE, Claim, Criterion, Judgement, combine, format_interval, interval_claim, judge
from kgeval.studies.s5.triple_sums import calibrator_replicates, column, correlation_replicates, run_stream_seed
from kgeval.uncertainty.resampling import BootstrapSettings, percentile_interval

__all__ = ["Level", "LEVELS", "level_values", "strategy_key", "run_replicates", "level_claim", "level_claims"]

#: a run: ``(dataset, model, seed)``
Run = tuple[str, str, str]


@dataclass(frozen=True)
class Level:
    """One of Fig. 1's levels: the claim id, the metric of ``assessment.tsv``, its region, and the paper's words."""

    claim: str
    metric: str
    criterion: Criterion
    label: str
    panel: str
    paper: str


LEVELS: tuple[Level, ...] = (
    Level("s5.fig1_r2w_in_0.7_0.9", "r2_w", Criterion(0.7, 0.9), "R2_w", "Fig. 1a",
          "Sec. 6.2: 'We observe that all mean values are between 0.7 and 0.9 (see Figure 1a)'"),
    Level("s5.fig1_bs_w_le_0.1", "bs_w", Criterion(upper=0.1), "BS_w", "Fig. 1b",
          "Sec. 6.2: 'the BS_w mean values are less or equal than 0.1 (see Figure 1b)'"),
    Level("s5.fig1_ba_ge_0.9", "ba", Criterion(lower=0.9), "BA", "Fig. 1c",
          "Sec. 6.2: 'These best calibration functions also exhibit high BA values with mean values greater or "
          "equal than 0.9 (see Figure 1c)'"),
    Level("s5.posteriors_correlate_with_ranks", "pearson_r", Criterion(lower=0.55, strict=True), "r_xy", "Fig. 1d",
          "Sec. 6.2: 'Even though the r_xy mean values are greater than 0.55, we observe differences among "
          "calibration functions' (Figure 1d)"),
)

_RUN = ["dataset", "model", "seed"]


def _bool(series: pd.Series) -> pd.Series:
    return series.astype(str).str.lower().isin(["true", "1", "1.0"])


def _selected(assessment: pd.DataFrame) -> pd.DataFrame:
    return assessment[_bool(assessment["selected"]) & (assessment["strategy"] == "lcwa")]


def level_values(assessment: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per run, the selected function's test ``metric`` on LCWA (runs where it is NaN left out) and its
    link-prediction method.

    :return: columns ``dataset, model, seed, method, value``
    """
    a = _selected(assessment)
    a = a[a["metric"] == metric]
    values = a[_RUN].astype(str)
    values["method"] = (a["model_class"] if "model_class" in a else a["model"]).astype(str).to_numpy()
    values["value"] = a["value"].astype(float).to_numpy()
    return values[values["value"].notna()].reset_index(drop=True)


def _strategies(source: str | os.PathLike | pd.DataFrame) -> list[str]:
    """The strategies of a ``triple_sums.parquet`` (its ``num_neg|<strategy>`` columns), read from the schema."""
    if isinstance(source, pd.DataFrame):
        names = list(source.columns)
    else:
        import pyarrow.parquet as pq

        names = pq.read_schema(source).names
    prefix = column("num_neg", "")
    return sorted(n[len(prefix):] for n in names if n.startswith(prefix))


def strategy_key(metric: str, strategy: str) -> str:
    """The key of a strategy's measure in :func:`run_replicates` (LCWA's keep the bare metric name)."""
    return metric if strategy == "lcwa" else f"{metric}|{strategy}"


def run_replicates(
    assessment: pd.DataFrame,
    triple_sums: Mapping[Run, str | os.PathLike | pd.DataFrame],
    positives: Mapping[Run, pd.DataFrame],
    bootstrap: BootstrapSettings,
) -> dict[Run, dict[str, np.ndarray]]:
    """Per run, the selected function's measures on ``bootstrap.resamples`` resamples of its test triples:
    ``bs_w``, ``r2_w``, ``ba`` (and the rest of :func:`~kgeval.studies.s5.measures.weighted_measures`) on LCWA, the
    same for every other strategy under :func:`strategy_key` (``bs_w|tc``), all from its ``triple_sums.parquet``, and
    ``pearson_r`` from its ``positives.parquet``, on the same resamples (stream
    :func:`~kgeval.studies.s5.triple_sums.run_stream_seed`), so that strategies are compared paired. A run without
    one of the files lacks those measures.

    :param triple_sums: run -> its ``triple_sums.parquet`` (path, read for the selected function's columns only, or
        the table)
    :param positives: run -> its ``positives.parquet``
    """
    out: dict[Run, dict[str, np.ndarray]] = {}
    selected = _selected(assessment).drop_duplicates(subset=_RUN)
    for row in selected.itertuples(index=False):
        key = (str(row.dataset), str(row.model), str(row.seed))
        seed = run_stream_seed(bootstrap, key)
        found: dict[str, np.ndarray] = {}
        source = triple_sums.get(key)
        if source is not None:
            name = str(row.calibrator)
            strategies = _strategies(source)
            wanted = [column("pos_posterior", name)]
            for strategy in strategies:
                wanted.append(column("num_neg", strategy))
                wanted += [column(f, name, strategy) for f in ("neg_posterior", "neg_sq_error", "neg_hits")]
            frame = source if isinstance(source, pd.DataFrame) else pd.read_parquet(source, columns=wanted)
            pairs = [(name, strategy) for strategy in strategies]
            for (_, strategy), measures in calibrator_replicates(frame, pairs, bootstrap.resamples, seed).items():
                found.update({strategy_key(m, strategy): v for m, v in measures.items()})
        if key in positives:
            found["pearson_r"] = correlation_replicates(positives[key], str(row.method), bootstrap.resamples, seed)
        out[key] = found
    return out


def _method_judgement(level: Level, method: str, runs: pd.DataFrame, replicates: Mapping, confidence: float):
    """The judgement of one method's mean over its runs, and its interval."""
    name = f"{method}'s mean {level.label}"
    keys = [tuple(k) for k in runs[_RUN].itertuples(index=False)]
    missing = [k for k in keys if level.metric not in replicates.get(k, {})]
    if missing:
        reason = f"{name}: no resamples for {', '.join('/'.join(k) for k in missing)} (no per-triple sums)"
        return Judgement(NOT_CHECKABLE, reason), (float("nan"), float("nan"))
    mean = np.mean([replicates[k][level.metric] for k in keys], axis=0)
    low, high = percentile_interval(mean, confidence)
    return judge(float(runs["value"].mean()), low, high, level.criterion, name=name), (low, high)


def level_claim(
    assessment: pd.DataFrame, level: Level, replicates: Mapping[Run, Mapping[str, np.ndarray]], confidence: float
) -> Claim:
    """The claim of one of Fig. 1's levels (module docstring).

    :param replicates: :func:`run_replicates`
    :param confidence: the coverage of the intervals
    """
    name = level.criterion.text(level.label, digits=2)
    statement = (
        f"Sec. 6.2, {level.panel}: every link-prediction method's mean test {level.label} over the datasets (the best "
        f"function by validation R2_w, LCWA) meets {name}"
    )
    if level.metric == "pearson_r":
        statement += " (posteriors correlate with relative ranks, Eq. 18-19)"
    tolerance = f"every method's mean over its runs: {name}"
    values = level_values(assessment, level.metric)
    if not len(values):
        reason = f"no run with a selected function's LCWA {level.label} on test"
        return Claim(level.claim, statement, level.paper, "no run", tolerance, NOT_CHECKABLE, reason)
    judgements, intervals, means = [], [], []
    for method, runs in values.groupby("method", sort=True):
        judgement, (low, high) = _method_judgement(level, str(method), runs, replicates, confidence)
        judgements.append(judgement)
        intervals.append(f"{method} {format_interval(low, high, digits=3)}")
        means.append(f"{method} {runs['value'].mean():.3f} ({len(runs)} run{'' if len(runs) == 1 else 's'})")
    meets = values["value"].map(level.criterion.contains)
    v = values["value"].to_numpy(float)
    kgeval = (
        f"mean per method: {', '.join(means)}; {name} in {int(meets.sum())} of {len(values)} runs (share "
        f"{meets.mean():.2f}); {level.label} min {np.min(v):.4f}, median {np.median(v):.4f}, max {np.max(v):.4f}"
    )
    unit = (
        f"{100 * confidence:g} % percentile bootstrap of each method's mean over its runs; each run's test triples "
        "resampled on their own, a triple's head and tail negatives with it"
    )
    return interval_claim(
        level.claim, statement, level.paper, kgeval, combine(judgements), "; ".join(intervals) + f" ({unit})", tolerance
    )


def level_claims(
    assessment: pd.DataFrame, replicates: Mapping[Run, Mapping[str, np.ndarray]], confidence: float
) -> list[Claim]:
    """The claims of all of Fig. 1's levels (:data:`LEVELS`)."""
    return [level_claim(assessment, level, replicates, confidence) for level in LEVELS]
