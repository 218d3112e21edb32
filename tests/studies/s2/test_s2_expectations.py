"""S2 expectation curves: E and V of each base metric under random ranking, closed form and Monte Carlo, and their
figure."""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
import numpy as np
import pytest

from kgeval.io import read_tsv
from kgeval.metrics import metric_keys
from kgeval.studies.s2.expectations import expectation_curves, plot_expectation_curves, write_expectation_curves


def test_expectation_curves(tmp_path):
    table = expectation_curves(num_candidates=[2, 11, 100], num_ranks=10, num_samples=200, seed=0)
    methods = table.groupby("metric")["method"].apply(set)
    assert methods["mr"] == {"closed_form", "monte_carlo"}
    assert methods["hmr"] == {"monte_carlo"}
    assert set(table["metric"]) == set(metric_keys(["base"]))
    closed_mr = table[(table["metric"] == "mr") & (table["method"] == "closed_form")].set_index("num_candidates")
    for n in (2, 11, 100):
        assert closed_mr.loc[n, "expectation"] == (n + 1) / 2  # E[MR] = (N + 1) / 2
        assert closed_mr.loc[n, "variance"] == pytest.approx((n**2 - 1) / 12 / 10)  # V[MR] = (N^2 - 1) / (12 n)
    # closed forms lie inside the Monte-Carlo intervals (95%: allow a few misses)
    merged = table[table["method"] == "closed_form"].merge(
        table[table["method"] == "monte_carlo"], on=["metric", "num_candidates"], suffixes=("", "_mc")
    )
    inside = (merged["expectation"] >= merged["expectation_low_mc"] - 1e-12) & (
        merged["expectation"] <= merged["expectation_high_mc"] + 1e-12
    )
    assert inside.mean() >= 0.8
    plot_expectation_curves(
        table[table["metric"].isin(["mr", "hmr", "hits@10"])], tmp_path / "e.pdf", tmp_path / "e.png"
    )
    assert (tmp_path / "e.png").stat().st_size > 10_000




def _enumerated(values_of, num_candidates: int, num_ranks: int) -> tuple[float, float]:
    """E and V of a metric over every equally likely rank vector in 1..N (brute force)."""
    values = np.array([values_of(np.array(r, dtype=float))
                       for r in itertools.product(range(1, num_candidates + 1), repeat=num_ranks)])
    return float(values.mean()), float(values.var())


@pytest.mark.parametrize(
    "metric, values_of",
    [
        ("hmr", lambda r: len(r) / np.sum(1.0 / r)),
        ("mrr", lambda r: np.mean(1.0 / r)),
        ("hits@3", lambda r: np.mean(r <= 3)),
        ("medr", lambda r: np.median(r)),
    ],
)
def test_moments_agree_with_enumeration(metric, values_of):
    """4 candidates, 3 ranking tasks: 64 rank vectors. Closed forms are exact; Monte-Carlo estimates lie within 4
    standard errors (the half-width of the 95% interval is 1.96 of them)."""
    table = expectation_curves(num_candidates=[4], num_ranks=3, metrics=[metric], num_samples=4000, seed=1)
    exact_e, exact_v = _enumerated(values_of, 4, 3)
    assert set(table["n_ranks"]) == {3} and set(table["num_candidates"]) == {4}
    for row in table.itertuples():
        if row.method == "closed_form":
            assert (row.expectation, row.variance) == (pytest.approx(exact_e), pytest.approx(exact_v))
            assert row.expectation_low == row.expectation_high == row.expectation
        else:
            se = (row.expectation_high - row.expectation_low) / (2 * 1.959963984540054)
            assert se > 0 and abs(row.expectation - exact_e) <= 4 * se
            se_v = (row.variance_high - row.variance_low) / (2 * 1.959963984540054)
            assert abs(row.variance - exact_v) <= 4 * se_v
    assert "monte_carlo" in set(table["method"])


