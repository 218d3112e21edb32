"""S1 figures of the rank types and the permutation study: what each panel draws, read back from matplotlib."""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection, PathCollection

from kgeval.studies.s1.rank_type_figures import (
    plot_permutations,
    plot_rank_types,
    write_permutations_figure,
    write_rank_types_figure,
)

RANK_TYPES = ("optimistic", "realistic", "pessimistic", "nondeterministic")


def _points(ax) -> dict[int, list[float]]:
    """The scatter points of a panel, grouped by the nearest integer x (the category they are drawn at)."""
    out: dict[int, list[float]] = {}
    for collection in ax.collections:
        if isinstance(collection, PathCollection):
            for x, y in collection.get_offsets():
                out.setdefault(int(round(x)), []).append(float(y))
    return out


def _bars(ax) -> dict[int, tuple[float, float]]:
    """The vertical spread bars of a panel: x -> (low, high)."""
    out = {}
    for collection in ax.collections:
        if isinstance(collection, LineCollection):
            for segment in collection.get_segments():
                (x0, y0), (x1, y1) = segment
                assert x0 == x1
                out[int(round(x0))] = (min(y0, y1), max(y0, y1))
    return out


@pytest.fixture
def rank_types():
    """Two datasets (d2 first), two models (listed b before a), MR and MRR under the four rank types."""
    values = {
        ("d2", "b", "mr"): (2.0, 5.0, 8.0, 4.0),
        ("d2", "a", "mr"): (3.0, 3.0, 3.0, 3.0),
        ("d2", "b", "mrr"): (0.5, 0.3, 0.2, 0.25),
        ("d2", "a", "mrr"): (0.4, 0.4, 0.4, 0.4),
        ("d1", "b", "mr"): (10.0, 20.0, 30.0, 12.0),
        ("d1", "a", "mr"): (1.5, 2.5, 3.5, 2.0),
        ("d1", "b", "mrr"): (0.9, 0.6, 0.3, 0.7),
        ("d1", "a", "mrr"): (0.8, 0.7, 0.6, 0.65),
    }
    rows = []
    for (dataset, model, metric), vs in values.items():
        rows.append({"dataset": dataset, "model": model, "seed": 0, "split": "test", "side": "both",
                     "metric": metric, **dict(zip(RANK_TYPES, vs))})
        # another side and split that the figure must not draw
        rows.append({"dataset": dataset, "model": model, "seed": 0, "split": "valid", "side": "both",
                     "metric": metric, **dict(zip(RANK_TYPES, [99.0] * 4))})
    return pd.DataFrame(rows), values


@pytest.fixture
def reference():
    rows = []
    for dataset, metric in itertools.product(("d1", "d2"), ("mr", "mrr")):
        for rank_type, value in zip(RANK_TYPES, (1.0, 7.0, 13.0, 6.0) if metric == "mr" else (1.0, 0.3, 0.08, 0.2)):
            rows.append((dataset, "test", "both", "constant", rank_type, metric, value))
            rows.append((dataset, "test", "both", "random", rank_type, metric, 7.5 if metric == "mr" else 0.25))
    return pd.DataFrame(rows, columns=["dataset", "split", "side", "scorer", "rank_type", "metric", "value"])


def test_rank_types_figure_panels_values_and_scales(rank_types, reference):
    table, values = rank_types
    fig = plot_rank_types(table, reference, "test", "both", ["mr", "mrr"])
    try:
        axes = np.array(fig.axes[:4]).reshape(2, 2)
        for i, dataset in enumerate(("d2", "d1")):  # datasets in table order
            for j, (metric, label) in enumerate((("mr", "MR"), ("mrr", "MRR"))):
                ax = axes[i, j]
                assert ax.get_title() == f"{dataset}: {label}" and ax.get_ylabel() == label
                assert ax.get_yscale() == ("log" if metric == "mr" else "linear")
                ticks = [t.get_text() for t in ax.get_xticklabels()]
                assert ticks == ["a", "b", "constant scorer", "random scorer"]  # models sorted, references last
                points, bars = _points(ax), _bars(ax)
                for x, model in enumerate(("a", "b")):
                    want = values[(dataset, model, metric)]
                    assert sorted(points[x]) == sorted(want)  # the four rank types, nothing from the valid split
                    assert bars[x] == (min(want), max(want))
                ref = reference[(reference["dataset"] == dataset) & (reference["metric"] == metric)]
                for x, scorer in ((2, "constant"), (3, "random")):
                    want = ref.loc[ref["scorer"] == scorer, "value"].to_numpy()
                    assert sorted(points[x]) == sorted(want)
                assert bars[3][0] == bars[3][1]  # the random scorer has no spread
        spread = max((max(v) - min(v)) / v[1] for v in values.values())  # d2/b MR: (8 - 2) / 5
        assert f"differ by at most {spread:.1g} (relative), visibly" in fig._suptitle.get_text()
        legend = fig.legends[0]
        assert [t.get_text() for t in legend.get_texts()] == ["optimistic", "realistic", "pessimistic",
                                                              "non-deterministic"]
    finally:
        plt.close(fig)


