"""S5's tables across models: Table 1 (timing) and Table 2 (ranks versus posteriors), also in the paper's layout.

Across models (:func:`table_comparison`): ``MR' = 1 - (MR - min MR) / (max MR - min MR)`` per dataset and seed, the
mean posterior ``y_bar`` of the test positives under the selected function, and the share of the pairwise model
comparisons that both orders agree on (Table 2), with its interval over paired resamples of the test triples
(:mod:`kgeval.studies.s5.overlap`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from kgeval.io import read_tsv, write_tsv
from kgeval.studies.s5.overlap import overlap_intervals
from kgeval.studies.s5.summary import UNIT_COSTS
from kgeval.uncertainty.resampling import BootstrapSettings

__all__ = [
    "PAPER_MODELS",
    "ABBREVIATIONS",
    "NOT_AVAILABLE",
    "table_timing",
    "table_timing_paper",
    "table_overlap_paper",
    "scaled_mr",
    "comparison_overlap",
    "table_comparison",
    "write_table_timing",
    "write_table_comparison",
    "significant_overlap",
]


#: the paper's nine link-prediction methods (HAKE and RotPro have no PyKEEN implementation)
PAPER_MODELS: tuple[str, ...] = ("BoxE", "ComplEx", "HAKE", "HolE", "QuatE", "RotatE", "RotPro", "TorusE", "TransE")


#: the paper's abbreviations (Table 2)
ABBREVIATIONS: dict[str, str] = {
    "BoxE": "Bo",
    "ComplEx": "Co",
    "HAKE": "HA",
    "HolE": "Ho",
    "QuatE": "Qu",
    "RotatE": "Rt",
    "RotPro": "RP",
    "TorusE": "To",
    "TransE": "Tr",
}


def table_timing(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 1: per dataset, model and seed, ``t_A``, ``%Delta t`` and their parts (seconds;
    :mod:`kgeval.studies.s5.timing`: ``t_a = t_stats + t_fit_selected + t_posteriors``, ``t_a_end_to_end =
    t_score + t_a``), the cost per unit of work (:data:`~kgeval.studies.s5.summary.UNIT_COSTS`: ns per validation
    negative and per rank-evaluation candidate), and ``timer_resolution`` (of ``time.perf_counter``, for the claims' noise floor).

    :param summary: the collated summary table (``dataset, model, model_class, seed, metric, value``)
    """
    wide = summary.pivot_table(
        index=["dataset", "model", "model_class", "seed"], columns="metric", values="value", aggfunc="first"
    ).reset_index()
    columns = [
        "dataset",
        "model",
        "model_class",
        "seed",
        "t_lp",
        "t_a",
        "pct_delta_t",
        "t_a_end_to_end",
        "pct_delta_t_end_to_end",
        "t_a_all_fits",
        "pct_delta_t_all_fits",
        "t_score",
        "t_stats",
        "t_fit_selected",
        "t_fit_all",
        "t_fit_isotonic",
        "t_fit_platt",
        "t_select",
        "t_posteriors",
        "timer_resolution",
        *UNIT_COSTS,
        "num_entities",
        "num_valid",
        "num_test",
        "num_valid_negatives",
        "num_test_negatives_lcwa",
    ]
    columns += [c for c in _negative_columns(wide) if c not in columns]
    for column in ("t_stats", "timer_resolution", *UNIT_COSTS):  # summaries without these columns
        if column not in wide:
            wide[column] = np.nan
    wide.columns.name = None
    return wide[columns]


#: strategies in the order the tables show their negative counts
_STRATEGY_ORDER = ("lcwa", "gb", "tc", "lc", "gb+lc")


def _negative_columns(table: pd.DataFrame) -> list[str]:
    """The ``num_test_negatives_<strategy>`` columns of a table, in :data:`_STRATEGY_ORDER`."""
    return [f"num_test_negatives_{s}" for s in _STRATEGY_ORDER if f"num_test_negatives_{s}" in table.columns]


def _negatives_text(row: pd.Series | dict) -> str:
    """``"lcwa 1,234; gb 0; ..."`` from a row's ``num_test_negatives_<strategy>`` values."""
    parts = []
    for strategy in _STRATEGY_ORDER:
        value = row.get(f"num_test_negatives_{strategy}")
        if value is not None and not pd.isna(value):
            parts.append(f"{strategy} {int(value):,}")
    return "; ".join(parts)


def scaled_mr(mr: pd.Series) -> pd.Series:
    """``MR' = 1 - (MR - min) / (max - min)``: 1 for the best model, 0 for the worst (all 1 if they are equal)."""
    low, high = mr.min(), mr.max()
    if not high > low:
        return pd.Series(1.0, index=mr.index)
    return 1.0 - (mr - low) / (high - low)


