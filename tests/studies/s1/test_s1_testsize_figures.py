"""S1 test-size figure: the lines, bands, labels and scales of each panel, read back from matplotlib."""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s1.testsize_figures import plot_testsize, plot_testsize_to_files

NUM_TESTS = (400, 100, 200)  # deliberately not sorted
SEED_VALUES = {0: 1.0, 1: 3.0, 2: 8.0}  # per seed an offset: mean 4, min 1, max 8


def _value(metric: str, num_train: int, num_test: int, seed: int) -> float:
    base = {"mr": 0.1 * num_test, "hits@1": 0.5, "amr": 0.4}[metric]
    return base + num_train + (SEED_VALUES[seed] if metric != "hits@1" else SEED_VALUES[seed] / 100)


@pytest.fixture
def sweep() -> pd.DataFrame:
    rows = []
    for metric, num_train, num_test, seed in itertools.product(("mr", "hits@1", "amr"), (20, 0), NUM_TESTS, (0, 1, 2)):
        rows.append((num_train, seed, num_test, "both", "realistic", metric, _value(metric, num_train, num_test, seed)))
        rows.append((num_train, seed, num_test, "left", "realistic", metric, -5.0))  # other side: not drawn
        rows.append((num_train, seed, num_test, "both", "optimistic", metric, -5.0))  # other rank type: not drawn
    return pd.DataFrame(rows, columns=["num_train", "seed", "num_test", "side", "rank_type", "metric", "value"])


def test_panels_lines_bands_labels_and_scales(sweep):
    fig = plot_testsize(sweep, ["mr", "hits@1", "amr"], title="sweep")
    try:
        axes = fig.axes
        assert len(axes) == 3 and fig._suptitle.get_text() == "sweep"
        for ax, metric, label in zip(axes, ("mr", "hits@1", "amr"), ("MR", "Hits@1", "AMR")):
            assert ax.get_xlabel() == "number of test alignments" and ax.get_ylabel() == label
            assert ax.get_yscale() == ("linear" if metric == "hits@1" else "log")
            lines = ax.get_lines()
            floor = ["floor 2/(t+1)"] if metric == "amr" else []
            assert [line.get_label() for line in lines] == ["0", "20", *floor]  # one line per #train, ascending
            if floor:  # a perfect aligner's AMR at each test size
                x, y = lines[-1].get_data()
                np.testing.assert_allclose(y, 2 / (np.asarray(sorted(NUM_TESTS), dtype=float) + 1))
            for line, num_train in zip(lines, (0, 20)):
                x, y = line.get_data()
                np.testing.assert_array_equal(x, sorted(NUM_TESTS))
                # the mean over the three seeds
                want = [np.mean([_value(metric, num_train, t, s) for s in SEED_VALUES]) for t in sorted(NUM_TESTS)]
                np.testing.assert_allclose(y, want)
            # the shaded band of each line spans the seeds' minimum to maximum
            assert len(ax.collections) == 2
            for band, num_train in zip(ax.collections, (0, 20)):
                vertices = band.get_paths()[0].vertices
                for t in NUM_TESTS:
                    at = vertices[np.isclose(vertices[:, 0], t), 1]
                    values = [_value(metric, num_train, t, s) for s in SEED_VALUES]
                    assert at.min() == pytest.approx(min(values)) and at.max() == pytest.approx(max(values))
        legend = fig.legends[0]
        assert legend.get_title().get_text() == "#train"
        assert [t.get_text() for t in legend.get_texts()] == ["0", "20", "floor 2/(t+1)"]
    finally:
        plt.close(fig)


def test_log_scale_only_for_positive_values_and_other_selections(sweep):
    sweep.loc[(sweep["metric"] == "mr") & (sweep["side"] == "both"), "value"] -= 100.0  # some MR values <= 0
    fig = plot_testsize(sweep, ["mr", "amr"])
    try:
        assert [ax.get_yscale() for ax in fig.axes] == ["linear", "log"]
    finally:
        plt.close(fig)
    fig = plot_testsize(sweep, ["hits@1"], side="left")
    try:
        for line in fig.axes[0].get_lines():
            np.testing.assert_array_equal(line.get_data()[1], -5.0)
    finally:
        plt.close(fig)
    with pytest.raises(ValueError, match="no values of metric 'mrr'"):
        plot_testsize(sweep, ["mr", "mrr"])


def test_plot_to_files(sweep, tmp_path):
    sweep.to_csv(tmp_path / "sweep.tsv", sep="\t", index=False)
    plot_testsize_to_files(tmp_path / "sweep.tsv", tmp_path / "f.pdf", tmp_path / "f.png", ["mr"])
    assert (tmp_path / "f.pdf").read_bytes()[:4] == b"%PDF"
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.pdf", "f.png", "sweep.tsv"]  # no temporary left
