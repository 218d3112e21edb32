"""S6's two figures: the estimated against the full MRR per sampler and k, and Kendall tau against k."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from kgeval.plotting import category_colors, category_markers, log_axis, new_figure, save_figure

__all__ = ["plot_estimates", "plot_tau"]


def plot_estimates(estimates: pd.DataFrame, pdf: str | os.PathLike, png: str | os.PathLike, metric: str = "mrr") -> None:
    """A grid of panels, a row per sampler and a column per estimator: each run's estimate of ``metric`` against its
    full value, coloured by k, with the estimate's interval and the diagonal (a perfect estimate)."""
    sub = estimates[estimates["metric"] == metric]
    samplers = sorted(sub["sampler"].unique()) or ["(none)"]
    estimators = sorted(sub["estimator"].unique()) or ["(none)"]
    fig, axes = new_figure(len(samplers), len(estimators), width=3.2, height=3.0)
    colors = category_colors([str(k) for k in sorted(sub["k"].unique())], palette="tab10")
    for i, sampler in enumerate(samplers):
        for j, estimator in enumerate(estimators):
            ax = axes[i, j]
            part = sub[(sub["sampler"] == sampler) & (sub["estimator"] == estimator)]
            if part.empty:
                ax.set_axis_off()
                ax.text(0.5, 0.5, f"{sampler}, {estimator}:\nnot computed", ha="center", va="center",
                        transform=ax.transAxes, fontsize=8, color="0.4")
                continue
            for k, rows in part.groupby("k"):
                ax.errorbar(rows["full"], rows["estimate"],
                            yerr=[rows["estimate"] - rows["ci_low"], rows["ci_high"] - rows["estimate"]],
                            fmt="o", ms=3, color=colors[str(k)], label=f"k={k}", lw=0.8)
            lo = float(np.nanmin([part["full"].min(), part["ci_low"].min(), 0.0]))
            hi = float(np.nanmax([part["full"].max(), part["ci_high"].max(), 1e-9]))
            ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, ls="--")
            ax.set_title(f"{sampler}, {estimator}")
            ax.set_xlabel(f"full {metric.upper()}")
            ax.set_ylabel(f"estimated {metric.upper()}")
    handles, labels = {}, {}
    for ax in axes.ravel():
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    if handles:
        fig.legend(handles.values(), handles.keys(), loc="outside right upper", title="sample size")
    save_figure(fig, pdf, png)


def plot_tau(ordering: pd.DataFrame, pdf: str | os.PathLike, png: str | os.PathLike, metric: str = "mrr") -> None:
    """Kendall tau between the sampled and the full model ordering against k, one panel per dataset, one line per
    sampler and estimator, with its interval."""
    sub = ordering[ordering["metric"] == metric]
    datasets = sorted(sub["dataset"].unique()) or ["(no dataset with two models)"]
    fig, axes = new_figure(1, len(datasets), width=3.6, height=3.0)
    lines = sorted({f"{s}/{e}" for s, e in zip(sub["sampler"], sub["estimator"])})
    colors, markers = category_colors(lines), category_markers(lines)
    for ax, dataset in zip(axes[0], datasets):
        part = sub[sub["dataset"] == dataset]
        for i, ((sampler, estimator), rows) in enumerate(part.groupby(["sampler", "estimator"])):
            rows = rows.sort_values("k")
            name = f"{sampler}/{estimator}"
            # lines side by side (a small factor on the log axis), so that equal taus do not hide each other
            dodge = 1.0 + 0.03 * (i - (len(lines) - 1) / 2)
            ax.errorbar(rows["k"] * dodge, rows["tau"], yerr=[rows["tau"] - rows["ci_low"], rows["ci_high"] - rows["tau"]],
                        color=colors[name], marker=markers[name], ms=3, lw=0.8, capsize=2, label=name)
        if len(part):
            log_axis(ax, "x", part["k"].to_numpy())
        ax.set_ylim(-1.05, 1.05)
        ax.set_title(dataset)
        ax.set_xlabel("k (sampled negatives)")
    axes[0, 0].set_ylabel("Kendall tau (sampled vs full)")
    if len(sub):
        axes[0, -1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=6)
    save_figure(fig, pdf, png)
