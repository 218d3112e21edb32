"""S4 figures (Figs. 2-8): what each panel draws, its labels and scales, read back from the matplotlib figure."""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import kgeval.studies.s4.figures as figures
from kgeval.io import write_tsv


def brute_tau(x, y) -> float:
    """Kendall's tau-a by counting pairs (tau-b without ties)."""
    pairs = list(itertools.combinations(range(len(x)), 2))
    return sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i, j in pairs) / len(pairs)


@pytest.fixture
def captured(monkeypatch):
    """The figures the plot functions would save (closed afterwards)."""
    figs = []
    monkeypatch.setattr(figures, "save_figure", lambda fig, pdf, png=None: figs.append(fig))
    yield figs
    for fig in figs:
        plt.close(fig)


SYSTEMS = ["s1", "s2", "s3", "s4"]
MRR = {  # micro MRR per level and system
    "original": [0.2, 0.5, 0.4, 0.1],
    "sparse": [0.3, 0.6, 0.2, 0.1],
    "depth1": [0.25, 0.2, 0.3, 0.1],
    "depth3": [0.1, 0.2, 0.3, 0.4],
}


def _metrics(tmp_path):
    rows = [(level, s, "micro", "mrr", v) for level, vs in MRR.items() for s, v in zip(SYSTEMS, vs)]
    rows += [(level, s, "macro", "mrr", 0.9) for level in MRR for s in SYSTEMS]
    path = tmp_path / "metrics.tsv"
    write_tsv(pd.DataFrame(rows, columns=["level", "system", "family", "metric", "value"]), path)
    return path


def test_system_ranking(tmp_path, captured):
    figures.plot_system_ranking(metrics_path=_metrics(tmp_path), dataset="fb", pdf=tmp_path / "a.pdf",
                                png=tmp_path / "a.png")
    ax = captured[0].axes[0]
    order = [1, 2, 0, 3]  # s2 > s3 > s1 > s4 on the original labels
    assert [t.get_text() for t in ax.get_xticklabels()] == ["A\ns2", "B\ns3", "C\ns1", "D\ns4"]
    lines = {line.get_label(): line.get_ydata() for line in ax.get_lines()}
    assert list(lines) == ["original test labels", "sparse labels", "pooled labels (depth 3)"]  # the deepest level
    for label, level in zip(lines, ("original", "sparse", "depth3")):
        np.testing.assert_allclose(lines[label], np.array(MRR[level])[order])
    assert ax.get_ylabel() == "micro MRR" and ax.get_xlabel().startswith("system (sorted by micro MRR")
    so = brute_tau(np.array(MRR["sparse"]), np.array(MRR["original"]))
    ps = brute_tau(np.array(MRR["depth3"]), np.array(MRR["sparse"]))
    assert f"sparse vs original {so:.4f}" in ax.get_title() and f"pooled vs sparse {ps:.4f}" in ax.get_title()


def _taus(tmp_path):
    rows = []
    for family, metric in itertools.product(("micro", "macro"), ("mr", "mrr", "hits@10")):
        for depth, level in ((-1, "original"), (0, "sparse"), (2, "depth2"), (1, "depth1")):
            tau = {"mr": 0.1, "mrr": 0.2, "hits@10": 0.3}[metric] * depth + (0.5 if family == "macro" else 0.0)
            rows.append((level, depth, family, metric, tau))
    path = tmp_path / "tau.tsv"
    write_tsv(pd.DataFrame(rows, columns=["level", "depth", "family", "metric", "tau"]), path)
    return path


