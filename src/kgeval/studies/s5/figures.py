"""S5's figures: Figs. 1-3 (five-number summaries of the test assessment per method) and the timing figure.

Fig. 1 draws the paper's levels on its panels (:data:`kgeval.studies.s5.claims_levels.LEVELS`: the 0.7-0.9 band of
``R2_w``, ``BS_w <= 0.1``, ``BA >= 0.9``, ``r_xy > 0.55``), which every method's mean (the line of its box) should
meet: the claims of :mod:`kgeval.studies.s5.claims_levels` judge them with intervals."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from kgeval.io import read_tsv, write_tsv
from kgeval.studies.s5.claims_levels import LEVELS

__all__ = [
    "TIMING_READINGS",
    "draw_paper_level",
    "plot_s5_figure",
    "table_timing_figure",
    "plot_s5_timing",
    "plot_s5_platt_spread",
]


_LABELS = {"r2_w": r"$R^2_w$", "bs_w": r"$BS_w$", "ba": "BA", "pearson_r": r"$r_{xy}$", "tpr": "TPR", "tnr": "TNR"}


#: per figure: the metrics (panels) and the groups compared within each model
_FIGURES: dict[str, dict[str, Any]] = {
    "calibration": {
        "metrics": ("r2_w", "bs_w", "ba", "pearson_r"),
        "title": "Best calibration functions, LCWA negatives (test)",
        "levels": True,
    },
    "strategies": {
        "metrics": ("r2_w", "bs_w", "ba"),
        "title": "Best calibration functions: nonsensical (GB+LC) vs plausible (TC) negatives (test)",
    },
    "platt": {
        "metrics": ("r2_w", "bs_w", "ba", "pearson_r"),
        "title": "Platt scaling vs isotonic regression, LCWA negatives (test)",
    },
}


def _figure_data(figure: str, assessment: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Rows of the assessment table a figure shows, with a ``group`` column; and the groups in order."""
    a = assessment.copy()
    a["selected"] = a["selected"].astype(bool)
    if figure == "calibration":
        rows = a[a["selected"] & (a["strategy"] == "lcwa")].assign(group="selected")
        return rows, ["selected"]
    if figure == "strategies":
        rows = a[a["selected"] & a["strategy"].isin(["gb+lc", "tc"])].copy()
        rows["group"] = rows["strategy"].map({"gb+lc": "GB+LC", "tc": "TC"})
        return rows, ["GB+LC", "TC"]
    if figure == "platt":
        # one group per Platt procedure; each distinct function drawn once: the six fits of a procedure that give
        # the same function (same value to 4 decimals in every metric of a run) count once
        rows = a[a["strategy"] == "lcwa"].copy()
        procedure = rows["procedure"] if "procedure" in rows else pd.Series("", index=rows.index)
        rows["group"] = np.where(rows["method"] == "isotonic", "isotonic", "Platt " + procedure.astype(str))
        rows["group"] = rows["group"].str.strip()
        run = [c for c in ("dataset", "model", "seed") if c in rows]
        values = rows.assign(rounded=rows["value"].round(4)).pivot_table(
            index=[*run, "group", "calibrator"], columns="metric", values="rounded", aggfunc="first"
        )
        keep = values.reset_index().drop_duplicates(subset=[*run, "group", *values.columns])["calibrator"]
        keys = values.reset_index().loc[keep.index, [*run, "group", "calibrator"]]
        rows = rows.merge(keys, on=[*run, "group", "calibrator"])
        return rows, sorted(rows["group"].unique(), key=lambda g: (g != "isotonic", g))
    raise ValueError(f"unknown S5 figure {figure!r}; use one of {sorted(_FIGURES)}")


def _five_numbers(values: np.ndarray, label: str) -> dict[str, Any]:
    """The paper's five-number summary as matplotlib ``bxp`` stats: min, Q1, mean (the box's line), Q3, max."""
    q1, q3 = np.quantile(values, [0.25, 0.75])
    return {
        "label": label,
        "whislo": values.min(),
        "q1": q1,
        "med": values.mean(),
        "q3": q3,
        "whishi": values.max(),
        "fliers": [],
    }


def draw_paper_level(ax: Any, metric: str) -> Any:
    """Draw the paper's Fig. 1 level of ``metric`` on ``ax``, labelled for the legend: a band for a range, a dashed
    line for a bound.

    :return: the artist drawn, None for a metric without a level
    """
    level = next((level for level in LEVELS if level.metric == metric), None)
    if level is None:
        return None
    criterion = level.criterion
    label = f"paper ({level.panel}): every mean {criterion.text(_LABELS.get(metric, metric), digits=2)}"
    if criterion.lower is not None and criterion.upper is not None:
        return ax.axhspan(criterion.lower, criterion.upper, color="tab:green", alpha=0.12, zorder=0, label=label)
    bound = criterion.lower if criterion.lower is not None else criterion.upper
    return ax.axhline(bound, color="tab:green", linestyle="--", linewidth=1.2, zorder=1, label=label)


