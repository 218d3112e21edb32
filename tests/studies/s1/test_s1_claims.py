"""S1's claims table: the random-scorer and optimistic-rank rows on built reference tables, and the whole table
written from sweep ranks on disk."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.claims import BY_CONSTRUCTION, NOT_CHECKABLE, read_claims
from kgeval.studies.s1.claims import SweepSetup, s1_claims, write_s1_claims

SETUP = SweepSetup(datasets={"pair": {"source": "pykeen"}}, model={"embedding_dim": 8}, seeds=2)


def _claims(reference=None, rank_types=None) -> dict:
    return {c.claim: c for c in s1_claims({}, SETUP, reference, rank_types)}


@pytest.mark.parametrize("value, computed", [(1.02, "holds"), (1.1, "holds"), (1.5, "differs")])
def test_random_scorer_amr_within_three_std(value, computed):
    reference = pd.DataFrame([{"dataset": "d", "split": "test", "side": "both", "scorer": "random",
                               "rank_type": "realistic", "metric": "amr", "value": value, "expected": 1.0,
                               "expected_std": 0.05}])
    claim = _claims(reference)["s1.amr_random_scorer_is_one"]
    # true whatever the data: its own verdict, never holds or differs; the reason keeps what the z-test gave
    assert claim.verdict == BY_CONSTRUCTION and claim.basis.startswith("by construction: ")
    assert claim.reason.startswith(f"computed: {computed} (max |z| = ")
    assert "true whatever the data: " in claim.reason
    # the interval column shows the quantity judged (z at the point), the +- 1.96 std interval only as context
    z = (value - 1.0) / 0.05
    assert claim.interval.startswith(f"d z = {z:+.2f} (judged: |z| <= 3 at the point")
    assert "AMR +- 1.96 std as context: d [" in claim.interval


def _constant(optimistic_mrr: float) -> pd.DataFrame:
    rows = [("optimistic", "mrr", optimistic_mrr), ("optimistic", "hits@1", optimistic_mrr),
            ("realistic", "amr", 1.0), ("realistic", "mrr", 0.01)]
    return pd.DataFrame([{"dataset": "d", "split": "test", "side": "both", "scorer": "constant", "rank_type": rt,
                          "metric": m, "value": v, "expected": v, "expected_std": 0.0} for rt, m, v in rows])


@pytest.mark.parametrize("optimistic, computed", [(1.0, "holds"), (0.5, "differs")])
def test_the_optimistic_rank_rewards_a_model_that_ties_everything(optimistic, computed):
    rank_types = pd.DataFrame([{"dataset": "d", "model": "m", "seed": 0, "split": "test", "side": "both",
                                "metric": "mrr", "optimistic": 0.3, "realistic": 0.3, "pessimistic": 0.3,
                                "nondeterministic": 0.3, "spread": 1e-8, "rel_spread": 3e-8}])
    claim = _claims(_constant(optimistic), rank_types)["s1.optimistic_rank_favours_ties"]
    assert claim.verdict == BY_CONSTRUCTION and claim.reason.startswith(f"computed: {computed}")
    assert "d: optimistic MRR" in claim.kgeval
    assert "at most 3e-08 (relative) over 1 runs" in claim.kgeval
    assert _claims()["s1.optimistic_rank_favours_ties"].verdict == NOT_CHECKABLE


def _pool(t: int, rng) -> pd.DataFrame:
    a, b = [f"a{i}" for i in range(t)], [f"b{i}" for i in range(t)]
    return pd.DataFrame({"num_test": t, "source": a + b, "target": b + a, "side": ["left"] * t + ["right"] * t,
                         "rank_realistic": rng.integers(1, t // 5, 2 * t).astype(float), "num_candidates": t})


def test_written_table_is_a_valid_claims_table(tmp_path):
    for num_train in (0, 50):
        for seed in (0, 1):  # one sweep's ranks per split seed: three nested pools, both directions
            ranks = tmp_path / "testsize" / "pair" / str(num_train) / str(seed) / "ranks.parquet"
            ranks.parent.mkdir(parents=True)
            rng = np.random.default_rng(seed + num_train)
            pd.concat([_pool(t, rng) for t in (100, 200, 400)]).to_parquet(ranks)
    ranks_paths = sorted((tmp_path / "testsize").rglob("ranks.parquet"))
    uncertainty = {"resamples": 100, "permutations": 10, "seed": 0, "level": 0.95}
    write_s1_claims(ranks_paths, SETUP, tmp_path / "s1.tsv", uncertainty)
    table = read_claims(tmp_path / "s1.tsv").set_index("claim")
    assert list(table.index) == sorted(table.index)
    assert "pair/0" in table.loc["s1.fig1_mr_grows_with_test_size", "kgeval"]
    assert table.loc["s1.fig1_amr_orders_training_sizes", "kgeval"].startswith("pair at t=400: k=0 ")
    assert table.loc["s1.fig1_mr_grows_with_test_size", "basis"].startswith("stand-in: GCN-Align sweep with EA pair")
