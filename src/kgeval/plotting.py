"""Figure helpers shared by every study: atomic PDF+PNG saving, a house style, stable colours and markers.

Usage::

    from kgeval.plotting import new_figure, save_figure, category_colors, category_markers

    fig, axes = new_figure(1, 3, width=12, height=4)
    ...
    save_figure(fig, "results/s2/figures/x.pdf", "results/s2/figures/x.png")
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")  # no display on the pipeline's machines; must precede pyplot

import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from kgeval.io import atomic_path  # noqa: E402

__all__ = [
    "MARKERS",
    "apply_style",
    "new_figure",
    "save_figure",
    "category_colors",
    "category_markers",
    "log_axis",
    "matrix_panel",
]

#: marker cycle for categorical series (models, methods); filled shapes that stay distinct in print
MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")

_STYLE = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "pdf.fonttype": 42,  # embed TrueType, so text stays editable and searchable in the PDF
}


def apply_style() -> None:
    """Set the house style (font sizes, grid, embedded fonts) for figures made from now on in this process."""
    matplotlib.rcParams.update(_STYLE)


def new_figure(
    nrows: int = 1, ncols: int = 1, width: float = 4.0, height: float = 3.2, **kwargs
) -> tuple[Figure, np.ndarray]:
    """A figure in the house style with a 2-d array of axes (always 2-d, even for one panel).

    :param width: width of one panel in inches
    :param height: height of one panel in inches
    :param kwargs: passed to :func:`matplotlib.pyplot.subplots`
    :return: the figure and axes of shape (nrows, ncols)
    """
    apply_style()
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False, layout="constrained", **kwargs
    )
    return fig, axes


def save_figure(
    fig: Figure, pdf_path: str | os.PathLike, png_path: str | os.PathLike | None = None, dpi: float | None = None
) -> None:
    """Save a figure as PDF and PNG (each written atomically), then close it.

    :param pdf_path: destination of the PDF
    :param png_path: destination of the PNG; defaults to ``pdf_path`` with suffix ``.png``
    :param dpi: resolution of the PNG; ``None`` keeps matplotlib's ``savefig.dpi`` (150 under :func:`apply_style`)
    """
    if png_path is None:
        png_path = os.path.splitext(os.fspath(pdf_path))[0] + ".png"
    for path, fmt in ((pdf_path, "pdf"), (png_path, "png")):
        with atomic_path(path) as tmp:
            # fixed metadata keeps the PDF byte-identical between runs
            metadata = {"CreationDate": None} if fmt == "pdf" else {"Software": None}
            # "tight" also keeps legends placed outside the axes (bbox_to_anchor) inside the image
            kwargs = {} if dpi is None else {"dpi": dpi}
            fig.savefig(tmp, format=fmt, bbox_inches="tight", metadata=metadata, **kwargs)
    plt.close(fig)


def category_colors(categories: Sequence[str], palette: str = "tab10") -> dict[str, tuple]:
    """One colour per category, in the given order (so the same order gives the same colours in every figure)."""
    cmap = matplotlib.colormaps[palette if len(categories) <= 10 else "tab20"]
    return {c: cmap(i % cmap.N) for i, c in enumerate(categories)}


def category_markers(categories: Sequence[str]) -> dict[str, str]:
    """One marker per category, in the given order."""
    return {c: MARKERS[i % len(MARKERS)] for i, c in enumerate(categories)}


def log_axis(ax: Axes, axis: str = "x", values: np.ndarray | None = None, plain: bool = True) -> None:
    """Use a log scale on ``axis`` if every given value is positive (otherwise keep it linear).

    :param plain: label ticks as plain numbers (``20``, ``300``) instead of powers of ten
    """
    if values is not None and not np.all(np.asarray(values)[np.isfinite(values)] > 0):
        return
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    if plain:
        target = ax.xaxis if axis == "x" else ax.yaxis
        target.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        # minor ticks get plain labels only where the axis spans too little for major ones (matplotlib's thresholds)
        target.set_minor_formatter(matplotlib.ticker.LogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.5)))


def matrix_panel(
    ax: Axes,
    matrix: np.ndarray,
    labels: Sequence[str],
    marks: np.ndarray | None = None,
    cmap: str = "RdBu",
    colorbar_label: str = "difference (row - column)",
    max_annotated: int = 6,
) -> None:
    """A square matrix as a heat map centred on zero with a colour bar.

    With ``marks``, only the marked cells are coloured (e.g. differences significant after a correction) and the others
    stay grey; up to ``max_annotated`` labels, every cell also shows its value (``*`` where marked).

    :param matrix: shape: (m, m); NaN cells (e.g. the diagonal) stay grey
    :param labels: the m row (= column) labels
    :param marks: shape: (m, m) booleans, e.g. significant differences
    """
    values = np.asarray(matrix, dtype=float)
    shown = values if marks is None else np.where(np.asarray(marks, dtype=bool), values, np.nan)
    finite = np.abs(values[np.isfinite(values)])
    limit = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    ax.set_facecolor("0.88")
    image = ax.imshow(np.ma.masked_invalid(shown), cmap=cmap, vmin=-limit, vmax=limit)
    ax.figure.colorbar(image, ax=ax, shrink=0.8, label=colorbar_label)
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
    ax.set_yticks(range(len(labels)), labels)
    ax.grid(False)
    if len(labels) > max_annotated:
        return
    for (i, j), value in np.ndenumerate(values):
        if np.isfinite(value):
            star = "*" if marks is not None and marks[i, j] else ""
            ax.text(j, i, f"{value:.3g}{star}", ha="center", va="center", fontsize=7)