def plot_s5_figure(
    figure: str, assessment_path: str | os.PathLike, pdf: str | os.PathLike, png: str | os.PathLike
) -> None:
    """Figs. 1-3: five-number summaries per link-prediction method, aggregated over datasets and seeds.

    :param figure: ``calibration`` (Fig. 1), ``strategies`` (Fig. 2) or ``platt`` (Fig. 3)
    :param assessment_path: the collated assessment table
    """
    spec = _FIGURES.get(figure)
    if spec is None:
        raise ValueError(f"unknown S5 figure {figure!r}; use one of {sorted(_FIGURES)}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from kgeval.plotting import save_figure

    rows, groups = _figure_data(figure, read_tsv(assessment_path))
    models = sorted(rows["model_class"].unique())
    colours = plt.get_cmap("tab10")
    metrics = spec["metrics"]
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.6 * len(metrics), 3.8), squeeze=False)
    width = 0.8 / len(groups)
    for ax, metric in zip(axes[0], metrics):
        for g, group in enumerate(groups):
            stats, positions, points = [], [], []
            for m, model in enumerate(models):
                values = rows[(rows["model_class"] == model) & (rows["group"] == group) & (rows["metric"] == metric)][
                    "value"
                ].to_numpy(dtype=float)
                values = values[~np.isnan(values)]
                if not len(values):
                    continue
                position = m + (g - (len(groups) - 1) / 2) * width
                stats.append(_five_numbers(values, model))
                positions.append(position)
                points.append((np.full(len(values), position), values))
            if not stats:
                continue
            colour = colours(g)
            ax.bxp(
                stats,
                positions=positions,
                widths=width * 0.8,
                showfliers=False,
                patch_artist=True,
                boxprops={"facecolor": colour, "alpha": 0.45},
                medianprops={"color": "black"},
            )
            for x, y in points:
                ax.scatter(x, y, s=9, color=colour, edgecolor="black", linewidth=0.3, zorder=3)
            ax.plot([], [], color=colour, linewidth=6, alpha=0.45, label=group)
        ax.set_xticks(range(len(models)))
        ax.set_xticklabels(models, rotation=45, ha="right")
        ax.set_xlim(-0.6, len(models) - 0.4)
        ax.set_xlabel("link-prediction method")
        ax.set_ylabel(_LABELS.get(metric, metric))
        ax.grid(True, axis="y", alpha=0.3)
        level = draw_paper_level(ax, metric) if spec.get("levels") else None
        if level is not None:
            ax.legend(handles=[level], loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize="small", frameon=False)
    if len(groups) > 1:
        axes[0][0].legend(loc="best", fontsize="small")
    levels = "; green: the paper's level for every mean" if spec.get("levels") else ""
    fig.suptitle(
        spec["title"] + "\nbox: Q1-Q3, line: mean, whiskers: min-max, dots: datasets x seeds" + levels,
        fontsize="medium",
    )
    fig.tight_layout()
    save_figure(fig, pdf, png, dpi=150)


#: the two readings of t_A in the timing figure: (label, t_A column, %Delta t column)
TIMING_READINGS: tuple[tuple[str, str, str], ...] = (
    ("Sec. 6.3: statistics + fit + test posteriors", "t_a", "pct_delta_t"),
    ("end to end: + scoring validation negatives", "t_a_end_to_end", "pct_delta_t_end_to_end"),
)


def table_timing_figure(timing: pd.DataFrame) -> pd.DataFrame:
    """The table behind the timing figure: per dataset, method and reading, mean ``t_LP``, ``t_A`` and ``%Delta t``.

    Means over seeds; ``%Delta t = 100 (t_A - t_LP) / t_LP`` of the mean times is *not* used: the mean of the
    per-seed ``%Delta t`` is reported, as the bars show it.

    :param timing: the output of :func:`table_timing`
    :return: columns ``dataset, method, reading, t_lp, t_a, pct_delta_t, num_seeds``
    """
    frames = []
    for label, t_column, pct_column in TIMING_READINGS:
        grouped = timing.groupby(["dataset", "model_class"], sort=True)
        frame = grouped.agg(
            t_lp=("t_lp", "mean"),
            t_a=(t_column, "mean"),
            pct_delta_t=(pct_column, "mean"),
            num_seeds=("seed", "nunique"),
        ).reset_index()
        frame.insert(2, "reading", label)
        frames.append(frame)
    columns = ["dataset", "method", "reading", "t_lp", "t_a", "pct_delta_t", "num_seeds"]
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True).rename(columns={"model_class": "method"})[columns]


