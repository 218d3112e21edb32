"""kgeval.plotting: the house-style figure, PDF+PNG saving (atomic, closed afterwards), colours, markers, log axes."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_rgba

from kgeval.plotting import MARKERS, apply_style, category_colors, category_markers, log_axis, new_figure, save_figure


def test_new_figure_is_a_grid_of_labelled_panels():
    fig, axes = new_figure(2, 3, width=2.0, height=1.5)
    try:
        assert axes.shape == (2, 3) and len(fig.axes) == 6
        np.testing.assert_allclose(fig.get_size_inches(), [6.0, 3.0])
        axes[1, 2].set_xlabel("rank")
        axes[1, 2].set_ylabel("MRR")
        assert (axes[1, 2].get_xlabel(), axes[1, 2].get_ylabel()) == ("rank", "MRR")
        assert matplotlib.rcParams["pdf.fonttype"] == 42 and matplotlib.rcParams["axes.grid"]
    finally:
        plt.close(fig)
    one_fig, one = new_figure()
    assert one.shape == (1, 1)  # never squeezed
    plt.close(one_fig)


def test_save_figure_writes_pdf_and_png_and_closes(tmp_path):
    fig, axes = new_figure()
    axes[0, 0].plot([1, 2, 3], [3, 1, 2], label="line")
    axes[0, 0].set_xlabel("x label")
    axes[0, 0].set_title("a title")
    save_figure(fig, tmp_path / "sub" / "fig.pdf")
    assert not plt.fignum_exists(fig.number)
    pdf, png = tmp_path / "sub" / "fig.pdf", tmp_path / "sub" / "fig.png"
    assert pdf.read_bytes().startswith(b"%PDF")
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert sorted(p.name for p in pdf.parent.iterdir()) == ["fig.pdf", "fig.png"]  # no temporary files left
    image = plt.imread(png)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100


def test_save_figure_png_resolution(tmp_path):
    """``dpi`` sets the PNG's resolution: twice the dpi, twice the pixels on each side (within the tight bbox's
    rounding); without it, ``savefig.dpi`` applies."""
    sizes = {}
    for dpi in (60, 120, None):
        fig, axes = new_figure()
        axes[0, 0].plot([1, 2, 3], [3, 1, 2])
        axes[0, 0].set_xlabel("x label")
        save_figure(fig, tmp_path / f"{dpi}.pdf", dpi=dpi)
        sizes[dpi] = plt.imread(tmp_path / f"{dpi}.png").shape[:2]
    for side in (0, 1):
        assert abs(sizes[120][side] - 2 * sizes[60][side]) <= 3
    default = matplotlib.rcParams["savefig.dpi"]
    scale = (float(default) if default != "figure" else matplotlib.rcParams["figure.dpi"]) / 60
    assert all(abs(sizes[None][side] - scale * sizes[60][side]) <= 3 for side in (0, 1))


def test_explicit_png_path_and_identical_pdfs(tmp_path):
    def draw():
        fig, axes = new_figure()
        axes[0, 0].plot(np.arange(5), np.arange(5) ** 2)
        axes[0, 0].set_ylabel("y")
        return fig

    save_figure(draw(), tmp_path / "a.pdf", tmp_path / "pngs" / "a.png")
    save_figure(draw(), tmp_path / "b.pdf", tmp_path / "pngs" / "b.png")
    assert (tmp_path / "pngs" / "a.png").exists() and not (tmp_path / "a.png").exists()
    # fixed metadata: the same drawing gives the same bytes
    assert (tmp_path / "a.pdf").read_bytes() == (tmp_path / "b.pdf").read_bytes()


def test_category_colors_are_distinct_and_stable():
    ten = [f"c{i}" for i in range(10)]
    colors = category_colors(ten)
    assert list(colors) == ten
    assert len({to_rgba(c) for c in colors.values()}) == 10
    assert colors == category_colors(ten)
    assert colors["c0"] == matplotlib.colormaps["tab10"](0)
    twenty = [f"c{i}" for i in range(20)]
    assert len({to_rgba(c) for c in category_colors(twenty).values()}) == 20  # tab20 beyond ten categories


def test_category_markers_cycle():
    cats = [f"m{i}" for i in range(len(MARKERS) + 2)]
    markers = category_markers(cats)
    assert [markers[c] for c in cats[: len(MARKERS)]] == list(MARKERS)
    assert len(set(MARKERS)) == len(MARKERS)
    assert markers[cats[len(MARKERS)]] == MARKERS[0]


@pytest.mark.parametrize("axis", ["x", "y"])
def test_log_axis_only_for_positive_values(axis):
    apply_style()
    fig, ax = plt.subplots()
    try:
        scale = ax.get_xscale if axis == "x" else ax.get_yscale
        log_axis(ax, axis, values=np.array([0.0, 1.0, 10.0]))
        assert scale() == "linear"
        log_axis(ax, axis, values=np.array([np.nan, 2.0, 300.0]))  # non-finite values are ignored
        assert scale() == "log"
        target = ax.xaxis if axis == "x" else ax.yaxis
        formatter = target.get_major_formatter()
        assert (formatter(20.0, 0), formatter(300.0, 1)) == ("20", "300")
    finally:
        plt.close(fig)


def test_log_axis_without_values_and_powers_of_ten():
    fig, ax = plt.subplots()
    try:
        log_axis(ax, "y", plain=False)
        assert ax.get_yscale() == "log" and ax.get_xscale() == "linear"
        assert not isinstance(ax.yaxis.get_major_formatter(), matplotlib.ticker.FuncFormatter)
    finally:
        plt.close(fig)
