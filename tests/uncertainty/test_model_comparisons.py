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
    ComparedMetrics,
    comparison_matrix,
    model_comparisons,
    model_comparisons_file,
    plot_model_comparisons,
)
from kgeval.uncertainty.resampling import percentile_interval, resample_indices, stream_seed

SETTINGS = BootstrapSettings(resamples=200, permutations=2000, level=0.95, seed=1)


def queries(n: int, seed: int) -> pd.DataFrame:
    """``n // 2`` distinct test triples, each with its head and its tail query."""
    rng = np.random.default_rng(seed)
    t = n // 2
    heads = rng.permutation(200)[:t].astype(str)
    tails = rng.integers(0, 200, t).astype(str)
    return pd.DataFrame(
        {
            "head": np.tile(heads, 2),
            "relation": "r",
            "tail": np.tile(tails, 2),
            "side": ["head"] * t + ["tail"] * t,
            "num_candidates": rng.integers(5, 40, 2 * t),
        }
    )


def triple_sums(frame: pd.DataFrame, values: np.ndarray) -> np.ndarray:
    """Per test triple (in the canonical head order), the sum of its head and tail queries' values."""
    keys = list(zip(frame["head"], frame["relation"], frame["tail"]))
    order = {k: i for i, k in enumerate(dict.fromkeys(k for k, side in zip(keys, frame["side"]) if side == "head"))}
    out = np.zeros(len(order))
    np.add.at(out, [order[k] for k in keys], values)
    return out


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
    # the interval: the same test triples drawn as indices, each bringing its head and its tail query
    n_head = int((a.side == "head").sum())
    assert 2 * n_head == len(a) and (a["head"].to_numpy()[:n_head] == a["head"].to_numpy()[n_head:]).all()
    drawn = np.vstack(list(resample_indices(n_head, 200, stream_seed(1, "d", "test", "triples"))))
    rows = np.hstack([drawn, n_head + drawn])
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


def test_configured_metrics_and_rank_type_are_those_of_the_metrics_table(three_models):
    """MRR, Hits@1 and Hits@3 of the pessimistic rank (models whose pessimistic ranks differ from the others)."""
    models = {m: f.assign(rank_pessimistic=f["rank_realistic"] + 1.0) for m, f in three_models.items()}
    compared = ComparedMetrics(("hits@1", "hits@3", "mrr"), "pessimistic")
    table = model_comparisons({("d", m, "test", 0): f for m, f in models.items()}, SETTINGS, compared=compared)
    assert set(table["metric"]) == {"hits@1", "hits@3", "mrr"} and set(table["rank_type"]) == {"pessimistic"}
    for model, frame in models.items():
        metrics = compute_metrics(frame)
        metrics = metrics[(metrics.side == "both") & (metrics.rank_type == "pessimistic")].set_index("metric")["value"]
        for r in table[table.model_a == model].itertuples():
            assert np.isclose(r.value_a, metrics[r.metric]), (model, r.metric)
            other = compute_metrics(models[r.model_b])
            other = other[(other.side == "both") & (other.rank_type == "pessimistic")].set_index("metric")["value"]
            assert np.isclose(r.difference, metrics[r.metric] - other[r.metric])


@pytest.mark.parametrize("metrics, rank_type, match", [
    (("mr",), "realistic", r"\['mr'\] cannot be compared"),
    (("hits@0",), "realistic", "hits@0"),
    (("mrr",), "best", "unknown 'best'"),
    (("amri",), "optimistic", "amri is defined for the realistic rank only"),
])
def test_metrics_that_cannot_be_compared_are_refused(metrics, rank_type, match):
    with pytest.raises(ValueError, match=match):
        ComparedMetrics(metrics, rank_type)


def test_p_value_agrees_with_scipy_permutation_test_over_triples(three_models):
    """The sign flips act on whole test triples: scipy's paired permutation test of the per-triple sums."""
    table = table_of(three_models)
    ordered = canonical_order(three_models["a_good"])
    a, c = (canonical_order(three_models[m]).rank_realistic.to_numpy() for m in ("a_good", "c_same"))
    nc = ordered.num_candidates.to_numpy()
    expected_mr = np.mean((nc + 1) / 2)
    for metric, fa, fc in (
        ("mrr", 1 / a, 1 / c),
        ("hits@10", (a <= 10) * 1.0, (c <= 10) * 1.0),
        ("amri", -a / (expected_mr - 1), -c / (expected_mr - 1)),
    ):
        row = table[(table.model_a == "a_good") & (table.model_b == "c_same") & (table.metric == metric)].iloc[0]
        assert np.isclose(row.difference, np.mean(fa - fc))
        reference = stats.permutation_test(
            (triple_sums(ordered, fa), triple_sums(ordered, fc)),
            lambda x, y: np.mean(x - y),
            permutation_type="samples",
            n_resamples=2000,
            random_state=0,
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


def correlated_null(rng: np.random.Generator, t: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two exchangeable models on ``t`` triples whose head and tail queries share a triple effect and a model effect.

    Query quantile ``Phi(0.5 u_t + 0.8 w_tm + 0.33 e_q)``: ``u_t`` the triple's difficulty, ``w_tm`` how model m fits
    the triple (shared by its two queries, so their differences correlate), ``e_q`` the query's noise.
    """
    frame = queries(2 * t, int(rng.integers(1 << 30)))
    frame["num_candidates"] = rng.integers(20, 300, 2 * t)
    u = np.tile(rng.standard_normal(t), 2)
    models = []
    for _ in range(2):
        w = np.tile(rng.standard_normal(t), 2)
        quantile = stats.norm.cdf(0.5 * u + 0.8 * w + 0.33 * rng.standard_normal(2 * t))
        rank = np.minimum(1.0 + np.floor(frame["num_candidates"].to_numpy() * quantile**3), frame["num_candidates"])
        models.append(frame.assign(rank_optimistic=rank, rank_realistic=rank, rank_pessimistic=rank,
                                   rank_nondeterministic=rank))
    return models[0], models[1]


def test_false_positive_rate_under_a_correlated_null_is_nominal():
    """1,000 replications of two exchangeable models whose head and tail differences correlate: the sign-flip test per
    test triple rejects at about 5 % (0.03-0.07); flipping each query alone rejects too often (checked here, so the
    simulation is strong enough to tell the two apart)."""
    from kgeval.uncertainty.comparisons import sign_flip_pvalues
    from kgeval.uncertainty.model_comparisons import compare_models

    rng = np.random.default_rng(2024)
    settings = BootstrapSettings(resamples=1, permutations=199, level=0.95, seed=0)
    rejected, per_query = 0, []
    replications = 1000
    for rep in range(replications):
        a, b = correlated_null(rng, 40)
        table = compare_models({"a": a, "b": b}, "sim", f"r{rep}", settings)
        rejected += float(table.loc[table.metric == "mrr", "p_value"].iloc[0]) <= 0.05
        per_query.append(1.0 / a.rank_realistic.to_numpy() - 1.0 / b.rank_realistic.to_numpy())
    rate = rejected / replications
    assert 0.03 <= rate <= 0.07, rate
    query_rate = float((sign_flip_pvalues(np.vstack(per_query), 199, 1) <= 0.05).mean())
    assert query_rate > 0.08, query_rate
