"""S1 reference scorers (constant, random), entity relabeling (:class:`PermutedScorer`) and its helpers."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from kgeval.lp.ranking import rank_lp
from kgeval.studies.s1.reference_scorers import (
    ConstantScorer,
    PermutedScorer,
    RandomScorer,
    permute_triples,
    random_permutation,
)
from kgeval.studies.s1.split_ranks import rank_split
from s1_samples import RANK_COLUMNS, TableScorer, tiny_data, tiny_model


def test_random_scorer_has_no_ties_is_seeded_and_uniform():
    scorer = RandomScorer(50, seed=3)
    heads = torch.arange(40) % 7
    relations = torch.arange(40) % 3
    rows = scorer.score_tails(heads, relations)
    # each row is a permutation of 0..E-1: no ties
    assert torch.equal(rows.sort(dim=1).values, torch.arange(50, dtype=torch.float32).expand(40, 50))
    # a query's scores do not depend on its batch, and differ between sides and seeds
    assert torch.equal(scorer.score_tails(heads[5:6], relations[5:6])[0], rows[5])
    assert not torch.equal(scorer.score_heads(relations[5:6], heads[5:6])[0], rows[5])
    assert not torch.equal(RandomScorer(50, seed=4).score_tails(heads[5:6], relations[5:6])[0], rows[5])
    # ranks of 3000 unfiltered queries: all rank types equal, uniform on 1..50 (chi-square goodness of fit)
    triples = np.stack([np.arange(3000) % 50, np.arange(3000) // 50, np.zeros(3000, dtype=np.int64)], axis=1)
    ranks = rank_split(scorer, triples, triples[:0], sides=("tail",))
    for column in RANK_COLUMNS[1:]:
        np.testing.assert_array_equal(ranks[column], ranks["rank_optimistic"])
    counts = np.bincount(ranks["rank_optimistic"], minlength=51)[1:]
    assert stats.chisquare(counts).pvalue > 1e-3
    assert ranks["rank_realistic"].mean() == pytest.approx(25.5, abs=4 * 14.43 / np.sqrt(3000))


def test_permuted_scorer_relabels_a_real_model():
    """A PyKEEN model under relabeled IDs: same scores for the same entities, and the same ranks except ties."""
    from kgeval.lp.scoring import make_scorer

    tiny, model = tiny_data(), tiny_model()
    base = make_scorer(model, device="cpu")
    permutation = random_permutation(tiny.num_entities, 5)
    permuted = PermutedScorer(base, permutation)
    triples = tiny.testing.mapped_triples.numpy()
    mapped = permute_triples(triples, permutation)
    h, r, t = (torch.from_numpy(triples[:, i].copy()) for i in range(3))
    ph, pt = torch.from_numpy(mapped[:, 0].copy()), torch.from_numpy(mapped[:, 2].copy())
    inverse = torch.from_numpy(np.argsort(permutation))
    torch.testing.assert_close(permuted.score_tails(ph, r), base.score_tails(h, r)[:, inverse])
    torch.testing.assert_close(permuted.score_heads(r, pt), base.score_heads(r, t)[:, inverse])

    known = tiny.all_mapped_triples()
    original = rank_split(base, triples, known)
    relabeled = rank_split(base, triples, known, permutation=permutation)
    for column in ["rank_optimistic", "rank_realistic", "rank_pessimistic", "num_candidates"]:
        np.testing.assert_array_equal(original[column], relabeled[column], err_msg=column)
    # the per-query path agrees with the pipeline's engine (rank_lp groups queries by anchor and relation)
    engine = rank_lp(model, triples, filter_triples=known, device="cpu")
    for side in ("head", "tail"):
        part = original[original["side"] == side]
        for rank_type, values in engine[side].ranks().items():
            np.testing.assert_array_equal(part[f"rank_{rank_type}"].to_numpy(), values, err_msg=f"{side} {rank_type}")


def test_constant_scorer_scores_every_candidate_alike():
    scorer = ConstantScorer(7, value=-2.5)
    tails = scorer.score_tails(torch.tensor([0, 3, 6]), torch.tensor([1, 0, 2]))
    heads = scorer.score_heads(torch.tensor([1]), torch.tensor([4]))
    assert tails.shape == (3, 7) and heads.shape == (1, 7)
    assert torch.equal(tails, torch.full((3, 7), -2.5)) and torch.equal(heads, torch.full((1, 7), -2.5))
    assert tails.dtype == torch.float32
    for bad in (0, -3):
        with pytest.raises(ValueError, match="num_entities must be positive"):
            ConstantScorer(bad)


def test_random_scorer_rejects_bad_arguments():
    with pytest.raises(ValueError, match="num_entities must be positive"):
        RandomScorer(0)
    with pytest.raises(ValueError, match="exceeds 2\\*\\*24"):
        RandomScorer(2**24 + 1)
    with pytest.raises(ValueError, match="seed must be non-negative"):
        RandomScorer(5, seed=-1)
    RandomScorer(2**24)  # the largest size whose scores are exact in float32


def test_permuted_scorer_on_a_tied_scorer_by_hand():
    """New ID ``p[e]`` stands for old entity ``e``: score column ``p[e]`` of a relabeled query is column ``e`` of the
    base query with the old anchor."""
    base = TableScorer(6, levels=3, seed=2)
    permutation = np.array([2, 0, 5, 1, 3, 4])
    permuted = PermutedScorer(base, permutation)
    assert permuted.num_entities == 6 and permuted.is_fast == base.is_fast
    assert permuted.bytes_per_query() == base.bytes_per_query() + 4 * 6
    for old_anchor in range(6):
        for relation in (0, 1):
            new_anchor = torch.tensor([permutation[old_anchor]])
            rel = torch.tensor([relation])
            tails = permuted.score_tails(new_anchor, rel)[0].numpy()
            heads = permuted.score_heads(rel, new_anchor)[0].numpy()
            for e in range(6):
                assert tails[permutation[e]] == base.row("tail", old_anchor, relation)[e]
                assert heads[permutation[e]] == base.row("head", old_anchor, relation)[e]


@pytest.mark.parametrize("bad", [[0, 1, 2], [0, 1, 1, 2], [1, 2, 3, 4]])
def test_permuted_scorer_rejects_what_is_not_a_permutation(bad):
    with pytest.raises(ValueError, match="permutation of 0..3"):
        PermutedScorer(ConstantScorer(4), np.array(bad))


def test_random_permutation_and_permute_triples():
    p = random_permutation(30, 7)
    assert p.dtype == np.int64 and sorted(p.tolist()) == list(range(30))
    np.testing.assert_array_equal(p, random_permutation(30, 7))
    assert not np.array_equal(p, random_permutation(30, 8))
    triples = np.array([[0, 5, 29], [3, 1, 3], [29, 0, 0]], dtype=np.int32)
    mapped = permute_triples(triples, p)
    assert mapped.dtype == np.int64
    for (h, r, t), (mh, mr, mt) in zip(triples.tolist(), mapped.tolist()):
        assert (mh, mr, mt) == (p[h], r, p[t])  # relations stay
    np.testing.assert_array_equal(triples, [[0, 5, 29], [3, 1, 3], [29, 0, 0]])  # the input is not changed
    # mapping back with the inverse permutation restores the triples
    np.testing.assert_array_equal(permute_triples(mapped, np.argsort(p)), triples)
    assert permute_triples(np.zeros((0, 3), dtype=np.int64), p).shape == (0, 3)
