"""S3 methods: the name scorer against direct computation, the ranking against brute force and against the EA
module's ranking, the merged graph of the translation-based method, and seeded training of both trained methods."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from rapidfuzz.distance import Levenshtein

from kgeval.ea.data import EAPair
from kgeval.ea.evaluation import rank_alignment
from kgeval.studies.s3.data import S3Pair
from kgeval.studies.s3.features import preprocess_name
from kgeval.studies.s3.models import DistanceScorer, NameScorer, fit_scorer, merged_graph, rank_test_pairs, ranks_table


def _tiny_pair() -> S3Pair:
    # two copies of a 6-node graph (graph 2 with permuted ids) and the identity alignment through the permutation
    perm = np.array([3, 0, 5, 1, 4, 2])
    t1 = np.array([[0, 0, 1], [1, 0, 2], [2, 1, 3], [3, 1, 4], [4, 0, 5], [5, 1, 0], [0, 1, 3]])
    t2 = np.stack([perm[t1[:, 0]], t1[:, 1], perm[t1[:, 2]]], axis=1)
    pair = EAPair(
        name="tiny",
        triples1=t1,
        triples2=t2,
        entity_labels1=[f"a{i}" for i in range(6)],
        entity_labels2=[f"b{i}" for i in range(6)],
        alignment=np.stack([np.arange(6), perm], axis=1),
    )
    names1 = [("Alpha",), ("Beta", "Bet"), ("Gamma",), ("Delta",), ("",), ("Zeta",)]
    names2 = [()] * 6
    for i, j in enumerate(perm):
        names2[j] = [("alpha",), ("betta",), ("gama",), (), ("epsilon",), ("zeta_",)][i]
    return S3Pair(pair, names1, names2, None, None, "hand", "none")


def _brute_force_ranks(scores: np.ndarray, true: np.ndarray) -> dict[str, np.ndarray]:
    """Optimistic, pessimistic, realistic ranks by enumeration (scores: (q, c), larger is better)."""
    opt = np.array([1 + sum(s > row[t] for s in row) for row, t in zip(scores, true)])
    pes = np.array([sum(s >= row[t] for s in row) for row, t in zip(scores, true)])
    return {"optimistic": opt, "pessimistic": pes, "realistic": (opt + pes) / 2}


def test_name_scorer_matches_direct_computation():
    s3pair = _tiny_pair()
    scorer = NameScorer(s3pair.names1, s3pair.names2)
    queries, candidates = np.array([0, 1, 4, 3]), np.arange(6)
    block = scorer.for_candidates("left", candidates)(queries).numpy()
    for qi, q in enumerate(queries):
        for c in candidates:
            a = [preprocess_name(x) for x in s3pair.names1[q] if preprocess_name(x)]
            b = [preprocess_name(x) for x in s3pair.names2[c] if preprocess_name(x)]
            expected = max((Levenshtein.normalized_similarity(x, y) for x in a for y in b), default=0.0)
            assert block[qi, c] == pytest.approx(expected, abs=1e-6)
    # the right side is the transpose of the left side
    right = scorer.for_candidates("right", np.arange(6))(np.arange(6)).numpy()
    left = scorer.for_candidates("left", np.arange(6))(np.arange(6)).numpy()
    np.testing.assert_allclose(right, left.T)


def _similarity_rows(scorer: NameScorer, side: str, candidates: np.ndarray, batches: list[list[int]]) -> np.ndarray:
    score = scorer.for_candidates(side, candidates)
    return np.concatenate([score(np.array(batch, dtype=np.int64)).numpy() for batch in batches])


@pytest.mark.parametrize("cache_bytes", [0, 40, 1 << 20])
def test_kept_name_rows_equal_fresh_ones(cache_bytes):
    """Rows kept from earlier calls (repeated queries, a second candidate list, batches that mix kept and new rows)
    have the bits of a scorer that keeps nothing; the bound on kept bytes holds."""
    s3pair = _tiny_pair()
    fresh = NameScorer(s3pair.names1, s3pair.names2, cache_bytes=0)
    kept = NameScorer(s3pair.names1, s3pair.names2, cache_bytes=cache_bytes)
    batches = [[0, 1], [1, 4, 1], [], [3, 0, 5, 2]]
    for side, candidates in (("left", np.arange(6)), ("right", np.arange(6)), ("left", np.array([5, 1, 2]))):
        expected = _similarity_rows(fresh, side, candidates, batches)
        for _ in range(2):  # the second pass reads what the first kept
            got = _similarity_rows(kept, side, candidates, batches)
            assert np.array_equal(got.view(np.int32), expected.view(np.int32))
    assert kept._kept_bytes <= cache_bytes
    assert (kept._kept_bytes > 0) == (cache_bytes > 0)  # 40 bytes: only the 3-candidate rows of one call fit


def test_kept_rows_are_not_changed_by_a_caller():
    """A caller may write into the scores it gets (the engine filters in place): the kept rows stay as computed."""
    s3pair = _tiny_pair()
    score = NameScorer(s3pair.names1, s3pair.names2).for_candidates("left", np.arange(6))
    first = score(np.array([0, 1]))
    expected = first.clone()
    first.fill_(float("nan"))
    assert torch.equal(score(np.array([0, 1])), expected)


def test_fit_scorer_reuses_a_built_name_scorer():
    s3pair = _tiny_pair()
    built: dict = {}
    train = s3pair.pair.alignment[:2]
    first, _ = fit_scorer("name_similarity", s3pair, train, {}, seed=0, built=built)
    second, _ = fit_scorer("name_similarity", s3pair, train[:1], {}, seed=1, built=built)
    assert first is second and built == {"name_similarity": first}
    assert fit_scorer("name_similarity", s3pair, train, {}, seed=0)[0] is not first


@pytest.mark.parametrize("candidates", ["test", "all"])
def test_ranking_against_brute_force(candidates):
    s3pair = _tiny_pair()
    test = s3pair.pair.alignment[[0, 2, 3, 5]]
    scorer = NameScorer(s3pair.names1, s3pair.names2)
    results = rank_test_pairs(scorer, test, 6, 6, candidates=candidates, memory_budget_mb=0.0001)
    full = scorer.for_candidates("left", np.arange(6))(np.arange(6)).numpy()  # (graph-1, graph-2) similarities
    for side, matrix in (("left", full), ("right", full.T)):
        q_col, c_col = (0, 1) if side == "left" else (1, 0)
        cand = test[:, c_col] if candidates == "test" else np.arange(6)
        true = np.arange(len(test)) if candidates == "test" else test[:, c_col]
        scores = matrix[test[:, q_col]][:, cand]
        expected = _brute_force_ranks(scores, true)
        for rank_type, values in expected.items():
            np.testing.assert_allclose(getattr(results[side], f"rank_{rank_type}"), values)
        assert (results[side].num_candidates == len(cand)).all()


def test_distance_ranking_equals_the_ea_modules():
    rng = np.random.default_rng(0)
    left, right = torch.as_tensor(rng.normal(size=(7, 3))), torch.as_tensor(rng.normal(size=(9, 3)))
    test = np.array([[0, 8], [2, 1], [3, 3], [6, 0], [5, 5]])
    ours = rank_test_pairs(DistanceScorer(left, right, p=1), test, 7, 9, candidates="test")
    theirs = rank_alignment(left, right, test)
    for side in ("left", "right"):
        for column in ("rank_optimistic", "rank_pessimistic", "rank_realistic", "rank_nondeterministic"):
            np.testing.assert_array_equal(getattr(ours[side], column), getattr(theirs[side], column))


def test_ranks_table_adds_ids():
    s3pair = _tiny_pair()
    test = s3pair.pair.alignment[[1, 4]]
    table = ranks_table(rank_test_pairs(NameScorer(s3pair.names1, s3pair.names2), test, 6, 6), test, s3pair)
    assert len(table) == 4
    for row in table.itertuples():
        assert s3pair.pair.entity_labels1[row.id1] == (row.source if row.side == "left" else row.target)
        assert s3pair.pair.entity_labels2[row.id2] == (row.target if row.side == "left" else row.source)
    assert {tuple(p) for p in table[["id1", "id2"]].to_numpy()} == {tuple(p) for p in test}


def test_merged_graph_ties_training_mappings():
    s3pair = _tiny_pair()
    train = s3pair.pair.alignment[[0, 3]]  # (0, 3) and (3, 1)
    triples, num_entities, num_relations, map1, map2 = merged_graph(s3pair, train)
    assert num_entities == 6 + 6 - 2 and num_relations == 2 + 2
    assert map2[3] == 0 and map2[1] == 3  # merged into the graph-1 entity
    unmerged = [j for j in range(6) if j not in (3, 1)]
    assert sorted(map2[unmerged].tolist()) == list(range(6, 10))
    # every graph-2 triple is there, with graph-2 relations shifted by r1 = 2
    t2 = s3pair.pair.triples2
    expected = {(map2[h], r + 2, map2[t]) for h, r, t in t2.tolist()}
    assert expected <= {tuple(x) for x in triples.tolist()}
    assert len(triples) == len(s3pair.pair.triples1) + len(t2)


@pytest.mark.parametrize("model", ["transe_merge", "gcn_align"])
def test_trained_methods_are_seeded(model):
    torch.set_num_threads(1)
    s3pair = _tiny_pair()
    train = s3pair.pair.alignment[:3]
    spec = (
        {"model": "TransE", "model_kwargs": {"embedding_dim": 8, "scoring_fct_norm": 2}, "training_kwargs": {"num_epochs": 3, "batch_size": 4}}
        if model == "transe_merge"
        else {"embedding_dim": 8, "num_layers": 1, "num_negatives": 2, "num_epochs": 3}
    )
    test = s3pair.pair.alignment[3:]
    runs = []
    for seed in (0, 0, 1):
        scorer, info = fit_scorer(model, s3pair, train, spec, seed)
        assert len(info["losses"]) == 3
        runs.append(rank_test_pairs(scorer, test, 6, 6)["left"].rank_realistic)
        if model == "transe_merge":
            # the merged training entities share one embedding: distance 0 between the two sides
            q = scorer.for_candidates("left", train[:, 1])(train[:, 0]).numpy()
            np.testing.assert_allclose(np.diag(q), 0.0, atol=1e-6)
    np.testing.assert_array_equal(runs[0], runs[1])


def test_unknown_model():
    with pytest.raises(ValueError, match="unknown S3 model"):
        fit_scorer("paris", _tiny_pair(), np.zeros((0, 2), dtype=int), {}, 0)


def test_ranks_table_has_the_ea_format():
    from kgeval.ea.evaluation import ea_ranks_frame

    s3pair = _tiny_pair()
    test = s3pair.pair.alignment[[0, 2, 5]]
    scorer = NameScorer(s3pair.names1, s3pair.names2)
    results = rank_test_pairs(scorer, test, 6, 6)
    ours = ranks_table(results, test, s3pair)
    theirs = ea_ranks_frame(results, test, s3pair.pair.entity_labels1, s3pair.pair.entity_labels2)
    pd.testing.assert_frame_equal(ours.drop(columns=["id1", "id2"]), theirs)
    left_only = ranks_table(rank_test_pairs(scorer, test, 6, 6, sides=("left",)), test, s3pair)
    pd.testing.assert_frame_equal(left_only, ours[ours["side"] == "left"].reset_index(drop=True))


def test_default_candidates_are_the_whole_target_graph():
    """Sec. 4.1: by default (schema and every shipped config) a test mapping's candidates are all target entities."""
    from pathlib import Path

    import yaml

    from kgeval.config import load_config

    repo = Path(__file__).resolve().parents[3]
    schema = yaml.safe_load((repo / "workflow" / "schemas" / "config.schema.yaml").read_text())
    s3 = schema["properties"]["studies"]["properties"]["s3"]["properties"]
    assert s3["candidates"]["default"] == "all"
    for name in ("config.yaml", "test.yaml", "example.yaml", "paper.yaml"):
        config = load_config(repo / "config" / name, check_pykeen=False)
        assert config["studies"]["s3"]["candidates"] == "all", name
    s3pair = _tiny_pair()
    test = s3pair.pair.alignment[[0, 2]]
    results = rank_test_pairs(NameScorer(s3pair.names1, s3pair.names2), test, 6, 6)
    assert set(np.asarray(results["left"].num_candidates).tolist()) == {6}  # every graph-2 entity, not the 2 test ones
    assert set(np.asarray(results["right"].num_candidates).tolist()) == {6}
