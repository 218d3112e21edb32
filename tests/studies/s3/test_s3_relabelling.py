"""S3 methods under a relabelling of graph 2 (the loaders shuffle graph-2 ids: kgeval.ea.pair.shuffle_graph2).

What a method computes from a pair must not depend on how graph 2 is numbered, only its random draws may go to other
entities. Checked here: the training-free name scorer and the ranking give identical ranks; RDGCN gives the same
representations up to float rounding once its name vectors are drawn for the relabelled order; BootEA, RSN4EA and the
merged TransE, whose draws are tied to ids in several places, give metrics that agree within their seed-to-seed
spread. GCN-Align: tests/ea/test_ea_gcn_align.py.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
import torch

from kgeval.ea.pair import relabel_graph2
from kgeval.studies.s3.data import S3Pair
from kgeval.studies.s3.models import NameScorer, fit_scorer, rank_test_pairs, ranks_table

NEW_IDS = np.random.default_rng(5).permutation(40)  # the relabelling of the 40 graph-2 entities of synthetic_pair


def relabelled(s3pair: S3Pair, new_ids: np.ndarray) -> S3Pair:
    """The pair with graph-2 entity j renamed new_ids[j], its S3 names and attribute counts moved along."""
    old_of = np.argsort(new_ids)
    counts = s3pair.num_attributes2
    return dataclasses.replace(
        s3pair,
        pair=relabel_graph2(s3pair.pair, new_ids),
        names2=[s3pair.names2[j] for j in old_of],
        num_attributes2=None if counts is None else counts[old_of],
    )


def moved(pairs: np.ndarray, new_ids: np.ndarray = NEW_IDS) -> np.ndarray:
    """Mappings with their graph-2 ids relabelled, in the same row order."""
    return np.stack([pairs[:, 0], new_ids[pairs[:, 1]]], axis=1)


def _with_missing_names(s3pair: S3Pair) -> S3Pair:
    """A third of the names dropped on both sides, so that many candidates tie (similarity 0)."""
    return dataclasses.replace(
        s3pair,
        names1=[() if i % 3 == 0 else n for i, n in enumerate(s3pair.names1)],
        names2=[() if j % 3 == 1 else n for j, n in enumerate(s3pair.names2)],
    )


@pytest.mark.parametrize("candidates", ["test", "all"])
def test_name_similarity_ranks_do_not_change(make_pair, candidates):
    """Every rank type, score and ranks-table row is identical. One exception, by definition: the non-deterministic
    rank breaks ties in candidate-id order, so against all entities it may move within [optimistic, pessimistic]
    where the true partner ties with others (against the test-side candidates, ordered as the test mappings, it does
    not move either)."""
    s3pair = _with_missing_names(make_pair())
    other = relabelled(s3pair, NEW_IDS)
    test = s3pair.pair.alignment[5:]
    before = rank_test_pairs(NameScorer(s3pair.names1, s3pair.names2), test, 40, 40, candidates)
    after = rank_test_pairs(NameScorer(other.names1, other.names2), moved(test), 40, 40, candidates)
    for side in ("left", "right"):
        b, a = before[side], after[side]
        for column in ("rank_optimistic", "rank_realistic", "rank_pessimistic", "num_candidates", "score"):
            np.testing.assert_array_equal(getattr(a, column), getattr(b, column))
        tied = b.rank_pessimistic > b.rank_optimistic
        assert tied.any()  # the ties were exercised
        if candidates == "test":
            np.testing.assert_array_equal(a.rank_nondeterministic, b.rank_nondeterministic)
        else:
            np.testing.assert_array_equal(a.rank_nondeterministic[~tied], b.rank_nondeterministic[~tied])
            assert ((a.rank_nondeterministic >= a.rank_optimistic) & (a.rank_nondeterministic <= a.rank_pessimistic)).all()
    if candidates == "test":
        columns = ["source", "target", "side", "rank_realistic", "score"]
        pd.testing.assert_frame_equal(
            ranks_table(after, moved(test), other)[columns], ranks_table(before, test, s3pair)[columns]
        )


def test_rdgcn_is_invariant_once_its_name_vectors_are(make_pair, monkeypatch):
    """RDGCN's only draws tied to graph-2 ids are in its name vectors: with fewer documents than character n-grams,
    scikit-learn's randomized SVD draws its random test matrix over the documents (rows: graph 1, then graph 2 in id
    order). Its layers are shared by both graphs and start from fixed values, and its negatives are nearest
    neighbours. With the name vectors drawn for the relabelled order (the same rows moved to the new ids), training
    on the relabelled pair gives the same representations moved, up to float rounding, and the same ranks."""
    import kgeval.studies.s3.name_vectors as vectors

    torch.set_num_threads(1)
    s3pair = _with_missing_names(make_pair())
    other = relabelled(s3pair, NEW_IDS)
    alignment = s3pair.pair.alignment
    train, test = alignment[:15], alignment[15:]
    spec = {"num_epochs": 30, "negatives": "nearest", "name_vectors": {"kind": "char_ngrams", "dim": 16}}
    before, _ = fit_scorer("rdgcn", s3pair, train, spec, seed=0)
    names1, names2 = vectors.name_vectors(s3pair.names1, s3pair.names2, spec["name_vectors"], seed=0)
    old_of = np.argsort(NEW_IDS)
    monkeypatch.setattr(vectors, "name_vectors", lambda *args, **kwargs: (names1, names2[old_of]))
    after, _ = fit_scorer("rdgcn", other, moved(train), spec, seed=0)
    torch.testing.assert_close(after.left, before.left, rtol=0, atol=1e-5)
    torch.testing.assert_close(after.right[torch.as_tensor(NEW_IDS)], before.right, rtol=0, atol=1e-5)
    ranks_before = rank_test_pairs(before, test, 40, 40)
    ranks_after = rank_test_pairs(after, moved(test), 40, 40)
    for side in ("left", "right"):
        np.testing.assert_array_equal(ranks_after[side].rank_realistic, ranks_before[side].rank_realistic)


#: tiny settings: well above chance on the 40-entity pair, well below perfect, so the seed-to-seed spread is real
SPECS = {
    "bootea": {"embedding_dim": 16, "num_epochs": 30, "batch_size": 256, "lr": 0.01, "bootstrap_every": 10,
               "threshold": 0.8},
    "rsn4ea": {"embedding_dim": 16, "num_epochs": 10, "walks_per_entity": 4, "walk_length": 6, "batch_size": 64,
               "lr": 0.01, "num_negatives": 32, "patience": 0},
    "transe_merge": {"model": "TransE", "model_kwargs": {"embedding_dim": 16},
                     "training_kwargs": {"num_epochs": 20, "batch_size": 64}},
}


def _mrr(scorer, test: np.ndarray) -> float:
    results = rank_test_pairs(scorer, test, 40, 40)
    return float(np.mean([np.mean(1.0 / results[side].rank_realistic) for side in results]))


@pytest.mark.parametrize("model", sorted(SPECS))
def test_trained_structure_methods_agree_within_their_seed_spread(make_pair, model):
    """BootEA, RSN4EA and the merged TransE tie random draws to graph-2 ids in several places: the entity embeddings'
    start rows, uniform negatives drawn as ids, the order of the triples an epoch shuffles (graph-2 triples are
    sorted by id), the walks' start order and neighbour lists (RSN4EA), the merged ids (TransE). Moving all of these
    to the new ids would change the methods, so a relabelling changes their results through the draws, as another
    seed does. The test: over 8 seeds, the mean MRR of the two labellings differs by less than 4 standard errors of
    a difference of two 8-seed means, estimated from the runs themselves (the seed-to-seed spread), and by less than
    a third of the mean: a method that read the alignment from the ids would be far outside."""
    torch.set_num_threads(1)
    s3pair = make_pair(names=False)
    other = relabelled(s3pair, NEW_IDS)
    alignment = s3pair.pair.alignment
    train, test = alignment[:15], alignment[15:]
    seeds = range(8)
    before = np.array([_mrr(fit_scorer(model, s3pair, train, SPECS[model], seed)[0], test) for seed in seeds])
    after = np.array([_mrr(fit_scorer(model, other, moved(train), SPECS[model], seed)[0], moved(test)) for seed in seeds])
    spread = np.sqrt((before.var(ddof=1) + after.var(ddof=1)) / len(seeds))
    assert spread > 0 and before.mean() > 2 * (1 / 40)  # the runs learn something and vary by seed
    difference = abs(before.mean() - after.mean())
    assert difference < 4 * spread, (before.mean(), after.mean(), spread)
    assert difference < before.mean() / 3, (before.mean(), after.mean())
