"""S5's tables across models: MR', the overlap of two orders, Table 1 and Table 2 (also in the paper's layout)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s5.tables import (
    NOT_AVAILABLE,
    comparison_overlap,
    scaled_mr,
    table_comparison,
    table_overlap_paper,
    table_timing,
    table_timing_paper,
)
from s5_samples import synthetic_tables


def test_scaled_mr_and_overlap():
    mr = pd.Series({"a": 10.0, "b": 20.0, "c": 30.0})
    np.testing.assert_allclose(scaled_mr(mr), [1.0, 0.5, 0.0])
    assert (scaled_mr(pd.Series({"a": 3.0, "b": 3.0})) == 1.0).all()
    # orders a > b > c and a > c > b share (a, b) and (a, c): 2 of 3 comparisons
    first = pd.Series({"a": 1.0, "b": 0.5, "c": 0.0})
    second = pd.Series({"a": 0.9, "b": 0.1, "c": 0.2})
    assert comparison_overlap(first, second) == (2, 3)
    # a tie orders nothing
    assert comparison_overlap(first, pd.Series({"a": 0.9, "b": 0.9, "c": 0.1})) == (2, 3)
    assert comparison_overlap(first, first) == (3, 3)


def test_table_comparison_orders_models():
    assessment, summary = synthetic_tables()
    per_model, overlap = table_comparison(summary, assessment)
    assert len(per_model) == 6 and list(overlap["num_pairs"]) == [3, 3]
    for (dataset, _), group in per_model.groupby(["dataset", "seed"]):
        best = group.loc[group["mr"].idxmin()]
        assert best["mr_scaled"] == 1.0 and best["position_mr"] == 1
        selected = assessment[
            (assessment["dataset"] == dataset)
            & assessment["selected"]
            & (assessment["strategy"] == "lcwa")
            & (assessment["metric"] == "mean_posterior")
        ]
        np.testing.assert_allclose(
            group.set_index("model")["mean_posterior"].sort_index(),
            selected.set_index("model")["value"].sort_index(),
        )
        shared, pairs = comparison_overlap(
            group.set_index("model")["mr_scaled"], group.set_index("model")["mean_posterior"]
        )
        assert overlap[overlap["dataset"] == dataset]["overlap"].item() == pytest.approx(shared / pairs)


def test_table_timing_is_wide():
    _, summary = synthetic_tables()
    with pytest.raises(KeyError):
        table_timing(summary)  # the synthetic summary lacks most timings: a missing column is an error
    full = summary.copy()
    extra = []
    for (dataset, model, cls, seed), _ in summary.groupby(["dataset", "model", "model_class", "seed"]):
        for metric in (
            "t_a_end_to_end",
            "pct_delta_t_end_to_end",
            "t_a_all_fits",
            "pct_delta_t_all_fits",
            "t_score",
            "t_fit_selected",
            "t_fit_all",
            "t_fit_isotonic",
            "t_fit_platt",
            "t_select",
            "t_posteriors",
            "num_entities",
            "num_valid",
            "num_test",
            "num_valid_negatives",
            "num_test_negatives_lcwa",
        ):
            extra.append((dataset, model, cls, seed, metric, 1.0))
    full = pd.concat([full, pd.DataFrame(extra, columns=summary.columns)], ignore_index=True)
    table = table_timing(full)
    assert len(table) == 6 and (table["pct_delta_t"] == -75.0).all()
    # the parts of t_A and the timer's resolution are columns; NaN for summaries written before them
    assert {"t_score", "t_stats", "t_fit_selected", "t_posteriors", "timer_resolution"} <= set(table.columns)
    assert table["t_stats"].isna().all()
    with_stats = table_timing(pd.concat([full, full[full["metric"] == "t_score"].assign(metric="t_stats")]))
    assert (with_stats["t_stats"] == 1.0).all()
    paper = table_timing_paper(table, unavailable=["HAKE", "RotPro"])
    datasets = sorted(table["dataset"].unique())
    assert list(paper.columns[:3]) == ["method", f"{datasets[0]} t_A", f"{datasets[0]} %dt"]
    methods = table["model_class"].nunique()
    assert len(paper) == methods + 3 and (paper[f"{datasets[0]} %dt"][:methods] == -75.0).all()
    # the paper's methods PyKEEN lacks are rows that say so, without values
    missing = paper[paper["method"].isin(["HAKE", "RotPro"])]
    assert list(missing["note"]) == [NOT_AVAILABLE] * 2 and missing[f"{datasets[0]} %dt"].isna().all()
    # the last row counts the test negatives per strategy
    assert paper.iloc[-1]["method"] == "test negatives" and paper.iloc[-1][f"{datasets[0]} t_A"] == "lcwa 1"


def test_table2_in_the_papers_layout():
    assessment, summary = synthetic_tables()
    counts = []
    for (dataset, model, cls, seed), _ in summary.groupby(["dataset", "model", "model_class", "seed"]):
        for strategy, value in (("lcwa", 1000.0), ("gb", 0.0 if dataset == "d1" else 10.0), ("tc", 500.0)):
            counts.append((dataset, model, cls, seed, f"num_test_negatives_{strategy}", value))
    summary = pd.concat([summary, pd.DataFrame(counts, columns=summary.columns)], ignore_index=True)
    per_model, overlap = table_comparison(summary, assessment)
    assert (per_model[per_model["dataset"] == "d1"]["num_test_negatives_gb"] == 0).all()
    paper = table_overlap_paper(per_model, overlap, unavailable=["HAKE", "RotPro", "TransE"])
    d1 = paper[paper["dataset"] == "d1"]
    # per dataset: the MR' order, the y_bar order, the methods that cannot run (TransE ran, so it is not listed)
    assert list(d1["sorted_by"]) == ["MR'", "y_bar", "not available"]
    assert d1.iloc[2]["sorted"] == f"HA (HAKE), RP (RotPro): {NOT_AVAILABLE}"
    group = per_model[per_model["dataset"] == "d1"].sort_values("mr")
    expected = ", ".join(f"{a} ({v:.2f})" for a, v in zip(group["abbreviation"], group["mr_scaled"]))
    assert d1.iloc[0]["sorted"] == expected and d1.iloc[0]["sorted"].split(" (")[0] == group.iloc[0]["abbreviation"]
    values = [float(part.split("(")[1].rstrip(")")) for part in d1.iloc[1]["sorted"].split(", ")]
    assert values == sorted(values, reverse=True)
    share = overlap[overlap["dataset"] == "d1"]["overlap"].item()
    assert d1.iloc[0]["overlap"] == f"{100 * share:.0f}%" and d1.iloc[1]["overlap"] == ""
    # an empty GB is visible
    assert d1.iloc[0]["negatives"] == "lcwa 1,000; gb 0; tc 500"


def test_significant_overlap_counts_only_significant_mr_orders():
    from kgeval.studies.s5.tables import significant_overlap

    per_model = pd.DataFrame(
        {"dataset": "d", "seed": 0, "model": ["a", "b", "c"], "mean_posterior": [0.9, 0.5, 0.1]}
    )
    comparisons = pd.DataFrame(
        [
            # a beats b significantly, the posterior agrees; a vs c not significant; c beats b, the posterior disagrees
            ("d", "test", 0, "amri", "a", "b", 0.2, True),
            ("d", "test", 0, "amri", "a", "c", 0.1, False),
            ("d", "test", 0, "amri", "b", "c", -0.3, True),
            ("d", "test", 0, "mrr", "a", "c", 0.1, True),  # another metric: ignored
            ("d", "valid", 0, "amri", "a", "c", 0.1, True),  # another split: ignored
        ],
        columns=["dataset", "split", "seed", "metric", "model_a", "model_b", "difference", "significant"],
    )
    row = significant_overlap(per_model, comparisons).iloc[0]
    assert (row.num_significant, row.num_shared_significant, row.overlap_significant) == (2, 1, 0.5)
