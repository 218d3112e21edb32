"""Tests of kgeval.metrics against independent definitions, brute-force enumeration and simulation.

The reference implementations below are written from the definitions in Hoyt et al. (2022, Sec. 2-4, Appendix B)
and Berrendorf et al. (2020): they share no code with PyKEEN. Exact moments come from enumerating every rank vector
of tiny candidate sets (each rank uniform on 1..N_i, independent), never from the code under test.
"""

from __future__ import annotations

import functools
import itertools
import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from pykeen.metrics.ranking import rank_based_metric_resolver

from kgeval.metrics import (
    HITS_K,
    INTERVAL_COLUMNS,
    METHOD_CLOSED_FORM,
    METHOD_MONTE_CARLO,
    METRICS,
    RANK_TYPES,
    collate,
    compute_metrics,
    expectations,
    expectations_table,
    get_metric,
    supported_rank_types,
)

# ----------------------------------------------------------------------------------------------------------------------
# independent reference definitions


def _base_value(key: str, r: np.ndarray) -> float:
    r = np.asarray(r, dtype=float)
    if key.startswith("hits@"):
        return float(np.mean(r <= int(key.split("@")[1])))
    median = float(np.median(r))
    return {
        "mr": lambda: float(np.mean(r)),
        "mrr": lambda: float(np.mean(1.0 / r)),
        "gmr": lambda: float(np.exp(np.mean(np.log(r)))),
        "hmr": lambda: float(len(r) / np.sum(1.0 / r)),
        "igmr": lambda: float(np.exp(-np.mean(np.log(r)))),
        "imr": lambda: float(1.0 / np.mean(r)),
        "medr": lambda: median,
        "imedr": lambda: 1.0 / median,
        "std": lambda: float(np.std(r)),
        "var": lambda: float(np.var(r)),
        # scaled to be a consistent estimator of the standard deviation of a normal distribution
        "mad": lambda: float(np.median(np.abs(r - median)) / NormalDist().inv_cdf(0.75)),
        "count": lambda: float(len(r)),
    }[key]()


def _exact_base_moments(key: str, nc: np.ndarray) -> tuple[float, float]:
    """Exact E and V of a mean-type base metric by summing each task's uniform distribution (independent tasks)."""
    return _exact_base_moments_cached(key, tuple(int(c) for c in nc))


@functools.lru_cache(maxsize=None)
def _exact_base_moments_cached(key: str, nc: tuple[int, ...]) -> tuple[float, float]:
    n = len(nc)
    if key == "gmr":
        # GMR = prod_i r_i^(1/n): product of independent factors
        e1 = [np.mean(np.arange(1, c + 1, dtype=float) ** (1.0 / n)) for c in nc]
        e2 = [np.mean(np.arange(1, c + 1, dtype=float) ** (2.0 / n)) for c in nc]
        e = float(np.prod(e1))
        return e, float(np.prod(e2) - e**2)
    if key == "mr":
        f = lambda x: x  # noqa: E731
    elif key == "mrr":
        f = lambda x: 1.0 / x  # noqa: E731
    elif key.startswith("hits@"):
        k = int(key.split("@")[1])
        f = lambda x: (x <= k).astype(float)  # noqa: E731
    else:
        raise KeyError(key)
    means, variances = [], []
    for c in nc:
        values = f(np.arange(1, c + 1, dtype=float))
        means.append(values.mean())
        variances.append(values.var())
    return float(np.mean(means)), float(np.sum(variances) / n**2)


def reference(key: str, r: np.ndarray, nc: np.ndarray) -> float:
    """The metric by its definition (Berrendorf et al. 2020, Eq. AMR/AMRI; Hoyt et al. 2022, Sec. 4.1, App. B)."""
    spec = get_metric(key)
    if spec.kind not in ("adjusted", "z"):
        return _base_value(key, r)
    m = _base_value(spec.base, r)
    e, v = _exact_base_moments(spec.base, nc)
    if key == "amr":
        return m / e  # AMR = MR / E[MR]
    if key == "amri":
        return 1.0 - (m - 1.0) / (e - 1.0)  # AMRI = 1 - (MR - 1) / (E[MR] - 1)
    if spec.kind == "adjusted":
        # re-indexed: the optimum (1 for every base here: MRR, Hits@k, GMR) maps to 1, the expectation to 0
        return (m - e) / (1.0 - e)
    sign = 1.0 if spec.base in ("mrr",) or spec.base.startswith("hits@") else -1.0
    return sign * (m - e) / math.sqrt(v)


