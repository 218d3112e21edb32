"""S1 ranks of one split (:func:`rank_split`) and the constant scorer's prescribed ranks (:func:`constant_scorer_ranks`)
against brute force on hand-made ties."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.metrics import compute_metrics
from kgeval.studies.s1.reference_scorers import ConstantScorer, random_permutation
from kgeval.studies.s1.split_ranks import constant_scorer_ranks, rank_split
from s1_samples import EVAL, KNOWN, RANK_COLUMNS, TableScorer, brute_force_frame


def test_constant_scorer_ties_by_definition():
    """Constant scorer: optimistic 1, pessimistic |S|, realistic (|S|+1)/2, non-deterministic = position in ID order."""
    scorer = ConstantScorer(6)
    ranks = rank_split(scorer, EVAL, KNOWN)
    expected = brute_force_frame(scorer, EVAL, KNOWN)
    for column in [*RANK_COLUMNS, "num_candidates"]:
        np.testing.assert_array_equal(ranks[column].to_numpy(), expected[column].to_numpy(), err_msg=column)
    size = expected["num_candidates"].to_numpy()
    np.testing.assert_array_equal(ranks["rank_optimistic"], 1)
    np.testing.assert_array_equal(ranks["rank_pessimistic"], size)
    np.testing.assert_array_equal(ranks["rank_realistic"], (size + 1) / 2)
    # e.g. (0, r0, 2), tail side: answers 1 and 4 of (0, r0, ?) are filtered, kept 0, 2, 3, 5 -> entity 2 is 2nd
    row = ranks[(ranks["side"] == "tail") & (ranks["head"] == 0) & (ranks["tail"] == 2)].iloc[0]
    assert (row["num_candidates"], row["rank_nondeterministic"]) == (4, 2)
    # the prescription used in the reference-scorer table agrees with the brute force
    prescribed = constant_scorer_ranks(EVAL, KNOWN, 6)
    for column in [*RANK_COLUMNS, "num_candidates"]:
        np.testing.assert_array_equal(prescribed[column].to_numpy(), expected[column].to_numpy(), err_msg=column)


def test_partial_ties_all_rank_types_and_orders():
    """Scores with ties (3 levels): every rank type, under the original IDs and under two permutations."""
    scorer = TableScorer(6, levels=3)
    for seed in (None, 1, 2):
        permutation = None if seed is None else random_permutation(6, seed)
        ranks = rank_split(scorer, EVAL, KNOWN, permutation=permutation)
        expected = brute_force_frame(scorer, EVAL, KNOWN, permutation=permutation)
        for column in [*RANK_COLUMNS, "num_candidates"]:
            np.testing.assert_array_equal(ranks[column].to_numpy(), expected[column].to_numpy(), err_msg=column)
    # optimistic <= non-deterministic <= pessimistic, query by query
    assert (ranks["rank_optimistic"] <= ranks["rank_nondeterministic"]).all()
    assert (ranks["rank_nondeterministic"] <= ranks["rank_pessimistic"]).all()


def test_permutation_changes_the_nondeterministic_rank_known_answer():
    """Constant scorer on 5 entities, one triple (3, r, 1): tail 1 is 2nd in ID order, head 3 is 4th.

    Swapping the IDs of entities 0 and 1 makes tail 1 the first candidate; head 3 stays 4th. MRR goes from
    (1/2 + 1/4) / 2 = 0.375 to (1 + 1/4) / 2 = 0.625, Hits@1 from 0 to 0.5; the realistic rank stays 3 on both sides.
    """
    triples = np.array([[3, 0, 1]])
    scorer = ConstantScorer(5)
    before = rank_split(scorer, triples, triples)
    after = rank_split(scorer, triples, triples, permutation=np.array([1, 0, 2, 3, 4]))
    assert before.set_index("side")["rank_nondeterministic"].to_dict() == {"head": 4, "tail": 2}
    assert after.set_index("side")["rank_nondeterministic"].to_dict() == {"head": 4, "tail": 1}
    assert list(before["rank_realistic"]) == list(after["rank_realistic"]) == [3.0, 3.0]

    def metric(ranks, key):
        m = compute_metrics(ranks, metrics=[key])
        return m[(m["side"] == "both") & (m["rank_type"] == "nondeterministic")]["value"].item()

    assert metric(before, "mrr") == pytest.approx(0.375)
    assert metric(after, "mrr") == pytest.approx(0.625)
    assert (metric(before, "hits@1"), metric(after, "hits@1")) == (0.0, 0.5)


def test_rank_split_rows_sides_and_known_as_a_list():
    """One row per (side, triple) in input order with the original IDs; a list of filter arrays is their union."""
    scorer = TableScorer(6, levels=2, seed=4)
    permutation = random_permutation(6, 3)
    whole = rank_split(scorer, EVAL, KNOWN, permutation=permutation)
    assert list(whole["side"]) == ["head"] * len(EVAL) + ["tail"] * len(EVAL)
    for side in ("head", "tail"):
        part = whole[whole["side"] == side]
        np.testing.assert_array_equal(part[["head", "relation", "tail"]].to_numpy(), EVAL)  # not the permuted IDs
    pieces = rank_split(scorer, EVAL, [KNOWN[:4], KNOWN[4:]], permutation=permutation)
    assert pieces.equals(whole)
    tails = rank_split(scorer, EVAL, KNOWN, permutation=permutation, sides=("tail",))
    assert tails.equals(whole[whole["side"] == "tail"].reset_index(drop=True))
    expected = brute_force_frame(scorer, EVAL, KNOWN, permutation=permutation, sides=("tail",))
    np.testing.assert_array_equal(tails["rank_nondeterministic"], expected["rank_nondeterministic"])


def test_constant_scorer_ranks_count_only_filtered_candidates_below_the_truth():
    """Without filtering every query has all E candidates and the non-deterministic rank is the true ID + 1."""
    triples = np.array([[4, 0, 1], [0, 1, 6], [6, 0, 0]])
    ranks = constant_scorer_ranks(triples, triples[:0], 7)
    np.testing.assert_array_equal(ranks["num_candidates"], 7)
    np.testing.assert_array_equal(ranks["rank_pessimistic"], 7)
    np.testing.assert_array_equal(ranks["rank_realistic"], 4.0)
    truth = np.concatenate([triples[:, 0], triples[:, 2]]) + 1  # head side first, then tail side
    np.testing.assert_array_equal(ranks["rank_nondeterministic"], truth)
    # the engine agrees on this case too
    engine = rank_split(ConstantScorer(7), triples, triples[:0])
    for column in [*RANK_COLUMNS, "num_candidates"]:
        np.testing.assert_array_equal(engine[column].to_numpy(), ranks[column].to_numpy(), err_msg=column)


def test_rank_split_rejects_bad_input():
    scorer = ConstantScorer(4)
    with pytest.raises(ValueError, match="entity IDs >= the scorer's 4 entities"):
        rank_split(scorer, np.array([[0, 0, 4]]), np.zeros((0, 3), dtype=np.int64))
    with pytest.raises(ValueError, match="known_triples use entity IDs"):
        rank_split(scorer, np.array([[0, 0, 1]]), np.array([[5, 0, 1]]))
    with pytest.raises(ValueError, match="sides must be"):
        rank_split(scorer, np.array([[0, 0, 1]]), np.array([[0, 0, 1]]), sides=("left",))