def test_tau_depth_and_micro_macro(tmp_path, captured):
    path = _taus(tmp_path)
    figures.plot_tau_depth(tau_path=path, dataset="fb", pdf=tmp_path / "b.pdf", png=tmp_path / "b.png",
                           metrics=("mrr", "mr", "hits@1"))
    ax = captured[0].axes[0]
    lines = ax.get_lines()[:2]  # then the horizontal line at 0
    assert [line.get_label() for line in lines] == ["Micro MRR", "Micro MR"]  # the order asked for; no Hits@1 data
    for line, slope in zip(lines, (0.2, 0.1)):
        np.testing.assert_array_equal(line.get_xdata(), [0, 1, 2])  # sorted depths, without original (-1)
        np.testing.assert_allclose(line.get_ydata(), [0.0, slope, 2 * slope])
    assert ax.get_xlabel() == "pooling depth (0 = sparse labels)"
    assert ax.get_ylabel() == "Kendall's tau to the sparse-label ranking" and ax.get_ylim() == (-1.05, 1.05)
    assert list(ax.get_xticks()) == [0, 1, 2]

    figures.plot_micro_macro(tau_path=path, dataset="fb", pdf=tmp_path / "c.pdf", png=tmp_path / "c.png")
    ax = captured[1].axes[0]
    lines = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert [(line.get_label(), line.get_linestyle()) for line in lines] == [
        ("Micro MRR", "-"), ("Macro MRR", "--"), ("Micro Hits@10", "-"), ("Macro Hits@10", "--")]
    np.testing.assert_allclose(lines[1].get_ydata(), [0.5, 0.7, 0.9])
    np.testing.assert_allclose(lines[2].get_ydata(), [0.0, 0.3, 0.6])


def _answers(tmp_path):
    ranks = {  # system -> level -> ranks of answers of relations r0, r0, r1, r2
        "good": {"original": [1, 1, 2, 4], "sparse": [1, 2, 2, 1], "depth2": [1, 1, 1, 5]},
        "poor": {"original": [5, 5, 5, 5], "sparse": [4, 4, 2, 8], "depth2": [3, 6, 9, 1]},
    }
    rows = [(level, system, rel, float(r)) for system, levels in ranks.items() for level, rs in levels.items()
            for rel, r in zip(("r0", "r0", "r1", "r2"), rs)]
    path = tmp_path / "answers.parquet"
    pd.DataFrame(rows, columns=["level", "system", "relation", "rank"]).to_parquet(path)
    metrics = pd.DataFrame([("original", "good", "micro", "mrr", 0.7), ("original", "poor", "micro", "mrr", 0.2)],
                           columns=["level", "system", "family", "metric", "value"])
    write_tsv(metrics, tmp_path / "metrics.tsv")
    return path, ranks


def test_relation_mrr(tmp_path, captured):
    path, ranks = _answers(tmp_path)
    figures.plot_relation_mrr(answers_path=path, metrics_path=tmp_path / "metrics.tsv", system=None, dataset="fb",
                              pdf=tmp_path / "d.pdf", png=tmp_path / "d.png")
    ax = captured[0].axes[0]
    assert "good" in ax.get_title()  # the best system on the original labels
    assert ax.get_ylabel() == "micro MRR per relation"
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks == ["original test labels\n(3 relations)", "sparse labels\n(3 relations)",
                     "pooled labels (depth 2)\n(3 relations)"]
    means = [line.get_ydata()[0] for line in ax.get_lines() if line.get_marker() == "^"]
    assert len(means) == 3
    for mean, level in zip(means, ("original", "sparse", "depth2")):
        r = ranks["good"][level]
        per_relation = [np.mean([1 / r[0], 1 / r[1]]), 1 / r[2], 1 / r[3]]
        assert mean == pytest.approx(np.mean(per_relation))
    with pytest.raises(ValueError, match="system 'best' is not among"):
        figures.plot_relation_mrr(answers_path=path, metrics_path=tmp_path / "metrics.tsv", system="best",
                                  dataset="fb", pdf=tmp_path / "d.pdf", png=tmp_path / "d.png")


