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