def plot_s5_timing(
    timing_path: str | os.PathLike,
    table_out: str | os.PathLike,
    pdf: str | os.PathLike,
    png: str | os.PathLike,
) -> pd.DataFrame:
    """%Delta t of both t_A readings per dataset and method (bars on a linear axis; negative: the alternative
    protocol is faster), and the table behind it (:func:`table_timing_figure`).

    :param timing: Table 1 (``s5/tables/table1_timing.tsv``)
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from kgeval.plotting import save_figure

    table = table_timing_figure(read_tsv(timing_path))
    write_tsv(table, table_out, sort_by=["dataset", "method", "reading"])
    datasets = sorted(table["dataset"].unique())
    methods = sorted(table["method"].unique())
    readings = [label for label, _, _ in TIMING_READINGS]
    colours = plt.get_cmap("tab10")
    fig, axes = plt.subplots(
        1, max(1, len(datasets)), figsize=(0.9 + 0.75 * max(1, len(methods)) * max(1, len(datasets)), 4.2),
        squeeze=False, sharey=True,
    )
    width = 0.8 / len(readings)
    for ax, dataset in zip(axes[0], datasets):
        rows = table[table["dataset"] == dataset]
        for r, reading in enumerate(readings):
            values = rows[rows["reading"] == reading].set_index("method")["pct_delta_t"].reindex(methods)
            x = np.arange(len(methods)) + (r - (len(readings) - 1) / 2) * width
            ax.bar(x, values.to_numpy(dtype=float), width=width * 0.95, color=colours(r), label=reading)
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(methods)))
        ax.set_xticklabels(methods, rotation=45, ha="right")
        ax.set_title(dataset)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0][0].set_ylabel(r"$\%\Delta t = 100\,(t_A - t_{LP})/t_{LP}$")
    axes[0][0].legend(loc="best", fontsize="small")
    fig.suptitle("S5: time of the alternative protocol against rank evaluation (mean over seeds)", fontsize="medium")
    fig.tight_layout()
    save_figure(fig, pdf, png, dpi=150)
    return table


def _plot_run_spread(top: Any, bottom: Any, run: pd.DataFrame, x: float, colour: Any) -> None:
    """One run's six Platt fits: their validation R2_w at ``x`` joined by a line (top) and their (a, b) (bottom)."""
    values = run["r2_w"].to_numpy(dtype=float)
    top.plot([x, x], [np.nanmin(values), np.nanmax(values)], color=colour, linewidth=1.2)
    top.scatter(np.full(len(values), x), values, s=10, color=colour, edgecolor="black", linewidth=0.3)
    bottom.scatter(run["a"].astype(float), run["b"].astype(float), s=12, color=colour, edgecolor="black",
                   linewidth=0.3)


def plot_s5_platt_spread(
    calibrators_path: str | os.PathLike,
    table_out: str | os.PathLike,
    pdf: str | os.PathLike,
    png: str | os.PathLike,
) -> pd.DataFrame:
    """The six-fit spread of Fig. 3 shown apart: per Platt procedure (columns), the validation ``R2_w`` of the six
    fits of each run against its method (top; a line joins a run's worst and best fit) and their ``(a, b)`` (bottom);
    and the table behind it (:func:`~kgeval.studies.s5.spread.table_platt_spread`).

    :param calibrators_path: ``s5/tables/calibrators.tsv``
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from kgeval.plotting import save_figure
    from kgeval.studies.s5.spread import table_platt_spread

    calibrators = read_tsv(calibrators_path)
    table = table_platt_spread(calibrators)
    write_tsv(table, table_out, sort_by=["dataset", "model", "seed", "procedure"])
    platt = calibrators[calibrators["method"] == "platt"]
    procedures = sorted(platt["procedure"].unique()) or ["none"]
    methods = sorted(platt["model_class"].unique())
    colours = plt.get_cmap("tab10")
    fig, axes = plt.subplots(2, len(procedures), figsize=(4.2 * len(procedures), 7.0), squeeze=False)
    for column, procedure in enumerate(procedures):
        top, bottom = axes[0][column], axes[1][column]
        fits = platt[platt["procedure"] == procedure]
        for _, of_method in fits.groupby("model_class", sort=True):
            m = methods.index(str(of_method["model_class"].iloc[0]))
            runs = list(of_method.groupby(["dataset", "model", "seed"], sort=True))
            offsets = np.linspace(-0.25, 0.25, len(runs)) if len(runs) > 1 else np.zeros(1)
            for x_offset, (_, run) in zip(offsets, runs):
                _plot_run_spread(top, bottom, run, m + x_offset, colours(m))
        top.set_xticks(range(len(methods)))
        top.set_xticklabels(methods, rotation=45, ha="right")
        top.set_xlabel("link-prediction method")
        top.set_ylabel(r"validation $R^2_w$ of each fit")
        top.set_title(f"Platt, {procedure} procedure")
        top.grid(True, axis="y", alpha=0.3)
        for m, method in enumerate(methods):
            bottom.scatter([], [], s=12, color=colours(m), edgecolor="black", linewidth=0.3, label=method)
        bottom.set_xlabel("slope a")
        bottom.set_ylabel("intercept b")
        bottom.grid(True, alpha=0.3)
        if methods:
            bottom.legend(loc="best", fontsize="small")
    fig.suptitle("S5: the six Platt initialisations per run (one line per dataset x seed: worst to best fit)",
                 fontsize="medium")
    fig.tight_layout()
    save_figure(fig, pdf, png, dpi=150)
    return table
