"""S2 grid: the models x datasets table of base, adjusted and z-scored metrics, the size correlation, Fig. 1."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from pykeen.metrics.ranking import (
    AdjustedArithmeticMeanRankIndex,
    AdjustedInverseHarmonicMeanRank,
    ZInverseHarmonicMeanRank,
)

from kgeval.io import read_tsv, write_tsv
from kgeval.metrics import compute_metrics, expectations_table
from kgeval.studies.s2.grid import (
    DEFAULT_FAMILIES,
    Family,
    GridSelection,
    family_slug,
    grid_table,
    mean_num_candidates,
    parse_families,
    plot_family,
    size_correlation,
    write_family_figure,
    write_grid_table,
    write_size_correlation,
)

DATASETS = {"small": 15, "medium": 120, "large": 900}  # name -> number of entities


def _ranks(num_entities: int, quality: float, seed: int, n: int = 80) -> pd.DataFrame:
    """Ranks of a model whose rank is a random quantile of the candidate list, at most ``quality`` (lower is better)."""
    rng = np.random.default_rng(seed)
    nc = rng.integers(num_entities // 2, num_entities + 1, size=n)
    rank = np.clip(np.ceil(nc * rng.uniform(0, quality, size=n)), 1, nc)
    return pd.DataFrame(
        {
            "side": np.where(np.arange(n) % 2 == 0, "head", "tail"),
            "rank_optimistic": rank,
            "rank_realistic": rank,
            "rank_pessimistic": rank,
            "rank_nondeterministic": rank,
            "num_candidates": nc,
        }
    )


@pytest.fixture(scope="module")
def inputs():
    """A collated metrics table, an expectations table and dataset summaries for 3 datasets x 2 models x 2 seeds."""
    frames, expect, ranks_of = [], [], {}
    keys = sorted({k for fam in DEFAULT_FAMILIES for k in fam} | {"mr"})
    for (dataset, size), (model, quality), seed in itertools.product(
        DATASETS.items(), [("good", 0.05), ("poor", 0.5)], [0, 1]
    ):
        ranks = _ranks(size, quality, seed=hash((dataset, model, seed)) % 2**32)
        ranks_of[(dataset, model, seed)] = ranks
        table = compute_metrics(ranks, metrics=keys)
        frames.append(table.assign(dataset=dataset, model=model, seed=seed, split="test"))
    for dataset, size in DATASETS.items():
        # the candidate counts depend on the dataset only: take those of one run
        expect.append(expectations_table(ranks_of[(dataset, "good", 0)], dataset, "test", metrics=keys, num_samples=20))
    summaries = {
        d: pd.DataFrame({"split": ["train", "valid", "test"], "num_triples": [100, 10, 40], "num_entities": [s] * 3})
        for d, s in DATASETS.items()
    }
    return pd.concat(frames, ignore_index=True), pd.concat(expect, ignore_index=True), summaries, ranks_of


def test_grid_table_values(inputs):
    metrics, expect, summaries, ranks_of = inputs
    grid = grid_table(metrics, expect, summaries)
    assert list(grid["dataset"].drop_duplicates()) == ["small", "medium", "large"]  # ordered by number of entities
    assert len(grid) == 3 * 2 * len(DEFAULT_FAMILIES)
    row = grid[(grid["dataset"] == "medium") & (grid["model"] == "good") & (grid["family"] == "mrr")].iloc[0]
    runs = [ranks_of[("medium", "good", s)] for s in (0, 1)]
    # the values are the seed means of PyKEEN's metrics on the ranks
    mrr = [np.mean(1.0 / r["rank_realistic"]) for r in runs]
    amrr = [
        AdjustedInverseHarmonicMeanRank()(r["rank_realistic"].to_numpy(), r["num_candidates"].to_numpy()) for r in runs
    ]
    zmrr = [ZInverseHarmonicMeanRank()(r["rank_realistic"].to_numpy(), r["num_candidates"].to_numpy()) for r in runs]
    assert row["base"] == pytest.approx(np.mean(mrr))
    assert row["base_std"] == pytest.approx(np.std(mrr, ddof=1))
    assert row["adjusted"] == pytest.approx(np.mean(amrr))
    assert row["z"] == pytest.approx(np.mean(zmrr))
    assert row["n_seeds"] == 2
    assert row["num_entities"] == DATASETS["medium"]
    # the mean number of candidates is that of the ranks table
    assert row["mean_num_candidates"] == pytest.approx(runs[0]["num_candidates"].mean())
    assert row["n_ranks"] == len(runs[0])
    assert row["base_expectation"] == pytest.approx(
        np.mean([sum(1 / np.arange(1, c + 1)) / c for c in runs[0]["num_candidates"]])
    )
    mr = grid[(grid["dataset"] == "medium") & (grid["model"] == "good") & (grid["family"] == "mr")].iloc[0]
    amri = [
        AdjustedArithmeticMeanRankIndex()(r["rank_realistic"].to_numpy(), r["num_candidates"].to_numpy()) for r in runs
    ]
    assert mr["adjusted_metric"] == "amri" and mr["adjusted"] == pytest.approx(np.mean(amri))


def test_grid_table_selection_errors(inputs):
    metrics, expect, summaries, _ = inputs
    sub = grid_table(metrics, expect, summaries, datasets=["large", "small"], models=["good"])
    assert set(sub["dataset"]) == {"large", "small"} and set(sub["model"]) == {"good"}
    with pytest.raises(ValueError, match="present: good, poor"):
        grid_table(metrics, expect, summaries, models=["tucker"])
    with pytest.raises(ValueError, match="not defined for optimistic ranks"):
        grid_table(metrics, expect, summaries, rank_type="optimistic")
    with pytest.raises(ValueError, match="no dataset summary"):
        grid_table(metrics, expect, {"small": summaries["small"]})


def test_parse_families():
    assert parse_families([{"base": "mrr", "adjusted": "amrr", "z": "zmrr"}]) == (Family("mrr", "amrr", "zmrr"),)
    with pytest.raises(ValueError, match=r"families\[0\]\.adjusted: 'amri' adjusts 'mr'"):
        parse_families([{"base": "mrr", "adjusted": "amri", "z": "zmrr"}])
    with pytest.raises(ValueError, match=r"families\[0\]\.z: Unknown metric 'zz'"):
        parse_families([{"base": "mrr", "adjusted": "amrr", "z": "zz"}])
    assert family_slug("hits@10") == "hits_at_10"


def _rank(x: np.ndarray) -> np.ndarray:
    """Average ranks (ties share the mean position), written out for the test."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(1, len(x) + 1)
    for value in np.unique(x):
        ranks[x == value] = ranks[x == value].mean()
    return ranks


