"""S2: expectation and variance of each base metric under random ranking, as functions of the number of candidates.

For every number of candidates ``N`` on a grid and ``n`` ranking tasks with ``N`` candidates each,
:func:`expectation_curves` tabulates E and V of each base metric twice where possible: PyKEEN's closed form
(Hoyt et al. 2022, App. B) and a Monte-Carlo estimate with a 95% confidence interval; metrics without a closed form
(HMR, IGMR, IMR, median rank, ...) get the Monte-Carlo estimate only. :func:`plot_expectation_curves` draws them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from kgeval.io import read_tsv, write_tsv
from kgeval.metrics import METHOD_CLOSED_FORM, METHOD_MONTE_CARLO, METRICS, closed_form, metric_keys, sample_metric_values

__all__ = [
    "DEFAULT_NUM_CANDIDATES",
    "expectation_curves",
    "plot_expectation_curves",
    "write_expectation_curves",
    "write_expectation_figure",
]

#: default grid of candidate-set sizes: from Nations-like (14) to beyond WN18RR (40,943)
DEFAULT_NUM_CANDIDATES: tuple[int, ...] = (2, 5, 10, 14, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000)

_Z = 1.959963984540054  # standard normal 97.5% quantile


def expectation_curves(
    num_candidates: Sequence[int] = DEFAULT_NUM_CANDIDATES,
    num_ranks: int = 100,
    metrics: Sequence[str] | None = None,
    num_samples: int = 500,
    seed: int = 0,
) -> pd.DataFrame:
    """E and V of each base metric for ``num_ranks`` tasks with ``N`` candidates each, for every ``N`` of the grid.

    :param num_candidates: the grid of N
    :param num_ranks: the number of ranking tasks n (the variance of a mean-type metric scales as 1/n)
    :param metrics: the keys (default: every ``base`` metric)
    :param num_samples: Monte-Carlo draws per grid point
    :param seed: seed of the draws (one stream per grid point, derived from it)
    :return: columns ``metric, num_candidates, n_ranks, method, expectation, variance, expectation_low,
        expectation_high, variance_low, variance_high`` (the bounds are 95% confidence intervals of the Monte-Carlo
        rows and equal to the estimate for closed forms)
    """
    keys = metric_keys(["base"]) if metrics is None else [METRICS[k].key for k in metrics]
    grid = sorted({int(n) for n in num_candidates})
    if not grid or grid[0] < 1:
        raise ValueError(f"num_candidates must be integers >= 1, got {list(num_candidates)}")
    rows = []
    for i, n_cand in enumerate(grid):
        nc = np.full(num_ranks, n_cand, dtype=np.int64)
        for key in keys:
            e, v = closed_form(key, nc)
            if e is not None and v is not None:
                rows.append((key, n_cand, num_ranks, METHOD_CLOSED_FORM, e, v, e, e, v, v))
        sampled = sample_metric_values(
            {k: METRICS[k].instantiate() for k in keys}, nc, num_samples=num_samples, seed=seed + i
        )
        for key, values in sampled.items():
            e, v = float(values.mean()), float(values.var(ddof=1))
            se_e = math.sqrt(v / num_samples)
            m4 = float(np.mean((values - e) ** 4))
            se_v = math.sqrt(max(m4 - v**2, 0.0) / num_samples)
            rows.append(
                (
                    key,
                    n_cand,
                    num_ranks,
                    METHOD_MONTE_CARLO,
                    e,
                    v,
                    e - _Z * se_e,
                    e + _Z * se_e,
                    v - _Z * se_v,
                    v + _Z * se_v,
                )
            )
    columns = [
        "metric",
        "num_candidates",
        "n_ranks",
        "method",
        "expectation",
        "variance",
        "expectation_low",
        "expectation_high",
        "variance_low",
        "variance_high",
    ]
    return pd.DataFrame(rows, columns=columns)


def plot_expectation_curves(
    table: pd.DataFrame, pdf_path: str | os.PathLike, png_path: str | os.PathLike, ncols: int = 6
) -> None:
    """Two panels per metric (expectation above, variance below) against the number of candidates, log-log.

    Closed forms are lines, Monte-Carlo estimates are markers with 95% confidence intervals.
    """
    from matplotlib.lines import Line2D

    from kgeval.plotting import new_figure, save_figure

    keys = list(dict.fromkeys(table["metric"]))
    nblocks = math.ceil(len(keys) / ncols)
    fig, axes = new_figure(2 * nblocks, ncols, width=2.7, height=2.2)
    for ax in axes.flat:
        ax.set_visible(False)
    n_ranks = int(table["n_ranks"].iloc[0])
    for i, key in enumerate(keys):
        sub = table[table["metric"] == key].sort_values("num_candidates")
        for row_offset, moment in enumerate(("expectation", "variance")):
            ax = axes[2 * (i // ncols) + row_offset, i % ncols]
            ax.set_visible(True)
            # log axes: values of exactly 0 (e.g. the variance of Hits@k when N <= k) are left out
            closed = sub[(sub["method"] == METHOD_CLOSED_FORM) & (sub[moment] > 0)]
            mc = sub[(sub["method"] == METHOD_MONTE_CARLO) & (sub[moment] > 0)]
            if len(closed):
                ax.plot(closed["num_candidates"], closed[moment], color="tab:blue", linewidth=1.5)
            value = mc[moment].to_numpy()
            low = np.clip(mc[f"{moment}_low"].to_numpy(), value * 1e-3, None)
            high = mc[f"{moment}_high"].to_numpy()
            ax.errorbar(
                mc["num_candidates"],
                value,
                yerr=np.vstack([np.clip(value - low, 0, None), np.clip(high - value, 0, None)]),
                marker="o",
                markersize=3,
                linestyle="none",
                color="tab:orange",
                elinewidth=0.8,
            )
            ax.set_xscale("log")
            ax.set_yscale("log")
            label = METRICS[key].label
            ax.set_title(f"{'E' if moment == 'expectation' else 'V'}[{label}]")
            ax.set_xlabel("number of candidates N")
            ax.set_ylabel(moment)
    handles = [
        Line2D([], [], color="tab:blue", label="closed form"),
        Line2D([], [], color="tab:orange", marker="o", linestyle="none", label="Monte Carlo (95% CI)"),
    ]
    fig.legend(
        handles=handles,
        loc="outside upper center",
        ncols=2,
        title=f"{n_ranks} ranking tasks, each rank uniform on 1..N (values of 0 are not drawn on the log axes)",
    )
    save_figure(fig, pdf_path, png_path)


def write_expectation_curves(
    out: str | os.PathLike,
    num_candidates: Sequence[int] = DEFAULT_NUM_CANDIDATES,
    num_ranks: int = 100,
    metrics: Sequence[str] | None = None,
    num_samples: int = 500,
    seed: int = 0,
) -> pd.DataFrame:
    """Compute :func:`expectation_curves` and write them as TSV."""
    table = expectation_curves(num_candidates, num_ranks, metrics, num_samples, seed)
    metric_order = {k: i for i, k in enumerate(dict.fromkeys(table["metric"]))}
    table = table.assign(_m=table["metric"].map(metric_order))
    table = table.sort_values(["_m", "num_candidates", "method"], kind="stable").drop(columns="_m")
    write_tsv(table, out, sort_by=[])  # registry order of metrics, then N, then method
    return table


def write_expectation_figure(
    table_path: str | os.PathLike, pdf_path: str | os.PathLike, png_path: str | os.PathLike
) -> None:
    """Read the curves table and draw :func:`plot_expectation_curves`."""
    plot_expectation_curves(read_tsv(table_path), pdf_path, png_path)
