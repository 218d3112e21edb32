"""Paired model comparisons (kgeval.uncertainty.model_comparisons): brute force, scipy, and the figure's matrices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import kgeval.plotting
from kgeval.io import read_tsv, write_parquet
from kgeval.metrics import compute_metrics
from kgeval.uncertainty.bootstrap_metrics import BootstrapSettings, canonical_order
from kgeval.uncertainty.model_comparisons import (
    COLUMNS,
    comparison_matrix,
    model_comparisons,
    model_comparisons_file,
    plot_model_comparisons,
)
from kgeval.uncertainty.resampling import percentile_interval, resample_indices, stream_seed

SETTINGS = BootstrapSettings(resamples=200, permutations=2000, level=0.95, seed=1)


def queries(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    heads = rng.permutation(200)[:n].astype(str)
    return pd.DataFrame(
        {
            "head": heads,
            "relation": "r",
            "tail": rng.integers(0, 200, n).astype(str),
            "side": np.where(np.arange(n) % 3 == 0, "head", "tail"),
            "num_candidates": rng.integers(5, 40, n),
        }
    )


def with_ranks(frame: pd.DataFrame, skill: float, seed: int) -> pd.DataFrame:
    """Ranks of a model of the given skill (0: random, 1: nearly perfect), rows shuffled."""
    rng = np.random.default_rng(seed)
    nc = frame["num_candidates"].to_numpy()
    opt = np.maximum(1.0, np.floor(rng.random(len(frame)) * (1 - skill) * nc) + 1)
    out = frame.assign(
        rank_optimistic=opt, rank_realistic=opt, rank_pessimistic=opt, rank_nondeterministic=opt
    )
    return out.sample(frac=1.0, random_state=seed)


@pytest.fixture(scope="module")
def three_models():
    base = queries(90, 0)
    return {"a_good": with_ranks(base, 0.8, 1), "b_mid": with_ranks(base, 0.6, 2), "c_same": with_ranks(base, 0.6, 3)}


def table_of(models: dict, seed: int = 0) -> pd.DataFrame:
    return model_comparisons({("d", m, "test", seed): f for m, f in models.items()}, SETTINGS)


def test_one_pair_against_brute_force(three_models):
    table = table_of(three_models)
    assert list(table.columns) == COLUMNS
    assert len(table) == 3 * 3  # three pairs, three metrics
    a, b = (canonical_order(three_models[m]) for m in ("a_good", "b_mid"))
    row = table[(table.model_a == "a_good") & (table.model_b == "b_mid") & (table.metric == "mrr")].iloc[0]
    assert np.isclose(row.difference, np.mean(1 / a.rank_realistic) - np.mean(1 / b.rank_realistic))
    # the interval: the same stratified resamples, drawn as indices, MRR difference on the resampled rows
    n_head = int((a.side == "head").sum())
    head = np.vstack(list(resample_indices(n_head, 200, stream_seed(1, "d", "test", "head"))))
    tail = np.vstack(list(resample_indices(len(a) - n_head, 200, stream_seed(1, "d", "test", "tail"))))
    rows = np.hstack([head, n_head + tail])
    diffs = (1 / a.rank_realistic.to_numpy())[rows].mean(axis=1) - (1 / b.rank_realistic.to_numpy())[rows].mean(axis=1)
    np.testing.assert_allclose((row.ci_low, row.ci_high), percentile_interval(diffs, 0.95))
    # the values are those of tables/metrics.tsv
    for model, frame in (("a_good", a), ("b_mid", b)):
        metrics = compute_metrics(frame)
        metrics = metrics[(metrics.side == "both") & (metrics.rank_type == "realistic")].set_index("metric")["value"]
        mine = table[(table.model_a == model) | (table.model_b == model)]
        for r in mine.itertuples():
            value = r.value_a if r.model_a == model else r.value_b
            assert np.isclose(value, metrics[r.metric]), (model, r.metric)


def test_p_value_agrees_with_scipy_permutation_test(three_models):
    table = table_of(three_models)
    a, c = (canonical_order(three_models[m]).rank_realistic.to_numpy() for m in ("a_good", "c_same"))
    nc = canonical_order(three_models["a_good"]).num_candidates.to_numpy()
    expected_mr = np.mean((nc + 1) / 2)
    for metric, fa, fc in (
        ("mrr", 1 / a, 1 / c),
        ("hits@10", (a <= 10) * 1.0, (c <= 10) * 1.0),
        ("amri", -a / (expected_mr - 1), -c / (expected_mr - 1)),
    ):
        row = table[(table.model_a == "a_good") & (table.model_b == "c_same") & (table.metric == metric)].iloc[0]
        assert np.isclose(row.difference, np.mean(fa - fc))
        reference = stats.permutation_test(
            (fa, fc), lambda x, y: np.mean(x - y), permutation_type="samples", n_resamples=2000, random_state=0
        ).pvalue
        p = 0.5 * (row.p_value + reference)
        assert abs(row.p_value - reference) <= 4 * np.sqrt(2 * p * (1 - p) / 2000) + 2 / 2000, metric


def test_holm_significance_and_winner(three_models):
    table = table_of(three_models)
    for _, group in table.groupby("metric"):
        p = np.sort(group.p_value.to_numpy())
        assert np.isclose(group.p_holm.min(), min(1.0, 3 * p[0]))
    assert (table.significant == (table.p_holm <= 0.05)).all()
    winners = table[table.significant]
    assert not winners.empty
    assert (np.where(winners.difference > 0, winners.model_a, winners.model_b) == winners.winner).all()
    assert (table[~table.significant].winner == "none").all()


def test_different_candidate_counts_are_an_error_naming_the_files(three_models):
    bad = three_models["b_mid"].copy()
    bad.loc[bad.index[0], "num_candidates"] += 1
    ranks = {("d", "a", "test", 0): three_models["a_good"], ("d", "b", "test", 0): bad}
    sources = {key: f"/x/{key[1]}.parquet" for key in ranks}
    with pytest.raises(ValueError, match="/x/a.parquet and /x/b.parquet .*candidate counts"):
        model_comparisons(ranks, SETTINGS, sources)
    other = three_models["b_mid"].assign(head="zzz")
    with pytest.raises(ValueError, match="same queries"):
        model_comparisons({("d", "a", "test", 0): three_models["a_good"], ("d", "b", "test", 0): other}, SETTINGS)


def test_one_model_per_dataset_gives_a_header_only_file(tmp_path, three_models):
    path = tmp_path / "ranks" / "d" / "only" / "0" / "test.parquet"
    path.parent.mkdir(parents=True)
    write_parquet(three_models["a_good"], path)
    model_comparisons_file([path], tmp_path / "out.tsv", SETTINGS)
    assert (tmp_path / "out.tsv").read_text().strip().split("\t") == COLUMNS


def test_the_figure_draws_the_table_as_antisymmetric_matrices(tmp_path, three_models, monkeypatch):
    paths = []
    for model, frame in three_models.items():
        for seed in (0, 1):
            path = tmp_path / "ranks" / "d" / model / str(seed) / "test.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            write_parquet(frame, path)
            paths.append(path)
    model_comparisons_file(paths, tmp_path / "table.tsv", SETTINGS)
    table = read_tsv(tmp_path / "table.tsv")
    drawn = []
    monkeypatch.setattr(kgeval.plotting, "matrix_panel", lambda ax, m, labels, marks: drawn.append((m, labels, marks)))
    plot_model_comparisons(tmp_path / "table.tsv", "d", tmp_path / "f.pdf", tmp_path / "f.png")
    assert len(drawn) == 2 * 3  # two seeds x three metrics
    models, diff, significant = comparison_matrix(table, "d", "test", 0, "mrr")
    matrix, labels, marks = drawn[0]
    assert labels == models == ["a_good", "b_mid", "c_same"]
    np.testing.assert_array_equal(matrix, diff)
    np.testing.assert_array_equal(marks, significant)
    np.testing.assert_allclose(diff, -diff.T)
    assert np.isnan(np.diag(diff)).all()
    row = table[(table.seed == 0) & (table.metric == "mrr") & (table.model_a == "a_good") & (table.model_b == "c_same")]
    assert diff[0, 2] == row.difference.iloc[0]
    assert significant[0, 2] == significant[2, 0] == bool(row.significant.iloc[0])


def test_the_figure_renders_with_and_without_pairs(tmp_path, three_models):
    table = table_of(three_models)
    table.to_csv(tmp_path / "table.tsv", sep="\t", index=False)
    for dataset in ("d", "lonely"):  # "lonely" has no pairs: a figure saying so
        plot_model_comparisons(tmp_path / "table.tsv", dataset, tmp_path / f"{dataset}.pdf", tmp_path / f"{dataset}.png")
        assert (tmp_path / f"{dataset}.png").stat().st_size > 0