def test_size_correlation():
    grid = pd.DataFrame(
        {
            "dataset": ["a", "a", "b", "b", "c", "c", "d", "d"],
            "num_entities": [10, 10, 20, 20, 30, 30, 40, 40],
            "mean_num_candidates": [9.0, 9.0, 19.0, 19.0, 29.0, 29.0, 39.0, 39.0],
            "model": ["m1", "m2"] * 4,
            "family": "mrr",
            "base_expectation": 0.1,
            "base_metric": "mrr",
            "base": [0.9, 0.8, 0.7, 0.75, 0.5, 0.6, 0.2, 0.1],  # falls with size
            "base_std": np.nan,
            "adjusted_metric": "amrr",
            "adjusted": [0.5] * 8,  # constant: rho undefined
            "adjusted_std": np.nan,
            "z_metric": "zmrr",
            "z": [1.0, 3.0, 2.0, 1.0, 3.0, 2.0, 1.0, 4.0],
            "z_std": np.nan,
        }
    )
    table = size_correlation(grid).set_index(["variant", "scope"])
    # pooled: Pearson correlation of the average ranks
    x, y = _rank(grid["mean_num_candidates"].to_numpy()), _rank(grid["base"].to_numpy())
    assert table.loc[("base", "all models"), "rho"] == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert table.loc[("base", "all models"), "rho"] < -0.8
    assert table.loc[("base", "m1"), "rho"] == pytest.approx(-1.0)
    assert table.loc[("base", "all models"), "n_points"] == 8
    assert np.isnan(table.loc[("adjusted", "all models"), "rho"])
    x, y = _rank(grid["mean_num_candidates"].to_numpy()), _rank(grid["z"].to_numpy())
    assert table.loc[("z", "all models"), "rho"] == pytest.approx(np.corrcoef(x, y)[0, 1])