def test_a_log_axis_over_four_decades_keeps_its_tick_labels(rank_types, reference):
    """MR from 1 (the constant scorer's optimistic rank) to 14,000 (a random scorer on FB15k-237): the axis shows
    labelled ticks, decades only."""
    table, _ = rank_types
    wide = reference.copy()
    wide.loc[(wide["metric"] == "mr") & (wide["scorer"] == "random"), "value"] = 14000.0
    fig = plot_rank_types(table, wide, "test", "both", ["mr"])
    try:
        fig.canvas.draw()
        for ax in fig.axes[:2]:
            low, high = ax.get_ylim()
            shown = [t for t in ax.get_yticks() if low <= t <= high]
            assert shown == [1.0, 10.0, 100.0, 1000.0, 10000.0], shown
            assert all(label.get_text() for label in ax.get_yticklabels() if low <= label.get_position()[1] <= high)
    finally:
        plt.close(fig)


def test_rank_types_figure_without_reference_and_bad_selection(rank_types):
    table, values = rank_types
    fig = plot_rank_types(table, None, "test", "both", ["mrr"])
    try:
        assert len(fig.axes) == 2
        ax = fig.axes[0]
        assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b"]
        assert sorted(_points(ax)[1]) == sorted(values[("d2", "b", "mrr")])
    finally:
        plt.close(fig)
    with pytest.raises(ValueError, match="no rows with split = 'train'"):
        plot_rank_types(table, None, "train", "both", ["mr"])
    with pytest.raises(ValueError, match="no rows with side = 'head'"):
        plot_rank_types(table, None, "test", "head", ["mr"])


@pytest.fixture
def permutations():
    rows = []
    changes = {
        ("reference", "random"): (0.0, 0.0),
        ("reference", "constant"): (0.05, -0.02),
        ("model", "zeta"): (0.01, 0.0),
        ("model", "alpha"): (-0.03, 0.02),
    }
    for (kind, scorer), (c1, c2) in changes.items():
        for metric in ("mrr", "hits@1"):
            scale = 1.0 if metric == "mrr" else 2.0
            rows.append(("d", kind, scorer, 0, "test", "both", "nondeterministic", metric, "entity_id", 0.3, 0.0))
            rows.append(("d", kind, scorer, 0, "test", "both", "nondeterministic", metric, "permutation_1", 0.3,
                         scale * c1))
            rows.append(("d", kind, scorer, 0, "test", "both", "nondeterministic", metric, "permutation_2", 0.3,
                         scale * c2))
            rows.append(("d", kind, scorer, 0, "test", "both", "realistic", metric, "permutation_1", 0.3, 9.0))
    columns = ["dataset", "kind", "scorer", "seed", "split", "side", "rank_type", "metric", "order", "value", "change"]
    return pd.DataFrame(rows, columns=columns), changes


def test_permutations_figure_draws_the_changes(permutations):
    table, changes = permutations
    fig = plot_permutations(table, "test", "both", ["mrr", "hits@1"])
    try:
        assert len(fig.axes) == 2
        order = [("reference", "constant"), ("reference", "random"), ("model", "alpha"), ("model", "zeta")]
        for ax, (metric, label, scale) in zip(fig.axes, (("mrr", "MRR", 1.0), ("hits@1", "Hits@1", 2.0))):
            assert ax.get_ylabel() == f"change of {label}" and ax.get_title() == f"d: {label}"
            assert ax.get_yscale() == "linear"
            ticks = [t.get_text() for t in ax.get_xticklabels()]
            assert ticks == ["constant scorer", "random scorer", "alpha", "zeta"]
            points = _points(ax)
            for x, key in enumerate(order):
                # one point per permutation; neither the original order nor the realistic rank is drawn
                assert sorted(points[x]) == pytest.approx(sorted(scale * c for c in changes[key]))
        legend = fig.legends[0]
        assert [t.get_text() for t in legend.get_texts()] == ["permutation 1", "permutation 2"]
    finally:
        plt.close(fig)


def test_figure_writers_save_pdf_and_png(rank_types, reference, permutations, tmp_path):
    table, _ = rank_types
    table.to_csv(tmp_path / "rank_types.tsv", sep="\t", index=False)
    reference.to_csv(tmp_path / "reference.tsv", sep="\t", index=False)
    write_rank_types_figure(tmp_path / "rank_types.tsv", tmp_path / "reference.tsv", tmp_path / "r.pdf",
                            tmp_path / "r.png", "test", "both", ["mr"])
    permutations[0].to_csv(tmp_path / "permutations.tsv", sep="\t", index=False)
    write_permutations_figure(tmp_path / "permutations.tsv", tmp_path / "p.pdf", tmp_path / "p.png", "test", "both",
                              ["mrr"])
    for name in ("r", "p"):
        assert (tmp_path / f"{name}.pdf").read_bytes()[:4] == b"%PDF"
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
