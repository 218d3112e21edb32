"""S5's figures: Figs. 1-3 (Fig. 1 with the paper's levels in its legend) and the timing figure with the table
behind it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s5.figures import TIMING_READINGS, draw_paper_level, plot_s5_figure, plot_s5_timing
from s5_samples import synthetic_tables


def test_timing_figure_and_its_table(tmp_path):
    rows = []
    for dataset in ("d1", "d2"):
        for cls in ("TransE", "BoxE"):
            for seed, t_lp in ((0, 4.0), (1, 8.0)):
                rows.append(
                    {
                        "dataset": dataset,
                        "model": cls.lower(),
                        "model_class": cls,
                        "seed": seed,
                        "t_lp": t_lp,
                        "t_a": 1.0,
                        "pct_delta_t": 100 * (1.0 - t_lp) / t_lp,
                        "t_a_end_to_end": 6.0,
                        "pct_delta_t_end_to_end": 100 * (6.0 - t_lp) / t_lp,
                    }
                )
    path = tmp_path / "table1_timing.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    table = plot_s5_timing(path, tmp_path / "fig.tsv", tmp_path / "fig.pdf", tmp_path / "fig.png")
    assert (tmp_path / "fig.pdf").stat().st_size > 1000 and (tmp_path / "fig.png").stat().st_size > 1000
    written = pd.read_csv(tmp_path / "fig.tsv", sep="\t")
    assert len(written) == len(table) == 2 * 2 * len(TIMING_READINGS)
    assert set(written["reading"]) == {label for label, _, _ in TIMING_READINGS}
    sec63 = written[written["reading"] == TIMING_READINGS[0][0]]
    end = written[written["reading"] == TIMING_READINGS[1][0]]
    # means over the two seeds: (-75 + -87.5) / 2 and (+50 + -25) / 2
    np.testing.assert_allclose(sec63["pct_delta_t"], -81.25)
    np.testing.assert_allclose(end["pct_delta_t"], 12.5)
    assert (written["t_lp"] == 6.0).all() and (written["num_seeds"] == 2).all()


@pytest.mark.parametrize("figure", ["calibration", "strategies", "platt"])
def test_figures_are_written(tmp_path, figure):
    assessment, _ = synthetic_tables()
    path = tmp_path / "assessment.tsv"
    assessment.to_csv(path, sep="\t", index=False)
    plot_s5_figure(figure, path, tmp_path / "f.pdf", tmp_path / "f.png")
    assert (tmp_path / "f.pdf").stat().st_size > 1000 and (tmp_path / "f.png").stat().st_size > 1000
    with pytest.raises(ValueError, match="unknown S5 figure"):
        plot_s5_figure("nope", path, tmp_path / "g.pdf", tmp_path / "g.png")


def test_fig1_draws_the_paper_levels_with_their_labels(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import kgeval.plotting

    drawn = {}
    monkeypatch.setattr(kgeval.plotting, "save_figure", lambda fig, *args, **kwargs: drawn.setdefault("fig", fig))
    assessment, _ = synthetic_tables()
    path = tmp_path / "assessment.tsv"
    assessment.to_csv(path, sep="\t", index=False)
    plot_s5_figure("calibration", path, tmp_path / "f.pdf", tmp_path / "f.png")
    axes = drawn["fig"].axes
    labels = [[t.get_text() for t in ax.get_legend().get_texts()] for ax in axes]
    assert labels == [
        ["paper (Fig. 1a): every mean 0.7 <= $R^2_w$ <= 0.9"],
        ["paper (Fig. 1b): every mean $BS_w$ <= 0.1"],
        ["paper (Fig. 1c): every mean 0.9 <= BA"],
        ["paper (Fig. 1d): every mean 0.55 < $r_{xy}$"],
    ]
    # the band of R2_w spans 0.7-0.9; the bounds are horizontal lines at the level
    band = [p for p in axes[0].patches if p.get_label().startswith("paper")][0]
    ys = band.get_patch_transform().transform(band.get_path().vertices)[:, 1]  # Rectangle or Polygon alike
    assert np.allclose([ys.min(), ys.max()], [0.7, 0.9])
    for ax, bound in zip(axes[1:], (0.1, 0.9, 0.55)):
        line = [l for l in ax.get_lines() if l.get_label().startswith("paper")][0]
        assert np.allclose(line.get_ydata(), bound)
    # Fig. 2 compares strategies: no level drawn
    drawn.clear()
    plot_s5_figure("strategies", path, tmp_path / "g.pdf", tmp_path / "g.png")
    assert all(ax.get_legend() is None or "paper" not in ax.get_legend().get_texts()[0].get_text()
               for ax in drawn["fig"].axes)


def test_a_metric_without_a_level_draws_nothing():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    assert draw_paper_level(ax, "tpr") is None and not ax.get_lines() and not ax.patches
    plt.close(fig)