def test_family_figure(inputs, tmp_path):
    metrics, expect, summaries, _ = inputs
    grid = grid_table(metrics, expect, summaries)
    for fam in (DEFAULT_FAMILIES[0], DEFAULT_FAMILIES[2]):  # MRR (paper Fig. 1) and Hits@10; drawing is slow
        pdf, png = tmp_path / f"{family_slug(fam.base)}.pdf", tmp_path / f"{family_slug(fam.base)}.png"
        plot_family(grid, fam.base, pdf, png)
        assert pdf.read_bytes()[:4] == b"%PDF"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="not in the grid"):
        plot_family(grid, "hmr", tmp_path / "x.pdf", tmp_path / "x.png")


def test_mean_num_candidates_from_the_expectation_of_mr():
    ranks = pd.DataFrame({"side": ["head", "head", "tail", "tail", "tail"], "num_candidates": [3, 8, 10, 20, 31]})
    table = expectations_table(ranks, "d", "test", metrics=["mr", "mrr"], num_samples=10)
    got = mean_num_candidates(table)
    assert got[("d", "test", "head")] == pytest.approx(5.5)
    assert got[("d", "test", "tail")] == pytest.approx(61 / 3)
    assert got[("d", "test", "both")] == pytest.approx(72 / 5)
    with pytest.raises(ValueError, match="no 'mr' rows"):
        mean_num_candidates(table[table["metric"] != "mr"])


def test_size_correlation_needs_three_distinct_points():
    grid = pd.DataFrame(
        {
            "dataset": ["a", "b", "a", "b", "c"],
            "num_entities": [10, 20, 10, 20, 30],
            "mean_num_candidates": [9.0, 19.0, 9.0, 19.0, 29.0],
            "model": ["m1", "m1", "m2", "m2", "m2"],
            "family": "mrr",
            "base_expectation": 0.1,
            "base_metric": "mrr",
            "base": [0.9, 0.5, 0.8, 0.7, 0.1],
            "base_std": np.nan,
            "adjusted_metric": "amrr",
            "adjusted": [0.1, 0.2, 0.3, 0.4, np.nan],  # a NaN point is left out
            "adjusted_std": np.nan,
            "z_metric": "zmrr",
            "z": [1.0, 2.0, 3.0, 4.0, 5.0],
            "z_std": np.nan,
        }
    )
    table = size_correlation(grid, size_column="num_entities").set_index(["variant", "scope"])
    assert np.isnan(table.loc[("base", "m1"), "rho"]) and table.loc[("base", "m1"), "n_points"] == 2
    assert table.loc[("base", "m2"), "rho"] == pytest.approx(-1.0)
    assert table.loc[("base", "all models"), "n_datasets"] == 3
    # adjusted, pooled: the 4 finite points (10, .1), (20, .2), (10, .3), (20, .4); average ranks of x: 1.5, 3.5
    x, y = np.array([1.5, 3.5, 1.5, 3.5]), np.array([1.0, 2.0, 3.0, 4.0])
    assert table.loc[("adjusted", "all models"), "rho"] == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert list(table.reset_index()["scope"].iloc[:3]) == ["all models", "m1", "m2"]


