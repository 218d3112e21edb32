import pandas as pd

from kgeval.studies.s6.figures import plot_estimates, plot_tau


def test_both_figures_are_written(tmp_path):
    est = pd.DataFrame({"dataset": "d", "model": ["a", "b"], "seed": 0, "sampler": "uniform", "k": 5,
                        "estimator": "naive", "metric": "mrr", "estimate": [0.5, 0.6], "full": [0.3, 0.4],
                        "ci_low": [0.4, 0.5], "ci_high": [0.6, 0.7]})
    plot_estimates(est, tmp_path / "e.pdf", tmp_path / "e.png")
    ordering = pd.DataFrame({"dataset": "d", "seed": 0, "sampler": "uniform", "k": [5, 10], "estimator": "naive",
                             "metric": "mrr", "models": 2, "tau": [1.0, 1.0], "ci_low": [0.0, 1.0], "ci_high": 1.0})
    plot_tau(ordering, tmp_path / "t.pdf", tmp_path / "t.png")
    plot_tau(ordering.iloc[:0], tmp_path / "t0.pdf", tmp_path / "t0.png")
    assert all((tmp_path / n).stat().st_size > 0 for n in ("e.pdf", "e.png", "t.pdf", "t.png", "t0.png"))


def test_the_estimates_figure_draws_its_table_in_a_sampler_by_estimator_grid(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt
    import numpy as np

    import kgeval.studies.s6.figures as figures

    rows = [("d", m, 0, s, 5, e, "mrr", 0.5 + 0.1 * i, 0.3 + 0.1 * i, 0.45 + 0.1 * i, 0.55 + 0.1 * i)
            for i, m in enumerate(("a", "b")) for s, e in (("uniform", "naive"), ("uniform", "corrected"),
                                                           ("static", "naive"))]
    est = pd.DataFrame(rows, columns=["dataset", "model", "seed", "sampler", "k", "estimator", "metric", "estimate",
                                      "full", "ci_low", "ci_high"])
    saved = []
    monkeypatch.setattr(figures, "save_figure", lambda fig, pdf, png: saved.append(fig))
    plot_estimates(est, tmp_path / "e.pdf", tmp_path / "e.png")
    axes = np.array(saved[0].axes).reshape(2, 2)  # rows: static, uniform; columns: corrected, naive
    assert not axes[0, 0].axison  # static has no corrected estimate
    for ax, (sampler, estimator) in ((axes[0, 1], ("static", "naive")), (axes[1, 0], ("uniform", "corrected")),
                                     (axes[1, 1], ("uniform", "naive"))):
        assert ax.get_title() == f"{sampler}, {estimator}"
        assert ax.get_xlabel() == "full MRR" and ax.get_ylabel() == "estimated MRR"
        points = ax.lines[0].get_xydata()
        want = est[(est.sampler == sampler) & (est.estimator == estimator)][["full", "estimate"]].to_numpy()
        np.testing.assert_allclose(points, want)
    plt.close(saved[0])
