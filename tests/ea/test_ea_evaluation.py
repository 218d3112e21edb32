"""EA ranks: hand-made ties, a brute-force reference on tiny pairs, chunking, the table and its metrics, and their
invariance under a relabelling of graph 2."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import torch

from kgeval.ea.evaluation import (
    EA_SIDES,
    RANK_COLUMNS,
    ea_metrics,
    ea_ranks_frame,
    rank_alignment,
    rank_alignment_nested,
)

RANK_TYPES = ("optimistic", "pessimistic", "realistic", "nondeterministic")


def test_rank_types_on_hand_made_ties():
    # 1-d representations; pairs (i, i); score = -|a - b| (integers, so every tie is exact)
    left = torch.tensor([[0.0], [0.0], [5.0], [100.0]])
    right = torch.tensor([[1.0], [-1.0], [1.0], [100.0]])
    pairs = np.array([[0, 0], [1, 1], [2, 2], [3, 3]])
    result = rank_alignment(left, right, pairs)
    # worked out by hand (see the distances in the comments)
    expected = {
        # query a=0: d(b)=[1,1,1,100]; a=0: same; a=5: [4,6,4,95]; a=100: [99,101,99,0]
        "left": {
            "optimistic": [1, 1, 1, 1],
            "pessimistic": [3, 3, 2, 1],
            "realistic": [2, 2, 1.5, 1],
            "nondeterministic": [1, 2, 2, 1],
        },
        # query b=1: d(a)=[1,1,4,99]; b=-1: [1,1,6,101]; b=1: [1,1,4,99] (true is the 4); b=100: [100,100,95,0]
        "right": {
            "optimistic": [1, 1, 3, 1],
            "pessimistic": [2, 2, 3, 1],
            "realistic": [1.5, 1.5, 3, 1],
            "nondeterministic": [1, 2, 3, 1],
        },
    }
    for side in EA_SIDES:
        for rank_type in RANK_TYPES:
            np.testing.assert_array_equal(getattr(result[side], f"rank_{rank_type}"), expected[side][rank_type])
        np.testing.assert_array_equal(result[side].num_candidates, [4, 4, 4, 4])
    np.testing.assert_array_equal(result["left"].score, [-1, -1, -4, 0])


def _brute_force(left: np.ndarray, right: np.ndarray, pairs: np.ndarray) -> dict[str, dict[str, list]]:
    """Enumerate every candidate with Python loops; ties broken by candidate position for the non-det. rank."""
    out = {}
    for side in EA_SIDES:
        q_ids, c_ids = (pairs[:, 0], pairs[:, 1]) if side == "left" else (pairs[:, 1], pairs[:, 0])
        q_rep, c_rep = (left, right) if side == "left" else (right, left)
        ranks = {t: [] for t in RANK_TYPES}
        for i, q in enumerate(q_ids):
            dist = [sum(abs(float(x) - float(y)) for x, y in zip(q_rep[q], c_rep[c])) for c in c_ids]
            true = dist[i]
            better = sum(d < true for d in dist)
            equal = sum(d == true for d in dist)  # includes the true candidate
            order = sorted(range(len(dist)), key=lambda j: (dist[j], j))
            ranks["optimistic"].append(1 + better)
            ranks["pessimistic"].append(better + equal)
            ranks["realistic"].append(better + (1 + equal) / 2)
            ranks["nondeterministic"].append(order.index(i) + 1)
        out[side] = ranks
    return out


@pytest.mark.parametrize("seed", range(4))
def test_ea_ranks_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    n1, n2, d, t = 15, 17, 3, 11
    # small integers: many exact ties, exact float arithmetic
    left = rng.integers(0, 3, size=(n1, d)).astype(np.float32)
    right = rng.integers(0, 3, size=(n2, d)).astype(np.float32)
    pairs = np.stack([rng.permutation(n1)[:t], rng.permutation(n2)[:t]], axis=1)
    expected = _brute_force(left, right, pairs)
    for budget in (256.0, 1e-4):  # 1e-4 MiB forces one query row per chunk
        result = rank_alignment(torch.as_tensor(left), torch.as_tensor(right), pairs, memory_budget_mb=budget)
        for side in EA_SIDES:
            for rank_type in RANK_TYPES:
                np.testing.assert_array_equal(
                    getattr(result[side], f"rank_{rank_type}"), expected[side][rank_type], err_msg=f"{side} {rank_type}"
                )
            np.testing.assert_array_equal(result[side].num_candidates, np.full(t, t))


def test_ranks_frame_layout_and_metrics():
    rng = np.random.default_rng(7)
    left = torch.as_tensor(rng.normal(size=(9, 4)), dtype=torch.float32)
    right = torch.as_tensor(rng.normal(size=(8, 4)), dtype=torch.float32)
    pairs = np.array([[0, 3], [4, 1], [8, 7], [2, 0], [5, 5]])
    labels1 = [f"a{i}" for i in range(9)]
    labels2 = [f"b{i}" for i in range(8)]
    table = ea_ranks_frame(rank_alignment(left, right, pairs), pairs, labels1, labels2)
    assert list(table.columns) == ["source", "target", "side", *RANK_COLUMNS]
    assert len(table) == 2 * len(pairs)
    left_rows = table[table["side"] == "left"].set_index("source")
    assert left_rows.loc["a4", "target"] == "b1"
    right_rows = table[table["side"] == "right"].set_index("source")
    assert right_rows.loc["b7", "target"] == "a8"
    expected_score = -float((left[4] - right[1]).abs().sum())
    assert left_rows.loc["a4", "score"] == pytest.approx(expected_score, rel=1e-6)

    metrics = ea_metrics(table, metrics=["mr", "amr", "hits@1"])
    assert set(metrics["side"]) == {"left", "right", "both"}
    value = metrics.set_index(["side", "rank_type", "metric"])["value"]
    realistic = table["rank_realistic"].to_numpy()
    assert value[("both", "realistic", "mr")] == pytest.approx(realistic.mean())
    # AMR (paper 000, Sec. 3.2) = 2 * sum(r) / sum(|S| + 1)
    assert value[("both", "realistic", "amr")] == pytest.approx(
        2 * realistic.sum() / (table["num_candidates"] + 1).sum()
    )
    left_real = table.loc[table["side"] == "left", "rank_realistic"]
    assert value[("left", "realistic", "hits@1")] == pytest.approx((left_real <= 1).mean())


def test_ranks_do_not_change_under_a_relabelling_of_graph2():
    """Graph 2 relabelled (its rows moved to new ids, the test pairs' graph-2 ids mapped, the pairs kept in order):
    every rank type, score and the ranks table are identical, ties included (candidates are the test-side entities
    in the order of the test pairs, not of the ids)."""
    rng = np.random.default_rng(11)
    left = torch.as_tensor(rng.integers(0, 3, size=(12, 3)), dtype=torch.float32)  # small integers: many ties
    right = torch.as_tensor(rng.integers(0, 3, size=(10, 3)), dtype=torch.float32)
    pairs = np.stack([rng.permutation(12)[:8], rng.permutation(10)[:8]], axis=1)
    new_ids = rng.permutation(10)
    moved = torch.empty_like(right)
    moved[torch.as_tensor(new_ids)] = right  # graph-2 entity j is entity new_ids[j] afterwards
    relabelled = np.stack([pairs[:, 0], new_ids[pairs[:, 1]]], axis=1)
    labels1 = [f"a{i}" for i in range(12)]
    labels2 = [f"b{i}" for i in range(10)]
    moved_labels2 = [labels2[j] for j in np.argsort(new_ids)]
    before = rank_alignment(left, right, pairs)
    after = rank_alignment(left, moved, relabelled)
    for side in EA_SIDES:
        for column in RANK_COLUMNS:
            np.testing.assert_array_equal(getattr(after[side], column), getattr(before[side], column))
    assert (before["left"].rank_pessimistic > before["left"].rank_optimistic).any()  # the ties were exercised
    pd.testing.assert_frame_equal(
        ea_ranks_frame(after, relabelled, labels1, moved_labels2), ea_ranks_frame(before, pairs, labels1, labels2)
    )


def test_ea_metrics_rejects_lp_sides():
    table = pd.DataFrame(
        {"side": ["head"], "num_candidates": [3], **{f"rank_{t}": [1] for t in RANK_TYPES}}
    )
    with pytest.raises(ValueError, match="left"):
        ea_metrics(table)


def test_random_representations_have_amr_near_one():
    # a sanity check of the whole path: random scores give ranks uniform on 1..t, so AMR ~ 1
    gen = torch.Generator().manual_seed(0)
    left, right = torch.randn(400, 8, generator=gen), torch.randn(400, 8, generator=gen)
    pairs = np.stack([np.arange(400), np.arange(400)], axis=1)
    labels = [str(i) for i in range(400)]
    table = ea_ranks_frame(rank_alignment(left, right, pairs), pairs, labels, labels)
    amr = ea_metrics(table, metrics=["amr"]).set_index(["side", "rank_type"])["value"][("both", "realistic")]
    # std of AMR for 800 uniform ranks ~ 2/sqrt(3*800) ~ 0.04; 5 sigma
    assert abs(amr - 1.0) < 0.2


def test_pairs_are_all_enumerated():
    # every (query, candidate) combination is scored: with identical representations all ranks tie completely
    left = torch.ones(6, 2)
    right = torch.ones(6, 2)
    pairs = np.array(list(itertools.islice(zip(range(6), range(6)), 6)))
    result = rank_alignment(left, right, pairs)
    np.testing.assert_array_equal(result["left"].rank_optimistic, np.ones(6))
    np.testing.assert_array_equal(result["left"].rank_pessimistic, np.full(6, 6))
    np.testing.assert_array_equal(result["left"].rank_nondeterministic, np.arange(1, 7))


def _nested_inputs(seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    left, right = torch.randn(300, 16, generator=gen), torch.randn(280, 16, generator=gen)
    # rounded representations give exact ties, which the ranks must treat alike
    left[::7] = left[::7].round()
    right[::5] = right[::5].round()
    firsts, seconds = torch.randperm(300, generator=gen)[:250], torch.randperm(280, generator=gen)[:250]
    pairs = np.stack([firsts.numpy(), seconds.numpy()], axis=1)
    return left, right, pairs


@pytest.mark.parametrize("budget", [0.05, 64.0])
def test_nested_ranks_equal_each_prefix_ranked_alone(budget):
    """One distance matrix for all prefixes gives every prefix the ranks and scores of ranking it alone, bit for
    bit, on both sides (several engine batches with the small budget)."""
    left, right, pairs = _nested_inputs()
    sizes = [1, 37, 100, 250]
    nested = rank_alignment_nested(left, right, pairs, sizes, memory_budget_mb=budget)
    assert sorted(nested) == sizes
    for t in sizes:
        alone = rank_alignment(left, right, pairs[:t], memory_budget_mb=budget)
        for side in EA_SIDES:
            for column in RANK_COLUMNS:
                np.testing.assert_array_equal(getattr(nested[t][side], column), getattr(alone[side], column))


def test_nested_ranks_fall_back_above_the_matrix_limit(monkeypatch):
    import kgeval.ea.evaluation as evaluation

    left, right, pairs = _nested_inputs(1)
    expected = rank_alignment_nested(left, right, pairs, [50, 200])
    monkeypatch.setattr(evaluation, "NESTED_MATRIX_MAX_BYTES", 4 * 100 * 100)
    calls = []
    original = evaluation.rank_alignment
    monkeypatch.setattr(evaluation, "rank_alignment", lambda *a, **k: calls.append(len(a[2])) or original(*a, **k))
    found = rank_alignment_nested(left, right, pairs, [50, 200])
    assert calls == [50, 200]
    for t in (50, 200):
        for side in EA_SIDES:
            np.testing.assert_array_equal(found[t][side].rank_realistic, expected[t][side].rank_realistic)
            np.testing.assert_array_equal(found[t][side].score, expected[t][side].score)
    with pytest.raises(ValueError, match="prefix sizes"):
        rank_alignment_nested(left, right, pairs, [0, 10])
    with pytest.raises(ValueError, match="prefix sizes"):
        rank_alignment_nested(left, right, pairs, [251])