def test_family_figure_axes(inputs, monkeypatch, tmp_path):
    """The three panels of Fig. 1: labels, a log x axis (and a log y axis for MR's base panel), one marker per grid
    row at its value, the random-ranking expectation on the base panel and 0 on the others."""
    import kgeval.plotting

    captured = []
    monkeypatch.setattr(kgeval.plotting, "save_figure", lambda fig, pdf, png=None: captured.append(fig))
    metrics, expect, summaries, _ = inputs
    grid = grid_table(metrics, expect, summaries)
    try:
        for family, labels in (("mrr", ("MRR", "AMRR", "ZMRR")), ("mr", ("MR", "AMRI", "ZMR"))):
            plot_family(grid, family, tmp_path / "x.pdf", tmp_path / "x.png")
            fig = captured[-1]
            axes = fig.axes
            assert len(axes) == 3
            sub = grid[grid["family"] == family]
            for ax, variant, label in zip(axes, ("base", "adjusted", "z"), labels):
                assert ax.get_xscale() == "log" and ax.get_xlabel() == "mean number of candidates (log)"
                assert ax.get_ylabel() == label and ax.get_title().endswith(f": {label}")
                expected_y = "log" if (family, variant) == ("mr", "base") else "linear"
                assert ax.get_yscale() == expected_y
                points = [(x, y) for line in ax.get_lines() for x, y in zip(*line.get_data()) if line.get_marker() != "None"]
                for row in sub.itertuples():
                    value = getattr(row, variant)
                    near = [x for x, y in points if y == pytest.approx(value)]
                    assert near, (family, variant, row.dataset, row.model)
                    # drawn at the dataset's mean number of candidates, up to the small per-model offset
                    assert any(abs(np.log10(x / row.mean_num_candidates)) <= 0.04 for x in near)
                if variant == "base":
                    ref = ax.collections[-1].get_offsets()
                    ref_rows = sub.drop_duplicates("dataset")
                    np.testing.assert_allclose(ref[:, 0], ref_rows["mean_num_candidates"])
                    np.testing.assert_allclose(ref[:, 1], ref_rows["base_expectation"])
                else:
                    zero = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
                    assert zero and all(np.all(np.asarray(line.get_ydata()) == 0.0) for line in zero)
            titles = [legend.get_title().get_text() for legend in fig.legends]
            assert titles == ["dataset (by size)", "model"]
            assert [t.get_text() for t in fig.legends[0].get_texts()] == ["small", "medium", "large", "random (expected)"]
    finally:
        import matplotlib.pyplot as plt

        for fig in captured:
            plt.close(fig)


def test_file_steps(inputs, tmp_path):
    metrics, expect, summaries, _ = inputs
    write_tsv(metrics, tmp_path / "metrics.tsv")
    write_tsv(expect, tmp_path / "expectations.tsv")
    paths = []
    for dataset, summary in summaries.items():
        path = tmp_path / "datasets" / dataset / "summary.tsv"
        path.parent.mkdir(parents=True)
        write_tsv(summary, path)
        paths.append(path)
    selection = GridSelection(families=[{"base": "mrr", "adjusted": "amrr", "z": "zmrr"}], models=["good"])
    grid = write_grid_table(tmp_path / "metrics.tsv", tmp_path / "expectations.tsv", paths, tmp_path / "grid.tsv",
                            selection)
    back = read_tsv(tmp_path / "grid.tsv")
    assert list(back["dataset"]) == ["small", "medium", "large"] and set(back["family"]) == {"mrr"}
    direct = grid_table(read_tsv(tmp_path / "metrics.tsv"), read_tsv(tmp_path / "expectations.tsv"), summaries,
                        families=[Family("mrr", "amrr", "zmrr")], models=["good"])
    np.testing.assert_allclose(back["adjusted"], direct["adjusted"])
    assert list(back["num_test_triples"]) == [40, 40, 40] and len(grid) == 3
    correlation = write_size_correlation(tmp_path / "grid.tsv", tmp_path / "rho.tsv")
    assert read_tsv(tmp_path / "rho.tsv")["rho"].tolist() == pytest.approx(correlation["rho"].tolist(), nan_ok=True)
    write_family_figure(tmp_path / "grid.tsv", "mrr", tmp_path / "f.pdf", tmp_path / "f.png")
    assert (tmp_path / "f.pdf").read_bytes()[:4] == b"%PDF"