def test_stability_panels(tmp_path, captured):
    rows = []
    for unit, level, family, fraction in itertools.product(("questions", "triples"), ("depth1", "original", "sparse"),
                                                           ("micro", "macro"), (0.5, 0.1, 1.0)):
        rows.append((unit, level, fraction, family, "mrr", fraction / 2 + (0.1 if family == "macro" else 0.0)))
    table = pd.DataFrame(rows, columns=["unit", "level", "fraction", "family", "metric", "tau_mean"])
    write_tsv(table, tmp_path / "stability.tsv")
    figures.plot_stability(stability_path=tmp_path / "stability.tsv", dataset="fb", pdf=tmp_path / "e.pdf",
                           png=tmp_path / "e.png")
    axes = np.array(captured[0].axes).reshape(2, 3)
    for row, unit in enumerate(("triples", "questions")):  # the paper's unit first
        for col, level in enumerate(("original", "sparse", "depth1")):
            ax = axes[row, col]
            assert ax.get_xlabel() == f"subset size (% of the {unit})"
            assert ax.get_title().split("\n")[0].startswith("fb: ")
            lines = {line.get_label(): line for line in ax.get_lines()}
            np.testing.assert_allclose(lines["Micro MRR"].get_xdata(), [10.0, 50.0, 100.0])
            np.testing.assert_allclose(lines["Micro MRR"].get_ydata(), [0.05, 0.25, 0.5])
            np.testing.assert_allclose(lines["Macro MRR"].get_ydata(), [0.15, 0.35, 0.6])
            assert lines["Macro MRR"].get_linestyle() == "--"
        assert axes[row, 0].get_ylabel() == "mean Kendall's tau to the full set"
    assert "original test labels" in axes[0, 0].get_title() and "depth 1" in axes[0, 2].get_title()
    # an older table without the unit column: one row of panels, the questions
    write_tsv(table[table["unit"] == "questions"].drop(columns="unit"), tmp_path / "old.tsv")
    figures.plot_stability(stability_path=tmp_path / "old.tsv", dataset="fb", pdf=tmp_path / "e.pdf",
                           png=tmp_path / "e.png")
    assert len(captured[1].axes) == 3 and "questions" in captured[1].axes[0].get_xlabel()


def test_discriminative_panels(tmp_path, captured):
    pvalues = {"micro": [0.3, 0.0, 0.02, 1e-5, 0.5, 0.9], "macro": [0.6, 0.01, 0.2, 0.04, 0.05, 0.7]}
    rows = [(level, family, "mrr", p) for level in ("depth1", "sparse") for family, ps in pvalues.items() for p in ps]
    write_tsv(pd.DataFrame(rows, columns=["level", "family", "metric", "pvalue"]), tmp_path / "disc.tsv")
    figures.plot_discriminative(discriminative_path=tmp_path / "disc.tsv", dataset="fb", pdf=tmp_path / "f.pdf",
                                png=tmp_path / "f.png")
    axes = captured[0].axes
    assert [ax.get_title() for ax in axes] == ["fb: sparse labels", "fb: pooled labels (depth 1)"]
    for ax in axes:
        assert ax.get_yscale() == "log" and ax.get_xlabel() == "system pair (sorted by p-value, descending)"
        lines = {line.get_label(): line for line in ax.get_lines()}
        micro = lines["Micro MRR"].get_ydata()
        # descending; the p-value 0 is drawn one decade below the smallest positive one (1e-5 -> 1e-6)
        np.testing.assert_allclose(micro, [0.9, 0.5, 0.3, 0.02, 1e-5, 1e-6])
        np.testing.assert_array_equal(lines["Micro MRR"].get_xdata(), np.arange(1, 7))
        np.testing.assert_allclose(lines["Macro MRR"].get_ydata(), sorted(pvalues["macro"], reverse=True))
    assert axes[0].get_ylabel() == "p-value (paired two-tailed t-test)"

    rows = [(t, "micro", m, p) for t in ("X-Set", "WN18RR", "FB-Test-O") for m in ("mrr", "mr") for p in (0.2, 0.7)]
    write_tsv(pd.DataFrame(rows, columns=["test_set", "family", "metric", "pvalue"]), tmp_path / "pairs.tsv")
    figures.plot_released_discriminative(pairs_path=tmp_path / "pairs.tsv", pdf=tmp_path / "g.pdf",
                                         png=tmp_path / "g.png")
    axes = captured[1].axes
    assert [ax.get_title() for ax in axes] == ["FB15k-237 (FB-Test-O)", "WN18RR", "X-Set"]
    for ax in axes:
        assert ax.get_yscale() == "linear" and ax.get_ylim() == (0.0, 1.02)
        assert [line.get_label() for line in ax.get_lines()] == ["Micro MRR"]  # MR is not among the metrics drawn
        np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), [0.7, 0.2])
    assert axes[0].get_ylabel() == "p-value (paired two-tailed t-test)"  # the released p-values