def _metric_value(key: str, r: np.ndarray, nc: np.ndarray) -> float:
    return float(METRICS[key].instantiate()(ranks=np.asarray(r, dtype=float), num_candidates=np.asarray(nc)))


def _enumerate(nc: tuple[int, ...]) -> np.ndarray:
    """shape: (prod(nc), len(nc)) every rank vector."""
    return np.array(list(itertools.product(*(range(1, c + 1) for c in nc))), dtype=float)


ALL_KEYS = list(METRICS)
PERFORMANCE_KEYS = [k for k, s in METRICS.items() if s.kind in ("base", "adjusted", "z")]
TINY = [(2, 3, 4), (3, 3, 2, 4), (2, 11, 3)]  # the last has one N_i > 10 so that every Hits@k is non-degenerate


# ----------------------------------------------------------------------------------------------------------------------
# registry


def test_registry_has_the_keys_of_the_design():
    required = {"mr", "mrr", "gmr", "hmr", "igmr", "imr", "amr", "amri", "amrr", "agmri", "zmr", "zmrr", "zgmr"}
    for k in (1, 3, 5, 10):
        required |= {f"hits@{k}", f"ah@{k}", f"zh@{k}"}
    assert required <= set(METRICS)
    assert set(HITS_K) == {1, 3, 5, 10}


def test_every_pykeen_rank_metric_class_is_registered():
    registered = {spec.cls for spec in METRICS.values()}
    missing = set(rank_based_metric_resolver.lookup_dict.values()) - registered
    assert not missing, f"PyKEEN rank metrics without a kgeval key: {sorted(c.__name__ for c in missing)}"


def test_every_registry_entry_has_a_reference():
    rng = np.random.default_rng(0)
    nc = np.array([20, 30, 40])
    for key in METRICS:
        assert np.isfinite(reference(key, rng.integers(1, 20, size=3), nc)), key


def test_unknown_metric_lists_known_ones():
    with pytest.raises(KeyError, match="known metrics: mr, mrr"):
        get_metric("nope")


# ----------------------------------------------------------------------------------------------------------------------
# generic per-metric tests


