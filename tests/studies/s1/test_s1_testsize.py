"""The S1 test-size sweep: slopes, collation, and the file steps end to end on a tiny pair (splits: test_s1_splits.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from kgeval.studies.s1.testsize_figures import plot_testsize_to_files
from kgeval.studies.s1.alignment_runs import TrainingFiles, read_split, train_ea_to_files
from kgeval.studies.s1.testsize import FIGURE_METRICS, SweepFiles, collate_testsize_to_file, evaluate_testsize_to_files, slopes, slopes_to_file
from kgeval.io import read_tsv, write_tsv


def test_slopes_recover_a_linear_trend():
    rows = []
    for seed in (0, 1):
        for num_test in (100, 200, 300, 400):
            rows.append((5, seed, num_test, "both", "realistic", "mr", 2.0 + 0.5 * num_test + seed))  # seeds offset
            rows.append((5, seed, num_test, "both", "realistic", "amr", 0.3))
            rows.append((5, seed, num_test, "left", "realistic", "mr", -1.0))  # other side: ignored
    table = pd.DataFrame(rows, columns=["num_train", "seed", "num_test", "side", "rank_type", "metric", "value"])
    result = slopes(table).set_index("metric")
    assert result.loc["mr", "slope"] == pytest.approx(0.5)
    assert result.loc["mr", "intercept"] == pytest.approx(2.5)
    assert result.loc["amr", "slope"] == pytest.approx(0.0, abs=1e-12)
    assert result.loc["mr", "relative_change"] == pytest.approx((202.5 - 52.5) / 52.5)


def test_collate_reads_num_train_and_seed_from_paths(tmp_path):
    table = pd.DataFrame(
        {"num_test": [10], "side": ["both"], "rank_type": ["realistic"], "metric": ["mr"], "value": [1.5]}
    )
    paths = []
    for k, seed in ((0, 1), (20, 0)):
        path = tmp_path / "umls" / str(k) / str(seed) / "metrics.tsv"
        write_tsv(table, path)
        paths.append(path)
    collated = collate_testsize_to_file(paths, tmp_path / "all.tsv")
    assert collated[["num_train", "seed"]].values.tolist() == [[0, 1], [20, 0]]
    with pytest.raises(ValueError, match="num_train"):
        collate_testsize_to_file([tmp_path / "nope.tsv"], tmp_path / "x.tsv")


@pytest.mark.slow
def test_sweep_steps_end_to_end(tmp_path):
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        _end_to_end(tmp_path)
    finally:
        torch.set_num_threads(previous)


def _end_to_end(tmp_path):
    spec = {"source": "two_view", "dataset": "umls", "keep_fraction": 0.5, "seed": 0}
    model = {"num_epochs": 60}
    test_sizes = [20, 40, 80, 200]  # 200 does not fit and is skipped
    metrics_paths = []
    for num_train in (0, 40):
        for seed in (0, 1):
            base = tmp_path / "ea" / str(num_train) / str(seed)
            train_ea_to_files(
                "umls", spec, None, model, num_train, seed,
                TrainingFiles(
                    base / "representations.pt", base / "split.tsv", base / "losses.tsv", base / "config.json",
                    base / "timing.json",
                ),
            )
            train, pool = read_split(base / "split.tsv")
            assert len(train) == num_train and len(pool) == 135 - num_train
            assert len(read_tsv(base / "losses.tsv")) == (60 if num_train else 0)
            out = tmp_path / "s1" / str(num_train) / str(seed)
            table = evaluate_testsize_to_files(
                "umls", spec, None,
                SweepFiles(base / "representations.pt", base / "split.tsv", out / "ranks.parquet", out / "metrics.tsv"),
                test_sizes,
            )
            ranks = pd.read_parquet(out / "ranks.parquet")
            assert sorted(ranks["num_test"].unique()) == [20, 40, 80]
            assert (ranks.groupby("num_test").size() == 2 * ranks.groupby("num_test")["num_test"].first()).all()
            assert (ranks["num_candidates"] == ranks["num_test"]).all()
            assert set(FIGURE_METRICS) <= set(table["metric"])
            metrics_paths.append(out / "metrics.tsv")
    collated = collate_testsize_to_file(metrics_paths, tmp_path / "metrics.tsv")
    value = collated.set_index(["num_train", "seed", "num_test", "side", "rank_type", "metric"])["value"]
    # the trained model beats the untrained one on the largest common test set
    for seed in (0, 1):
        assert value[(40, seed, 80, "both", "realistic", "amr")] < value[(0, seed, 80, "both", "realistic", "amr")]
    result = slopes_to_file(tmp_path / "metrics.tsv", tmp_path / "slopes.tsv").set_index(["metric", "num_train"])
    # MR of the untrained model grows with the candidate set (about (t + 1) / 2 per pair, times its AMR)
    assert result.loc[("mr", 0), "slope"] > 0.2
    figure_metrics = ["mr", "hits@1", "amr"]
    plot_testsize_to_files(tmp_path / "metrics.tsv", tmp_path / "fig.pdf", tmp_path / "fig.png", figure_metrics)
    assert (tmp_path / "fig.pdf").stat().st_size > 0 and (tmp_path / "fig.png").stat().st_size > 0