def test_discriminative_axis_names_the_test_of_the_table(tmp_path, captured):
    rows = [("sparse", "micro", "mrr", p, "sign-flip (1,000 permutations)") for p in (0.3, 0.01)]
    write_tsv(pd.DataFrame(rows, columns=["level", "family", "metric", "pvalue", "test"]), tmp_path / "disc.tsv")
    figures.plot_discriminative(discriminative_path=tmp_path / "disc.tsv", dataset="fb", pdf=tmp_path / "f.pdf",
                                png=tmp_path / "f.png")
    assert captured[0].axes[0].get_ylabel() == "p-value (sign-flip (1,000 permutations))"


def test_relation_distribution(tmp_path, captured):
    counts = pd.DataFrame(
        {
            "relation": ["a", "b", "c", "d", "e"],
            "FB-Test-O": [10, 30, 20, 20, 5],
            "FB-Test-S": [1, 2, 3, 4, 10],
            "FB-Test-S-C": [0, 5, 5, 0, 10],
        }
    )
    write_tsv(counts, tmp_path / "dist.tsv")
    kl = pd.DataFrame({"first": ["FB15k-237", "FB-Test-O"], "second": ["FB-Test-O", "FB-Test-S"], "kl": [0.125, 0.5]})
    write_tsv(kl, tmp_path / "kl.tsv")
    figures.plot_relation_distribution(distribution_path=tmp_path / "dist.tsv", kl_path=tmp_path / "kl.tsv",
                                       pdf=tmp_path / "h.pdf", png=tmp_path / "h.png", num_classes=4)
    axes = captured[0].axes
    assert len(axes) == 3
    # the 3 most frequent relations of FB-Test-O (ties by name): b, c, d; then a and e merged
    classes = {"FB-Test-O": [30, 20, 20, 15], "FB-Test-S": [2, 3, 4, 11], "FB-Test-S-C": [5, 5, 0, 10]}
    for ax, (name, values) in zip(axes, classes.items()):
        heights = [patch.get_height() for patch in ax.patches]
        np.testing.assert_allclose(heights, np.array(values) / sum(values))
        assert ax.get_ylabel() == "share of triples" and ax.get_title().startswith(f"{name} ({sum(values):,} triples)")
    assert "KL(FB15k-237 || FB-Test-O) = 0.1250" in axes[0].get_title()
    assert "KL(FB-Test-O || FB-Test-S) = 0.5000" in axes[1].get_title()
    assert "= nan" in axes[2].get_title()  # no KL value for that pair in the table
    assert [t.get_text() for t in axes[-1].get_xticklabels()] == ["1", "2", "3", "other"]


def test_released_relation_mrr(tmp_path, captured):
    table = pd.DataFrame({"test_set": ["FB-Test-S-C"] * 3 + ["FB-Test-O"] * 2,
                          "micro_mrr": [0.1, 0.5, 0.3, 0.2, 0.6]})
    write_tsv(table, tmp_path / "rel.tsv")
    figures.plot_released_relation_mrr(table_path=tmp_path / "rel.tsv", system="HittER", pdf=tmp_path / "i.pdf",
                                       png=tmp_path / "i.png")
    ax = captured[0].axes[0]
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks == ["FB-Test-O\n(2 relations,\nmedian 0.4000)", "FB-Test-S-C\n(3 relations,\nmedian 0.3000)"]
    means = [line.get_ydata()[0] for line in ax.get_lines() if line.get_marker() == "^"]
    assert means == pytest.approx([0.4, 0.3])
    assert ax.get_ylabel() == "micro MRR per relation" and ax.get_title().startswith("HittER")


def test_saved_files(tmp_path):
    """Without the capture: the figure is written as PDF and PNG."""
    figures.plot_system_ranking(metrics_path=_metrics(tmp_path), dataset="fb", pdf=tmp_path / "a.pdf",
                                png=tmp_path / "a.png")
    assert (tmp_path / "a.pdf").read_bytes()[:4] == b"%PDF"
    assert (tmp_path / "a.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