def comparison_overlap(first: pd.Series, second: pd.Series) -> tuple[int, int]:
    """How many pairwise comparisons two accuracy measures share (Table 2).

    The comparisons of a measure are the pairs ``(a, b)`` with ``value_a > value_b`` (higher is better); a pair is
    shared if both measures order it the same way. Ties order nothing.

    :param first: accuracy per model (index: models)
    :param second: accuracy per model, same index
    :return: ``(shared comparisons, number of model pairs)``
    """
    models = list(first.index)
    shared = 0
    for a, b in combinations(models, 2):
        d1, d2 = np.sign(first[a] - first[b]), np.sign(second[a] - second[b])
        shared += int(d1 != 0 and d1 == d2)
    return shared, len(models) * (len(models) - 1) // 2


def table_comparison(summary: pd.DataFrame, assessment: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 2: models ordered by ``MR'`` and by ``y_bar`` (selected function), and the overlap of both orders.

    :return: ``(per model: dataset, seed, model, model_class, abbreviation, mr, mr_scaled, mean_posterior,
        calibrator, position_mr, position_posterior; per dataset and seed: num_models, num_pairs, num_shared,
        overlap)``
    """
    mr = summary[summary["metric"] == "mr"][["dataset", "seed", "model", "model_class", "value"]].rename(
        columns={"value": "mr"}
    )
    chosen = assessment[
        (assessment["metric"] == "mean_posterior")
        & assessment["selected"].astype(bool)
        & (assessment["strategy"] == "lcwa")
    ][["dataset", "seed", "model", "calibrator", "value"]].rename(columns={"value": "mean_posterior"})
    table = mr.merge(chosen, on=["dataset", "seed", "model"], how="inner")
    counts = summary[summary["metric"].astype(str).str.startswith("num_test_negatives_")]
    counts = counts.pivot_table(index=["dataset", "seed", "model"], columns="metric", values="value", aggfunc="first")
    counts.columns.name = None
    negative_columns = _negative_columns(counts)
    table = table.merge(counts[negative_columns].reset_index(), on=["dataset", "seed", "model"], how="left")
    rows, overlaps = [], []
    for (dataset, seed), group in table.groupby(["dataset", "seed"], sort=True):
        group = group.set_index("model").copy()
        group["mr_scaled"] = scaled_mr(group["mr"])
        group["position_mr"] = group["mr_scaled"].rank(ascending=False, method="min").astype(int)
        group["position_posterior"] = group["mean_posterior"].rank(ascending=False, method="min").astype(int)
        shared, pairs = comparison_overlap(group["mr_scaled"], group["mean_posterior"])
        overlaps.append(
            {
                "dataset": dataset,
                "seed": seed,
                "num_models": len(group),
                "num_pairs": pairs,
                "num_shared": shared,
                "overlap": shared / pairs if pairs else float("nan"),
            }
        )
        group["abbreviation"] = group["model_class"].map(ABBREVIATIONS).fillna(group["model_class"])
        rows.append(group.reset_index())
    columns = [
        "dataset",
        "seed",
        "model",
        "model_class",
        "abbreviation",
        "mr",
        "mr_scaled",
        "mean_posterior",
        "calibrator",
        "position_mr",
        "position_posterior",
        *negative_columns,
    ]
    per_model = pd.concat(rows, ignore_index=True)[columns] if rows else pd.DataFrame(columns=columns)
    return per_model, pd.DataFrame(
        overlaps, columns=["dataset", "seed", "num_models", "num_pairs", "num_shared", "overlap"]
    )


NOT_AVAILABLE = "not available in PyKEEN"


def table_timing_paper(timing: pd.DataFrame, unavailable: Sequence[str] = ()) -> pd.DataFrame:
    """Table 1 in the paper's layout: one row per method, per dataset the columns ``t_A`` and ``%Delta t``.

    Means over seeds. Both readings of ``t_A`` are given: ``<dataset> t_A`` and ``<dataset> %dt`` (Sec. 6.3's
    definition), ``<dataset> t_A end-to-end`` and ``<dataset> %dt end-to-end`` (validation scoring included).
    The paper's methods that cannot run here (``unavailable``) follow as rows without values whose ``note`` says so.
    A last row, ``method`` = ``test negatives``, gives per dataset the number of test negatives of every strategy
    (in its ``<dataset> t_A`` column; the same for every model), so that an empty strategy is visible.

    :param timing: the output of :func:`table_timing`
    :param unavailable: the paper's methods without an implementation (``studies.s5.unavailable_models``)
    """
    means = timing.groupby(["model_class", "dataset"], sort=True)[
        ["t_a", "pct_delta_t", "t_a_end_to_end", "pct_delta_t_end_to_end"]
    ].mean()
    labels = {
        "t_a": "t_A",
        "pct_delta_t": "%dt",
        "t_a_end_to_end": "t_A end-to-end",
        "pct_delta_t_end_to_end": "%dt end-to-end",
    }
    wide = means.unstack("dataset")
    wide.columns = [f"{dataset} {labels[measure]}" for measure, dataset in wide.columns]
    order = [f"{d} {labels[m]}" for d in sorted(timing["dataset"].unique()) for m in labels]
    wide = wide[order].reset_index().rename(columns={"model_class": "method"})
    wide["note"] = ""
    missing = [name for name in unavailable if name not in set(wide["method"])]
    extra = [{"method": name, "note": NOT_AVAILABLE} for name in missing]
    negatives = {"method": "test negatives", "note": "per strategy, in the t_A column; the same for every model"}
    for dataset, group in timing.groupby("dataset", sort=True):
        negatives[f"{dataset} t_A"] = _negatives_text(group.iloc[0])
    wide = pd.concat([wide, pd.DataFrame(extra, columns=wide.columns)], ignore_index=True)
    wide = wide.astype({c: object for c in wide.columns if c.endswith(" t_A")})
    return pd.concat([wide, pd.DataFrame([negatives], columns=wide.columns)], ignore_index=True)


def table_overlap_paper(
    per_model: pd.DataFrame, overlap: pd.DataFrame, unavailable: Sequence[str] = ()
) -> pd.DataFrame:
    """Table 2 in the paper's layout: per dataset (and seed) two rows, the methods sorted by ``MR'`` and by ``y_bar``.

    ``sorted`` reads like the paper's ``Tr (1.00), Bo (0.96), ...`` (abbreviations of :data:`ABBREVIATIONS`, values
    rounded to two decimals, order from the unrounded values); ``overlap`` (on the ``MR'`` row) is the share of
    shared pairwise comparisons in percent; ``negatives`` the test negatives per strategy. The paper's methods that
    cannot run here (``unavailable``) get a third row per dataset saying so.

    :param per_model: the first output of :func:`table_comparison`
    :param overlap: its second output
    :param unavailable: ``studies.s5.unavailable_models``
    """
    columns = ["dataset", "seed", "sorted_by", "sorted", "overlap", "negatives"]
    rows = []
    overlaps = overlap.set_index(["dataset", "seed"])
    for (dataset, seed), group in per_model.groupby(["dataset", "seed"], sort=True):
        negatives = _negatives_text(group.iloc[0])
        share = overlaps.loc[(dataset, seed), "overlap"] if (dataset, seed) in overlaps.index else float("nan")
        for label, column in (("MR'", "mr_scaled"), ("y_bar", "mean_posterior")):
            ordered = group.sort_values([column, "abbreviation"], ascending=[False, True], kind="mergesort")
            text = ", ".join(f"{a} ({v:.2f})" for a, v in zip(ordered["abbreviation"], ordered[column]))
            rows.append(
                {
                    "dataset": dataset,
                    "seed": seed,
                    "sorted_by": label,
                    "sorted": text,
                    "overlap": f"{100 * share:.0f}%" if label == "MR'" and not pd.isna(share) else "",
                    "negatives": negatives if label == "MR'" else "",
                }
            )
        present = set(group["model_class"])
        missing = [name for name in unavailable if name not in present]
        if missing:
            names = ", ".join(f"{ABBREVIATIONS.get(name, name)} ({name})" for name in missing)
            rows.append(
                {
                    "dataset": dataset,
                    "seed": seed,
                    "sorted_by": "not available",
                    "sorted": f"{names}: {NOT_AVAILABLE}",
                    "overlap": "",
                    "negatives": "",
                }
            )
    return pd.DataFrame(rows, columns=columns)


def write_table_timing(
    summary_path: str | os.PathLike,
    out: str | os.PathLike,
    paper_out: str | os.PathLike | None = None,
    unavailable: Sequence[str] = (),
) -> pd.DataFrame:
    """Read the collated summary and write Table 1 (:func:`table_timing`; :func:`table_timing_paper` if asked)."""
    table = table_timing(read_tsv(summary_path))
    write_tsv(table, out, sort_by=["dataset", "model", "seed"])
    if paper_out is not None:
        # rows in their order: methods, the unavailable ones, the negative counts
        write_tsv(table_timing_paper(table, unavailable), paper_out, sort_by=[])
    return table


def significant_overlap(per_model: pd.DataFrame, comparisons: pd.DataFrame) -> pd.DataFrame:
    """Table 2's overlap on the pairs whose MR order is significant in the paired test over test triples.

    Two models' MR order on the same test queries is the order of their AMRI (both share E[MR]), which
    ``tables/model_comparisons.tsv`` tests (metric ``amri``, split ``test``: paired sign-flip test per test triple,
    Holm within the dataset); a pair counts when that difference is significant, and is shared when the mean posterior orders it the
    same way. A pair the comparisons table lacks counts as not significant.

    :param per_model: the per-model part of :func:`table_comparison` (``dataset, seed, model, mean_posterior``)
    :param comparisons: ``tables/model_comparisons.tsv``
    :return: per dataset and seed: ``num_significant, num_shared_significant, overlap_significant``
    """
    amri = comparisons[(comparisons["metric"] == "amri") & (comparisons["split"] == "test")]
    significant = amri[amri["significant"].astype(str).str.lower() == "true"]
    better = {
        (str(r.dataset), int(r.seed), str(r.model_a), str(r.model_b)): float(np.sign(r.difference))
        for r in significant.itertuples(index=False)
    }
    rows = []
    for (dataset, seed), group in per_model.groupby(["dataset", "seed"], sort=True):
        posterior = group.set_index("model")["mean_posterior"].astype(float)
        counted = shared = 0
        for a, b in combinations(sorted(posterior.index), 2):
            sign = better.get((str(dataset), int(seed), str(a), str(b)))
            if sign is None:
                continue
            counted += 1
            shared += int(np.sign(posterior[a] - posterior[b]) == sign)
        rows.append((dataset, seed, counted, shared, shared / counted if counted else float("nan")))
    return pd.DataFrame(
        rows, columns=["dataset", "seed", "num_significant", "num_shared_significant", "overlap_significant"]
    )


def write_table_comparison(
    summary_path: str | os.PathLike,
    assessment_path: str | os.PathLike,
    outputs: Mapping[str, str | os.PathLike],
    unavailable: Sequence[str] = (),
    ranks_paths: Sequence[str | os.PathLike] = (),
    uncertainty: Mapping[str, float] | None = None,
    run_files: Mapping[str, Sequence[str | os.PathLike]] | None = None,
    rank_type: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read the collated tables and write both parts of Table 2 (:func:`table_comparison`; the paper's layout,
    :func:`table_overlap_paper`, if asked). With the studied models' test ranks (``ranks_paths``,
    ``.../{dataset}/{model}/{seed}/test.parquet``) and the config's ``uncertainty`` section, the overlap table also
    counts the pairs whose MR order is significant (:func:`significant_overlap`; the paired tests of
    :func:`kgeval.uncertainty.model_comparisons.model_comparisons`, Holm over the studied models' pairs). With the
    S5 runs' files (``run_files``: ``positives`` and ``triple_sums`` -> every run's ``positives.parquet`` and
    ``triple_sums.parquet``) and ``studies.s5.rank_type``, it gives the overlap's percentile interval over paired
    resamples of the test triples (:func:`kgeval.studies.s5.overlap.overlap_intervals`: ``overlap_low,
    overlap_high, overlap_resamples``).

    :param outputs: the path of each table: ``comparison`` and ``overlap``, and ``paper`` (optional) for
        :func:`table_overlap_paper`
    """
    per_model, overlap = table_comparison(read_tsv(summary_path), read_tsv(assessment_path))
    if (ranks_paths or run_files) and uncertainty is None:
        raise ValueError("write_table_comparison: ranks or triple sums given without the uncertainty settings")
    if ranks_paths:
        # imported here: the comparisons load SciPy, which importing this module must not (tests/test_imports.py)
        from kgeval.uncertainty.model_comparisons import model_comparisons_table

        comparisons = model_comparisons_table(ranks_paths, BootstrapSettings.from_config(uncertainty))
        extra = significant_overlap(per_model, comparisons)
        overlap = overlap.merge(extra, on=["dataset", "seed"], how="left")
    if run_files:
        if rank_type is None or not {"positives", "triple_sums"} <= set(run_files):
            raise ValueError("write_table_comparison: run_files need positives and triple_sums, and the rank_type")
        bootstrap = BootstrapSettings.from_config(uncertainty)
        intervals = overlap_intervals(
            per_model, run_files["positives"], run_files["triple_sums"], rank_type, bootstrap
        )
        overlap = overlap.merge(intervals, on=["dataset", "seed"], how="left")
    write_tsv(per_model, outputs["comparison"], sort_by=["dataset", "seed", "position_mr", "model"])
    write_tsv(overlap, outputs["overlap"], sort_by=["dataset", "seed"])
    if outputs.get("paper") is not None:
        write_tsv(table_overlap_paper(per_model, overlap, unavailable), outputs["paper"], sort_by=[])
    return per_model, overlap
