"""S4 analyses: Kendall tau pipeline with known answers, categories, re-weighting (stability and discriminative
power: test_s4_stability.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s4.analysis import kendall_tau, kendall_tau_batch, tau_by_category, tau_by_depth, tau_reweighted


def brute_tau(x, y) -> float:
    """Kendall's tau-a by counting pairs (equals tau-b without ties)."""
    pairs = list(itertools.combinations(range(len(x)), 2))
    s = sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i, j in pairs)
    return s / len(pairs)


def test_kendall_tau_known_answers() -> None:
    assert kendall_tau([4, 3, 2, 1], [4, 3, 2, 1])[0] == pytest.approx(1.0)
    assert kendall_tau([4, 3, 2, 1], [1, 2, 3, 4])[0] == pytest.approx(-1.0)
    assert kendall_tau([4, 3, 2, 1], [4, 2, 3, 1])[0] == pytest.approx(4 / 6)  # one discordant pair of six
    rng = np.random.default_rng(0)
    for _ in range(20):
        x, y = rng.random(13), rng.random(13)
        assert kendall_tau(x, y)[0] == pytest.approx(brute_tau(x, y))
    # 13 systems, 78 pairs: 30 concordant and 48 discordant give (30 - 48) / 78, the paper's -0.2308 in Fig. 3
    assert (30 - 48) / 78 == pytest.approx(-0.2308, abs=1e-4)
    assert np.isnan(kendall_tau([1, 1, 1], [1, 2, 3])[0])


def test_kendall_tau_counts_only_the_systems_it_ranks() -> None:
    """A system without a value at one level is left out of the tau, and the count says so."""
    result = kendall_tau([4, 3, np.nan, 1], [4, 3, 2, 1])
    assert result.tau == pytest.approx(1.0) and result.num_systems == 3
    assert kendall_tau([1, np.nan], [1, 2]).num_systems == 1
    systems = ["A", "B", "C", "D"]
    rows = [("sparse", s, "micro", "mrr", v) for s, v in zip(systems, [0.4, 0.3, 0.2, 0.1])]
    rows += [("depth1", s, "micro", "mrr", v) for s, v in zip(systems[:3], [0.4, 0.3, 0.2])]  # D has no value
    out = tau_by_depth(pd.DataFrame(rows, columns=["level", "system", "family", "metric", "value"]))
    out = out.set_index("level")["num_systems"]
    assert out["sparse"] == 4 and out["depth1"] == 3


def test_tau_by_depth_known_answer() -> None:
    systems = ["A", "B", "C", "D"]
    values = {
        "sparse": [0.4, 0.3, 0.2, 0.1],
        "depth1": [0.4, 0.2, 0.3, 0.1],  # one swap: tau 2/3
        "depth2": [0.1, 0.2, 0.3, 0.4],  # reversed: tau -1
        "original": [0.5, 0.4, 0.3, 0.2],
    }
    rows = [(level, s, "micro", "mrr", v) for level, vs in values.items() for s, v in zip(systems, vs)]
    # MR: lower is better; the same orders expressed as ranks keep the same tau
    rows += [(level, s, "micro", "mr", 1 / v) for level, vs in values.items() for s, v in zip(systems, vs)]
    metrics = pd.DataFrame(rows, columns=["level", "system", "family", "metric", "value"])
    out = tau_by_depth(metrics).set_index(["metric", "level"])["tau"]
    for metric in ("mrr", "mr"):
        assert out[(metric, "sparse")] == pytest.approx(1.0)
        assert out[(metric, "depth1")] == pytest.approx(2 / 3)
        assert out[(metric, "depth2")] == pytest.approx(-1.0)
        assert out[(metric, "original")] == pytest.approx(1.0)


def answers_for(systems_ranks: dict[str, dict[str, list[float]]]) -> pd.DataFrame:
    """An answers table: per system and level a list of ranks over fixed answers (relation r<i % 2>, side alternating)."""
    rows = []
    for system, levels in systems_ranks.items():
        for level, ranks in levels.items():
            for i, rank in enumerate(ranks):
                side = "head" if i % 2 == 0 else "tail"
                rows.append(
                    (level, system, side, f"r{i % 3}", f"h{i}", f"t{i}", f"t{i}" if side == "head" else f"h{i}", rank)
                )
    return pd.DataFrame(rows, columns=["level", "system", "side", "relation", "head", "tail", "anchor", "rank"])


