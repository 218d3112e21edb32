"""S3 per-split metrics against hand computation and the wide tables (the paper's Tables 2 and 3) on tiny data (the
file steps: test_s3_jobs.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s3.tables import parse_run_path, split_metrics, table2, table3, wide_table


def _ranks(rows):
    """Ranks table from (id1, id2, side, rank_realistic, num_candidates); other rank types equal the realistic."""
    table = pd.DataFrame(rows, columns=["id1", "id2", "side", "rank_realistic", "num_candidates"])
    for t in ("optimistic", "pessimistic", "nondeterministic"):
        table[f"rank_{t}"] = np.floor(table["rank_realistic"]).astype(int) if t != "pessimistic" else np.ceil(
            table["rank_realistic"]
        ).astype(int)
    return table


FEATURES = pd.DataFrame(
    {
        "id1": [0, 1, 2, 3],
        "id2": [10, 11, 12, 13],
        "name_split": ["same", "same", "close", "different"],
        "attr_split": ["large", "small", "small", "medium"],
    }
)


def test_split_metrics_by_hand():
    ranks = _ranks(
        [
            (0, 10, "left", 1, 4),
            (1, 11, "left", 3, 4),
            (2, 12, "left", 2, 4),
            (3, 13, "left", 1.5, 4),
            (0, 10, "right", 1, 4),
            (1, 11, "right", 1, 4),
            (2, 12, "right", 4, 4),
            (3, 13, "right", 2, 4),
        ]
    )
    table = split_metrics(ranks, FEATURES)
    realistic = table[table["rank_type"] == "realistic"].set_index(["split_kind", "split", "side", "metric"])["value"]

    def amri(ranks_, n):
        # 1 - (MR - 1) / (E[MR] - 1), E[MR] = (N + 1) / 2 for uniform random ranks
        return 1 - (np.mean(ranks_) - 1) / ((n + 1) / 2 - 1)

    assert realistic[("name", "same", "left", "hits@1")] == pytest.approx(0.5)
    assert realistic[("name", "same", "left", "mrr")] == pytest.approx((1 + 1 / 3) / 2)
    assert realistic[("attr", "small", "left", "mr")] == pytest.approx(2.5)
    assert realistic[("attr", "small", "both", "amri")] == pytest.approx(amri([3, 2, 1, 4], 4))
    assert realistic[("all", "all", "left", "hits@5")] == 1.0
    assert realistic[("all", "all", "right", "amri")] == pytest.approx(amri([1, 1, 4, 2], 4))
    sizes = table.drop_duplicates(["split_kind", "split"]).set_index(["split_kind", "split"])["num_test"]
    assert sizes.to_dict() == {
        ("all", "all"): 4,
        ("attr", "large"): 1,
        ("attr", "medium"): 1,
        ("attr", "small"): 2,
        ("name", "close"): 1,
        ("name", "different"): 1,
        ("name", "same"): 2,
    }
    # a ranked pair that is not a reference alignment is an error
    with pytest.raises(ValueError, match="not a reference alignment"):
        split_metrics(_ranks([(0, 11, "left", 1, 4)]), FEATURES)


def test_split_metrics_without_attributes_and_empty_splits():
    features = FEATURES.assign(attr_split=None, name_split=["same", "same", "same", "close"])
    ranks = _ranks([(0, 10, "left", 1, 4), (3, 13, "left", 2, 4)])
    table = split_metrics(ranks, features)
    assert set(table["split_kind"]) == {"all", "name"}
    assert "different" not in set(table["split"])


def _long(rows):
    """A collated long table: (dataset, model, bias, ratio, seed, split, metric, value, num_test)."""
    frame = pd.DataFrame(rows, columns=["dataset", "model", "bias", "train_ratio", "seed", "split", "metric", "value", "num_test"])
    frame["split_kind"] = frame["split"].map(
        lambda s: "all" if s == "all" else ("name" if s in ("same", "close", "different") else "attr")
    )
    return frame.assign(side="left", rank_type="realistic")


def test_wide_tables_mean_over_seeds_and_order():
    long = _long(
        [
            ("d", "m1", "none", 0.2, 0, "same", "hits@1", 0.8, 10),
            ("d", "m1", "none", 0.2, 1, "same", "hits@1", 0.6, 12),
            ("d", "m1", "none", 0.2, 0, "all", "mrr", 0.5, 30),
            ("d", "m1", "both", 0.02, 0, "small", "amri", 0.1, 5),
            ("d", "m0", "both", 0.02, 0, "all", "zmrr", 3.0, 40),
            ("d", "m1", "name", 0.04, 0, "all", "hits@1", 0.3, 35),
        ]
    )
    status = pd.DataFrame(
        [("d", "m1", "attr", 0.2, 0, "skipped", "no attributes")],
        columns=["dataset", "model", "bias", "train_ratio", "seed", "status", "reason"],
    )
    wide = wide_table(long, status)
    row = wide[(wide["model"] == "m1") & (wide["bias"] == "none")].iloc[0]
    assert row["hits@1_same"] == pytest.approx(0.7) and row["n_same"] == 11 and row["num_seeds"] == 2
    assert row["mrr_all"] == 0.5 and np.isnan(row["hits@1_close"])
    skipped = wide[wide["bias"] == "attr"].iloc[0]
    assert skipped["note"] == "skipped: no attributes" and np.isnan(skipped["hits@1_all"])
    t2 = table2(wide, ("none", 0.2), ("both", 0.02), models=["m0", "m1"])
    assert t2[["context", "model"]].values.tolist() == [["ideal", "m1"], ["industrial", "m0"], ["industrial", "m1"]]
    assert t2.columns[:2].tolist() == ["dataset", "context"]
    t3 = table3(wide, models=["m0", "m1"])
    assert t3[["bias", "train_ratio", "model"]].values.tolist() == [
        ["none", 0.2, "m1"],
        ["name", 0.04, "m1"],
        ["attr", 0.2, "m1"],
        ["both", 0.02, "m0"],
        ["both", 0.02, "m1"],
    ]


def test_parse_run_path():
    assert parse_run_path("results/s3/dbp15k_zh_en/runs/gcn_align/both/0.02/3/status.json") == {
        "dataset": "dbp15k_zh_en",
        "model": "gcn_align",
        "bias": "both",
        "train_ratio": 0.02,
        "seed": 3,
    }
    with pytest.raises(ValueError, match="expected a path"):
        parse_run_path("results/s3/x/status.json")


def test_too_small_splits_lists_splits_under_30():
    from kgeval.studies.s3.tables import MIN_SPLIT_SIZE, too_small_splits

    assert MIN_SPLIT_SIZE == 30
    sizes = {"same": 120, "close": 29, "different": 0, "small": float("nan"), "medium": 30, "large": 31, "all": 180}
    assert too_small_splits(sizes) == "close, different"
