"""Tests of the S2 study: grid table, size correlation, figures, expectation curves, desiderata (paper Table 1)."""

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

from kgeval.metrics import METRICS, compute_metrics, expectations_table, metric_keys
from kgeval.studies.s2.desiderata import NO, YES, DesiderataSettings, desiderata
from kgeval.studies.s2.expectations import expectation_curves, plot_expectation_curves
from kgeval.studies.s2.grid import (
    DEFAULT_FAMILIES,
    Family,
    family_slug,
    grid_table,
    parse_families,
    plot_family,
    size_correlation,
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


def test_adjusted_metrics_remove_size_dependence_of_a_fixed_quality_model():
    """A model that always ranks the truth at the same quantile: MRR falls with size, AMRI does not.

    For rank = ceil(q N) with N large, AMRI = 1 - (MR - 1)/(E[MR] - 1) tends to 1 - 2q, whatever N.
    """
    q = 0.1
    values = {}
    for n_cand in (500, 5000, 50000):
        nc = np.full(40, n_cand)
        r = np.ceil(q * nc).astype(float)
        ranks = pd.DataFrame(
            {"side": "head", "num_candidates": nc}
            | {f"rank_{t}": r for t in ("optimistic", "realistic", "pessimistic", "nondeterministic")}
        )
        table = compute_metrics(ranks, metrics=["mrr", "amri"])
        values[n_cand] = table.query("side == 'both' and rank_type == 'realistic'").set_index("metric")["value"]
        assert values[n_cand]["amri"] == pytest.approx(1 - (np.ceil(q * n_cand) - 1) / ((n_cand + 1) / 2 - 1))
    assert values[500]["mrr"] > 5 * values[5000]["mrr"] > 25 * values[50000]["mrr"]
    for n_cand in values:
        assert values[n_cand]["amri"] == pytest.approx(1 - 2 * q, abs=0.005)


def test_expectation_curves(tmp_path):
    table = expectation_curves(num_candidates=[2, 11, 100], num_ranks=10, num_samples=200, seed=0)
    methods = table.groupby("metric")["method"].apply(set)
    assert methods["mr"] == {"closed_form", "monte_carlo"}
    assert methods["hmr"] == {"monte_carlo"}
    assert set(table["metric"]) == set(metric_keys(["base"]))
    closed_mr = table[(table["metric"] == "mr") & (table["method"] == "closed_form")].set_index("num_candidates")
    for n in (2, 11, 100):
        assert closed_mr.loc[n, "expectation"] == (n + 1) / 2  # E[MR] = (N + 1) / 2
        assert closed_mr.loc[n, "variance"] == pytest.approx((n**2 - 1) / 12 / 10)  # V[MR] = (N^2 - 1) / (12 n)
    # closed forms lie inside the Monte-Carlo intervals (95%: allow a few misses)
    merged = table[table["method"] == "closed_form"].merge(
        table[table["method"] == "monte_carlo"], on=["metric", "num_candidates"], suffixes=("", "_mc")
    )
    inside = (merged["expectation"] >= merged["expectation_low_mc"] - 1e-12) & (
        merged["expectation"] <= merged["expectation_high_mc"] + 1e-12
    )
    assert inside.mean() >= 0.8
    plot_expectation_curves(
        table[table["metric"].isin(["mr", "hmr", "hits@10"])], tmp_path / "e.pdf", tmp_path / "e.png"
    )
    assert (tmp_path / "e.png").stat().st_size > 10_000


@pytest.fixture(scope="module")
def desiderata_tables():
    return desiderata(settings=DesiderataSettings(num_random=60))


def test_desiderata_reproduce_paper_table_1(desiderata_tables):
    """Paper Table 1: MR ✔✘✘✘✘, MRR ✔✔✔✔✘, Hits@k ✔✔✔✘✘ (non-negativity, fixed optimum, asymptotic pessimum,
    anti-monotonicity, size invariance)."""
    table = desiderata_tables[0].set_index("metric")
    props = ["non_negativity", "fixed_optimum", "asymptotic_pessimum", "monotonicity", "size_invariance"]
    assert list(table.loc["mr", props]) == [YES, NO, NO, NO, NO]
    assert list(table.loc["mrr", props]) == [YES, YES, YES, YES, NO]
    for k in (1, 3, 5, 10):
        assert list(table.loc[f"hits@{k}", props]) == [YES, YES, YES, NO, NO]


def test_desiderata_of_adjusted_metrics(desiderata_tables):
    table, evidence = desiderata_tables
    table = table.set_index("metric")
    for key in metric_keys(["adjusted", "z"]):
        assert table.loc[key, "size_invariance"] == YES, key  # expectation 0 (AMR: 1) for every size
    for key in metric_keys(["base"]):
        assert table.loc[key, "size_invariance"] == NO, key
    # the re-indexed metrics have a fixed optimum of 1; AMRI's pessimum is -1 for equal candidate counts
    for key in ("amri", "amrr", "agmri", "ah@10"):
        assert table.loc[key, "fixed_optimum"] == YES
        assert table.loc[key, "non_negativity"] == NO
    assert table.loc["amri", "asymptotic_pessimum"] == YES
    assert set(evidence["property"]) == {
        "non_negativity",
        "fixed_optimum",
        "asymptotic_pessimum",
        "monotonicity",
        "size_invariance",
    }
    assert len(evidence) == 5 * len(table)
    assert set(table.index) == set(metric_keys(["base", "adjusted", "z"]))
    assert all(METRICS[k].label == table.loc[k, "label"] for k in table.index)