def test_tau_by_category_known_answer() -> None:
    # answers i = 0..5: relation r0, r1, r2, r0, r1, r2; sides head, tail, head, tail, head, tail
    # categories: r0 -> 1-1, r1 -> N-N, r2 -> 1-N; so (head, 1-1) = answer 0, (tail, 1-1) = answer 3, ...
    ranks = {
        "A": {"sparse": [1, 1, 1, 1, 1, 1], "depth2": [1, 5, 1, 1, 1, 1]},
        "B": {"sparse": [2, 2, 2, 2, 2, 2], "depth2": [2, 2, 2, 2, 2, 2]},
        "C": {"sparse": [3, 3, 3, 3, 3, 3], "depth2": [3, 1, 3, 3, 3, 3]},
    }
    answers = answers_for(ranks)
    out = tau_by_category(answers, {"r0": "1-1", "r1": "N-N", "r2": "1-N"}, level="depth2", hits_at=(1,))
    out = out.set_index(["side", "category", "metric"])["tau"]
    assert out[("head", "1-1", "mrr")] == pytest.approx(1.0)
    # (tail, N-N) holds answer 1: sparse order A > B > C, pooled C > B > A: reversed
    assert out[("tail", "N-N", "mrr")] == pytest.approx(-1.0)
    assert np.isnan(out[("head", "N-1", "mrr")])  # no answer in that cell


def test_tau_reweighted_by_hand() -> None:
    # sparse: one answer per relation r0, r1 (weights 1:1); pooled adds two more r0 answers
    answers = pd.DataFrame(
        [
            ("sparse", "A", "head", "r0", "a", "b", "b", 1.0),
            ("sparse", "A", "head", "r1", "c", "d", "d", 4.0),
            ("sparse", "B", "head", "r0", "a", "b", "b", 2.0),
            ("sparse", "B", "head", "r1", "c", "d", "d", 1.0),
            ("deep", "A", "head", "r0", "a", "b", "b", 1.0),
            ("deep", "A", "head", "r1", "c", "d", "d", 4.0),
            ("deep", "A", "head", "r0", "e", "b", "b", 1.0),
            ("deep", "A", "head", "r0", "f", "b", "b", 1.0),
            ("deep", "B", "head", "r0", "a", "b", "b", 2.0),
            ("deep", "B", "head", "r1", "c", "d", "d", 1.0),
            ("deep", "B", "head", "r0", "e", "b", "b", 2.0),
            ("deep", "B", "head", "r0", "f", "b", "b", 2.0),
        ],
        columns=["level", "system", "side", "relation", "head", "tail", "anchor", "rank"],
    )
    answers["level"] = answers["level"].replace("deep", "depth3")
    out = tau_reweighted(answers, level="depth3", hits_at=(1,)).set_index(["distribution", "metric"])["tau"]
    # MRR sparse: A = (1 + 1/4)/2 = .625, B = (1/2 + 1)/2 = .75 -> B ahead
    # complete weights (3:1): A = .75*1 + .25*.25 = .8125, B = .75*.5 + .25*1 = .625 -> A ahead: tau -1
    # sparse weights (1:1): A = .625, B = .75 -> same as sparse: tau 1
    assert out[("complete", "mrr")] == pytest.approx(-1.0)
    assert out[("sparse", "mrr")] == pytest.approx(1.0)


def test_batched_tau_equals_scipy() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, size=(7, 9, 5)).astype(float)  # many ties
    y = rng.integers(0, 4, size=(9, 5)).astype(float)
    y[:, 4] = 1.0  # a constant reference: undefined
    got = kendall_tau_batch(x, y)
    for i in range(7):
        for m in range(5):
            want = kendall_tau(x[i, :, m], y[:, m])[0]
            assert (np.isnan(want) and np.isnan(got[i, m])) or got[i, m] == pytest.approx(want)