@pytest.mark.parametrize("key", ALL_KEYS)
def test_value_matches_definition(key):
    rng = np.random.default_rng(1)
    nc = rng.integers(11, 60, size=25)
    for r in (
        np.ones(25),
        nc.astype(float),
        rng.integers(1, nc + 1).astype(float),
        rng.integers(1, nc + 1) + 0.5 * (nc > 12),
    ):
        r = np.minimum(r, nc)
        assert _metric_value(key, r, nc) == pytest.approx(reference(key, r, nc), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("key", PERFORMANCE_KEYS)
def test_best_and_worst(key):
    nc = np.array([11, 20, 50, 100])
    best, worst = _metric_value(key, np.ones(4), nc), _metric_value(key, nc, nc)
    spec = METRICS[key]
    assert (best > worst) if spec.increasing else (best < worst)
    if spec.kind == "base" and not spec.increasing:
        assert best == pytest.approx(1.0)  # MR, GMR, HMR, MedR: all ranks 1
    if spec.kind == "adjusted" and key != "amr":
        assert best == pytest.approx(1.0)  # re-indexed: optimum 1
    if key == "amri":
        # equal N_i: the pessimum is exactly -1
        assert _metric_value(key, np.full(4, 30.0), np.full(4, 30)) == pytest.approx(-1.0)


@pytest.mark.parametrize("key", PERFORMANCE_KEYS)
def test_monotonicity(key):
    """Making one rank worse never makes the metric better (strictly, unless the metric is locally flat)."""
    rng = np.random.default_rng(2)
    nc = rng.integers(11, 40, size=9)
    sign = 1.0 if METRICS[key].increasing else -1.0
    for _ in range(20):
        r = rng.integers(1, nc).astype(float)  # strictly below N_i so every rank can grow
        before = sign * _metric_value(key, r, nc)
        for i in range(len(r)):
            worse = r.copy()
            worse[i] += 1
            assert sign * _metric_value(key, worse, nc) <= before + 1e-12


def _degenerate(key: str, nc: tuple[int, ...]) -> bool:
    """An adjusted/z metric is undefined when its base has zero variance (e.g. Hits@5 with every N_i <= 5)."""
    spec = METRICS[key]
    return spec.kind in ("adjusted", "z") and _exact_base_moments(spec.base, np.asarray(nc))[1] == 0.0


@pytest.mark.parametrize(("key", "nc"), [(k, nc) for nc in TINY for k in ALL_KEYS if not _degenerate(k, nc)], ids=str)
def test_brute_force_enumeration(key, nc):
    """Enumerate every rank vector: the metric equals its definition on each; the exact moments equal the table's."""
    vectors = _enumerate(nc)
    nc_arr = np.asarray(nc)
    metric = METRICS[key].instantiate()
    values = np.array([metric(ranks=v, num_candidates=nc_arr) for v in vectors])
    expected = np.array([reference(key, v, nc_arr) for v in vectors])
    np.testing.assert_allclose(values, expected, rtol=1e-9, atol=1e-12)
    exact_e, exact_v = float(values.mean()), float(values.var())
    num_samples = 1000
    row = expectations(nc_arr, metrics=[key], num_samples=num_samples, seed=3).iloc[0]
    assert row["n_ranks"] == len(nc)
    if row["method"] == METHOD_CLOSED_FORM:
        assert row["expectation"] == pytest.approx(exact_e, rel=1e-9, abs=1e-12)
        assert row["variance"] == pytest.approx(exact_v, rel=1e-9, abs=1e-12)
    else:
        assert row["method"] == METHOD_MONTE_CARLO
        # 5-sigma intervals of the sample mean and of the sample variance, from the exact distribution
        se_mean = math.sqrt(exact_v / num_samples)
        mu4 = float(np.mean((values - exact_e) ** 4))
        se_var = math.sqrt(max(mu4 - exact_v**2 * (num_samples - 3) / (num_samples - 1), 0.0) / num_samples)
        assert abs(row["expectation"] - exact_e) <= 5 * se_mean + 1e-12
        assert abs(row["variance"] - exact_v) <= 5 * se_var + 1e-12


@pytest.mark.parametrize("key", ["mr", "mrr", "gmr", "hits@1", "amri", "amrr", "zmrr", "zgmr"])
def test_enumeration_of_all_rankings(key):
    """Enumerate every ordering of the candidates of 3 queries (2!, 3! and 4! orderings, 288 in all): the true
    entity's position gives the rank; the mean and variance of the metric over all orderings are the table's."""
    nc = (2, 3, 4)
    metric = METRICS[key].instantiate()
    values = []
    for orderings in itertools.product(*(itertools.permutations(range(c)) for c in nc)):
        ranks = np.array([ordering.index(0) + 1 for ordering in orderings], dtype=float)  # entity 0 is the true one
        values.append(metric(ranks=ranks, num_candidates=np.asarray(nc)))
    values = np.asarray(values)
    assert len(values) == 2 * 6 * 24
    row = expectations(np.asarray(nc), metrics=[key]).iloc[0]
    assert row["method"] == METHOD_CLOSED_FORM
    assert row["expectation"] == pytest.approx(values.mean(), rel=1e-9, abs=1e-12)
    assert row["variance"] == pytest.approx(values.var(), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("key", [k for k, s in METRICS.items() if s.kind in ("adjusted", "z")])
def test_adjusted_and_z_moments_by_brute_force(key):
    """Adjusted indices have expectation 0 (AMR: 1) and z-scores expectation 0 and variance 1, exactly."""
    nc = (2, 11, 3, 4)
    metric = METRICS[key].instantiate()
    values = np.array([metric(ranks=v, num_candidates=np.asarray(nc)) for v in _enumerate(nc)])
    assert values.mean() == pytest.approx(1.0 if key == "amr" else 0.0, abs=1e-9)
    if METRICS[key].kind == "z":
        assert values.var() == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("key", ALL_KEYS)
def test_closed_form_against_simulation(key):
    """On a larger candidate set, the table's moments lie in the confidence interval of an independent simulation."""
    rng = np.random.default_rng(4)
    nc = rng.integers(11, 3000, size=300)
    num_samples = 2000
    # simulate with the reference definitions (fast, and independent of the code under test)
    sims = np.array([reference(key, rng.integers(1, nc + 1).astype(float), nc) for _ in range(num_samples)])
    row = expectations(nc, metrics=[key], num_samples=1000, seed=5).iloc[0]
    mean, var = sims.mean(), sims.var(ddof=1)
    mc_slack = 1.0 if row["method"] == METHOD_CLOSED_FORM else math.sqrt(1 + num_samples / 1000)
    se_mean = math.sqrt(var / num_samples) * mc_slack
    assert abs(row["expectation"] - mean) <= 5 * se_mean + 1e-12
    mu4 = float(np.mean((sims - mean) ** 4))
    se_var = math.sqrt(max(mu4 - var**2, 0.0) / num_samples) * mc_slack
    assert abs(row["variance"] - var) <= 5 * se_var + 1e-12


# ----------------------------------------------------------------------------------------------------------------------
# tables


def _ranks_frame(seed: int = 0, n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    nc = rng.integers(11, 80, size=n)
    opt = rng.integers(1, nc + 1)
    pes = np.minimum(opt + rng.integers(0, 3, size=n), nc)
    return pd.DataFrame(
        {
            "head": "h",
            "relation": "r",
            "tail": "t",
            "side": np.where(np.arange(n) % 3 == 0, "head", "tail"),
            "rank_optimistic": opt.astype(float),
            "rank_realistic": (opt + pes) / 2,
            "rank_pessimistic": pes.astype(float),
            "rank_nondeterministic": np.minimum(opt + 1, pes).astype(float),
            "num_candidates": nc,
            "score": 0.0,
        }
    )


def test_compute_metrics_sides_and_rank_types():
    df = _ranks_frame()
    table = compute_metrics(df)
    assert list(table.columns) == ["side", "rank_type", "metric", "value"]
    assert set(table["side"]) == {"head", "tail", "both"}
    for (side, rank_type, key), value in table.set_index(["side", "rank_type", "metric"])["value"].items():
        sub = df if side == "both" else df[df["side"] == side]
        assert rank_type in supported_rank_types(key)
        r, nc = sub[f"rank_{rank_type}"].to_numpy(), sub["num_candidates"].to_numpy()
        assert value == pytest.approx(reference(key, r, nc), rel=1e-9, abs=1e-12)
    # every metric appears for each side and each rank type it supports
    assert len(table) == 3 * sum(len(supported_rank_types(k)) for k in METRICS)
    # adjusted and z metrics only for realistic ranks, as in PyKEEN
    assert set(table.loc[table["metric"] == "zmrr", "rank_type"]) == {"realistic"}
    assert set(table.loc[table["metric"] == "mrr", "rank_type"]) == set(RANK_TYPES)


def test_degenerate_adjusted_metrics_are_nan():
    df = _ranks_frame(n=12)
    df["num_candidates"] = 4
    for t in RANK_TYPES:
        df[f"rank_{t}"] = df[f"rank_{t}"].clip(upper=4)
    table = compute_metrics(df, metrics=["hits@5", "ah@5", "zh@5", "ah@3", "amrr"]).set_index(
        ["side", "rank_type", "metric"]
    )
    assert table.loc[("both", "realistic", "hits@5"), "value"] == 1.0
    assert np.isnan(table.loc[("both", "realistic", "ah@5"), "value"])
    assert np.isnan(table.loc[("both", "realistic", "zh@5"), "value"])
    assert np.isfinite(table.loc[("both", "realistic", "ah@3"), "value"])
    assert np.isfinite(table.loc[("both", "realistic", "amrr"), "value"])


def test_compute_metrics_rejects_bad_input():
    df = _ranks_frame()
    with pytest.raises(ValueError, match=r"lacks columns \['rank_nondeterministic'\]"):
        compute_metrics(df.drop(columns="rank_nondeterministic"), source="x.parquet")
    bad = df.copy()
    bad.loc[4, "rank_pessimistic"] = bad.loc[4, "num_candidates"] + 1
    with pytest.raises(ValueError, match="row 4"):
        compute_metrics(bad)
    bad = df.copy()
    bad.loc[0, "side"] = "left"
    with pytest.raises(ValueError, match="left"):
        compute_metrics(bad)


def test_expectations_table_sides():
    df = _ranks_frame(n=30)
    table = expectations_table(df, "nations", "test", metrics=["mr", "hmr"], num_samples=50)
    assert list(table.columns) == ["dataset", "split", "side", "metric", "n_ranks", "expectation", "variance", "method"]
    both = table[(table["side"] == "both") & (table["metric"] == "mr")].iloc[0]
    assert both["n_ranks"] == 30
    assert both["expectation"] == pytest.approx(np.mean((df["num_candidates"] + 1) / 2))
    heads = table[(table["side"] == "head")]
    assert set(heads["n_ranks"]) == {int((df["side"] == "head").sum())}


def test_expectations_is_deterministic_by_seed():
    nc = np.arange(11, 60)
    a = expectations(nc, metrics=["hmr", "medr"], num_samples=100, seed=7)
    b = expectations(nc, metrics=["medr", "hmr"], num_samples=100, seed=7)
    pd.testing.assert_frame_equal(a.set_index("metric").sort_index(), b.set_index("metric").sort_index())
    with pytest.raises(ValueError, match="integers >= 1"):
        expectations(np.array([0, 3]))


def test_collate(tmp_path):
    paths = []
    for dataset, model, seed in [("nations", "transe", 0), ("kinships", "rotate", 1)]:
        p = tmp_path / "metrics" / dataset / model / str(seed) / "test.tsv"
        p.parent.mkdir(parents=True)
        compute_metrics(_ranks_frame(seed), metrics=["mrr"]).to_csv(p, sep="\t", index=False)
        paths.append(p)
    table = collate(paths)
    assert list(table.columns) == ["dataset", "model", "seed", "split", "side", "rank_type", "metric", "value"]
    assert set(table["dataset"]) == {"nations", "kinships"}
    assert table["seed"].dtype.kind == "i"
    assert table.equals(table.sort_values(["dataset", "model", "seed", "split", "side", "rank_type", "metric"]))
    bad = tmp_path / "metrics" / "x" / "y" / "notaseed" / "test.tsv"
    bad.parent.mkdir(parents=True)
    bad.write_text("side\trank_type\tmetric\tvalue\n")
    with pytest.raises(ValueError, match="integer seed"):
        collate([bad])


def test_collate_keeps_the_interval_columns(tmp_path):
    """Per-model tables with bootstrap intervals (kgeval.uncertainty.bootstrap_metrics) collate with their columns."""
    p = tmp_path / "metrics" / "nations" / "transe" / "0" / "test.tsv"
    p.parent.mkdir(parents=True)
    frame = compute_metrics(_ranks_frame(0), metrics=["mrr"]).assign(ci_low=0.1, ci_high=0.9, ci_method="bootstrap")
    frame.to_csv(p, sep="\t", index=False)
    table = collate([p])
    assert list(table.columns)[-4:] == ["value", *INTERVAL_COLUMNS]
    assert (table["ci_method"] == "bootstrap").all()
    frame[["side", "rank_type", "metric", "value", "ci_low"]].to_csv(p, sep="\t", index=False)
    with pytest.raises(ValueError, match="columns"):
        collate([p])