def test_grid_is_sorted_and_checked():
    table = expectation_curves(num_candidates=[11, 2, 11], num_ranks=4, metrics=["mr"], num_samples=20)
    assert sorted(set(table["num_candidates"])) == [2, 11]
    assert list(table["num_candidates"]) == [2, 2, 11, 11]
    for bad in ([], [0, 5]):
        with pytest.raises(ValueError, match="num_candidates must be integers >= 1"):
            expectation_curves(num_candidates=bad, metrics=["mr"])


def test_write_curves_in_registry_order(tmp_path):
    table = write_expectation_curves(tmp_path / "curves.tsv", num_candidates=[20, 3], num_ranks=5,
                                     metrics=["hits@1", "mr"], num_samples=30)
    back = read_tsv(tmp_path / "curves.tsv")
    keys = list(zip(back["metric"], back["num_candidates"], back["method"]))
    assert keys == [
        ("hits@1", 3, "closed_form"), ("hits@1", 3, "monte_carlo"), ("hits@1", 20, "closed_form"),
        ("hits@1", 20, "monte_carlo"), ("mr", 3, "closed_form"), ("mr", 3, "monte_carlo"),
        ("mr", 20, "closed_form"), ("mr", 20, "monte_carlo"),
    ]
    np.testing.assert_allclose(back["expectation"], table["expectation"])
    closed = back[back["method"] == "closed_form"].set_index(["metric", "num_candidates"])["expectation"]
    assert closed[("hits@1", 20)] == pytest.approx(1 / 20) and closed[("mr", 3)] == pytest.approx(2.0)


def test_figure_axes_are_log_log_and_leave_out_zeros(monkeypatch, tmp_path):
    import kgeval.plotting

    captured = []
    monkeypatch.setattr(kgeval.plotting, "save_figure", lambda fig, pdf, png=None: captured.append(fig))
    table = expectation_curves(num_candidates=[2, 5, 50], num_ranks=6, metrics=["mr", "hits@5", "hmr"], num_samples=50)
    plot_expectation_curves(table, tmp_path / "e.pdf", tmp_path / "e.png", ncols=2)
    fig = captured[0]
    try:
        axes = np.array(fig.axes).reshape(4, 2)  # 3 metrics in blocks of 2 columns: 2 blocks of 2 rows
        assert not axes[2, 1].get_visible() and not axes[3, 1].get_visible()
        cells = {"mr": (0, 0), "hits@5": (0, 1), "hmr": (2, 0)}
        labels = {"mr": "MR", "hits@5": "Hits@5", "hmr": "HMR"}
        for metric, (row, col) in cells.items():
            for offset, (moment, letter) in enumerate((("expectation", "E"), ("variance", "V"))):
                ax = axes[row + offset, col]
                assert ax.get_visible() and ax.get_xscale() == "log" and ax.get_yscale() == "log"
                assert ax.get_title() == f"{letter}[{labels[metric]}]"
                assert ax.get_xlabel() == "number of candidates N" and ax.get_ylabel() == moment
                closed = table[(table["metric"] == metric) & (table["method"] == "closed_form") & (table[moment] > 0)]
                lines = [line for line in ax.get_lines() if line.get_linestyle() == "-"]
                if len(closed):
                    x, y = lines[0].get_data()
                    np.testing.assert_array_equal(x, closed["num_candidates"])
                    np.testing.assert_allclose(y, closed[moment])
                else:
                    assert metric == "hmr" and not lines  # HMR has no closed form
                markers = [line for line in ax.get_lines() if line.get_marker() == "o"]
                mc = table[(table["metric"] == metric) & (table["method"] == "monte_carlo") & (table[moment] > 0)]
                np.testing.assert_allclose(markers[0].get_ydata(), mc[moment])
        # V[Hits@5] is 0 at N = 2 and N = 5 (every rank is a hit): only N = 50 is drawn
        x, _ = [line for line in axes[1, 1].get_lines() if line.get_linestyle() == "-"][0].get_data()
        assert list(x) == [50]
    finally:
        plt.close(fig)
