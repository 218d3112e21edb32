"""Tests of the filtered ranking engine (kgeval.lp.ranking) and the known-answer index (kgeval.lp.filtering).

References are independent of the engine: brute-force loops over candidates, an actual ``torch.sort(stable=True)``
for the non-deterministic rank, and PyKEEN's own ``RankBasedEvaluator`` (per-triple ranks read from
``evaluator.ranks`` with ``clear_on_finalize=False``).
"""

from __future__ import annotations


import numpy as np
import pytest
import torch
from pykeen.datasets import Nations
from pykeen.evaluation import RankBasedEvaluator
from pykeen.models import model_resolver

from conftest import SMALL_KWARGS, fb15k237_factories
from kgeval.lp.filtering import CSRIndex, FilterIndex, expand_csr
from kgeval.lp.ranking import RankResult, rank_from_score_fn, rank_lp

#: the model families of the default config
FAMILIES = ["TransE", "DistMult", "ComplEx", "RotatE", "TuckER", "RESCAL", "ConvE", "BoxE", "HolE", "QuatE", "TorusE"]
#: even smaller for FB15k-237, where PyKEEN's evaluator (the reference) costs time proportional to the dimension
FB_KWARGS = {
    "TransE": dict(embedding_dim=8),
    "DistMult": dict(embedding_dim=8),
    "ComplEx": dict(embedding_dim=4),
    "RotatE": dict(embedding_dim=4),
    "TuckER": dict(embedding_dim=8, relation_dim=4),
    "RESCAL": dict(embedding_dim=8),
    "ConvE": dict(embedding_dim=16, output_channels=2),
    "BoxE": dict(embedding_dim=4),
    "HolE": dict(embedding_dim=8),
    "QuatE": dict(embedding_dim=2),
    "TorusE": dict(embedding_dim=8),
}
RANK_TYPES = ("optimistic", "realistic", "pessimistic")


# ---------------------------------------------------------------------------------------------------------------
# brute-force reference


def brute_force(scores: np.ndarray, true: np.ndarray, excluded: list[set[int]], topk_excluded=None, k: int = 0):
    """Ranks by explicit enumeration; non-deterministic rank by an actual stable descending torch.sort."""
    n, C = scores.shape
    out = {key: [] for key in ("opt", "pess", "nd", "nc", "topk_scores", "topk_sets")}
    for i in range(n):
        keep = [j for j in range(C) if j == true[i] or j not in excluded[i]]
        s_true = scores[i, true[i]]
        out["opt"].append(1 + sum(scores[i, j] > s_true for j in keep))
        out["pess"].append(sum(scores[i, j] >= s_true for j in keep))
        out["nc"].append(len(keep))
        # keep is in candidate-ID order; a stable sort breaks ties by that order
        order = torch.sort(torch.as_tensor(scores[i, keep]), descending=True, stable=True).indices.tolist()
        out["nd"].append(1 + order.index(keep.index(int(true[i]))))
        if k:
            allowed = [j for j in range(C) if j not in (topk_excluded[i] if topk_excluded else set())]
            ranked = sorted(allowed, key=lambda j: (-scores[i, j], j))[:k]
            out["topk_scores"].append([scores[i, j] for j in ranked])
            out["topk_sets"].append(ranked)
    return {key: value if key.startswith("topk") else np.asarray(value) for key, value in out.items()}


def check_topk(result: RankResult, scores: np.ndarray, reference, k: int) -> None:
    """Top-k scores equal the reference; IDs too, except which of several tied IDs fill the last places."""
    for i in range(len(result)):
        ref_scores = np.asarray(reference["topk_scores"][i], dtype=np.float32)
        m = len(ref_scores)
        np.testing.assert_array_equal(result.topk_scores[i, :m], ref_scores)
        assert (result.topk_ids[i, m:] == -1).all() and np.isnan(result.topk_scores[i, m:]).all()
        ids = result.topk_ids[i, :m]
        np.testing.assert_array_equal(scores[i, ids], ref_scores)
        boundary = ref_scores[-1] if m else None
        strict = ref_scores > boundary if m else np.zeros(0, bool)
        np.testing.assert_array_equal(ids[strict], np.asarray(reference["topk_sets"][i])[strict])
        # within equal scores, IDs ascend
        for a in range(m - 1):
            if ref_scores[a] == ref_scores[a + 1]:
                assert ids[a] < ids[a + 1]


def random_case(seed: int, n: int = 60, C: int = 25, levels: int = 4):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, levels, size=(n, C)).astype(np.float32)  # many ties
    true = rng.integers(0, C, size=n)
    pairs = [(i, j) for i in range(n) for j in range(C) if rng.random() < 0.3]
    # list some true candidates explicitly: they must stay in
    pairs += [(i, int(true[i])) for i in range(0, n, 3)]
    topk_pairs = [(i, j) for i in range(n) for j in range(C) if rng.random() < 0.5]
    topk_pairs += [(0, j) for j in range(C)]  # query 0 has no top-k candidates at all
    return scores, true, pairs, topk_pairs


def as_pairs(pairs):
    array = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return array[:, 0], array[:, 1]


def excluded_sets(pairs, n):
    sets = [set() for _ in range(n)]
    for i, j in pairs:
        sets[i].add(j)
    return sets


# ---------------------------------------------------------------------------------------------------------------
# engine against brute force


@pytest.fixture(params=["blocks", "torch"])
def reduction(request, monkeypatch):
    """Run a test with the CPU's block reduction and again with the GPU's whole-batch torch reduction on CPU tensors
    (:mod:`kgeval.lp.engine.device_batch`, its queries, filters and results kept on the scores' device)."""
    if request.param == "torch":
        import kgeval.lp.engine.batches as batches

        monkeypatch.setattr(batches, "reduces_in_blocks", lambda device: False)
    return request.param


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("budget", [1e-3, 256.0])
def test_rank_from_score_fn_matches_brute_force(seed, budget, reduction):
    scores, true, pairs, topk_pairs = random_case(seed)
    n, C = scores.shape
    k = 5
    result = rank_from_score_fn(
        lambda rows: torch.as_tensor(scores)[rows],
        true,
        C,
        exclude=as_pairs(pairs),
        topk_exclude=as_pairs(topk_pairs),
        top_k=k,
        memory_budget_mb=budget,
    )
    ref = brute_force(scores, true, excluded_sets(pairs, n), excluded_sets(topk_pairs, n), k=k)
    np.testing.assert_array_equal(result.rank_optimistic, ref["opt"])
    np.testing.assert_array_equal(result.rank_pessimistic, ref["pess"])
    np.testing.assert_array_equal(result.rank_realistic, (ref["opt"] + ref["pess"]) / 2)
    np.testing.assert_array_equal(result.rank_nondeterministic, ref["nd"])
    np.testing.assert_array_equal(result.num_candidates, ref["nc"])
    np.testing.assert_array_equal(result.score, scores[np.arange(n), true])
    check_topk(result, scores, ref, k)


@pytest.mark.parametrize(
    "fused, block_bytes, whole_batches",
    [(fused, block_bytes, False) for fused in (False, True) for block_bytes in (1, 2_000, 2**22)] + [(False, 0, True)],
    ids=lambda v: {False: "no", True: "yes"}.get(v, str(v)) if isinstance(v, bool) else str(v),
)
def test_cpu_blocks_with_shared_rows_match_brute_force(monkeypatch, block_bytes, fused, whole_batches):
    """The CPU reduction block by block (one row per block up to all rows in one), rows shared by several queries,
    rows without queries, filtered and top-k-excluded candidates, on a pool of two threads: equal to brute force.
    Fused: each block is scored on the worker that reduces it (``prepare_rows``), every row exactly once.
    ``whole_batches``: the GPU's torch reduction of whole batches instead, on CPU tensors."""
    import kgeval.lp.engine.batches as batches
    import kgeval.lp.engine.cpu_blocks as cpu_blocks
    import kgeval.lp.ranking as ranking

    monkeypatch.setattr(cpu_blocks, "CPU_BLOCK_BYTES", block_bytes or cpu_blocks.CPU_BLOCK_BYTES)
    if whole_batches:
        monkeypatch.setattr(batches, "reduces_in_blocks", lambda device: False)
    rng = np.random.default_rng(5)
    num_rows, C, n, k = 30, 40, 90, 4
    scores = rng.integers(0, 4, size=(num_rows, C)).astype(np.float32)  # many ties
    row_of_query = rng.integers(0, num_rows - 3, size=n)  # the last rows have no query
    row_of_query[-1] = num_rows - 1
    true = rng.integers(0, C, size=n)
    pairs = [(r, j) for r in range(num_rows) for j in range(C) if rng.random() < 0.3]
    pairs += [(int(row_of_query[i]), int(true[i])) for i in range(0, n, 4)]  # listed true candidates stay in
    topk_pairs = [(r, j) for r in range(num_rows) for j in range(C) if rng.random() < 0.4]
    exclusions, _ = ranking.RowExclusions.from_pairs(*as_pairs(pairs), num_rows)
    topk_exclusions, _ = ranking.RowExclusions.from_pairs(*as_pairs(topk_pairs), num_rows)
    scored = np.zeros(num_rows, dtype=np.int64)  # how often each row was scored in a block (fused)

    def prepare_rows(rows: torch.Tensor):
        def blocks(start: int, stop: int) -> torch.Tensor:
            np.add.at(scored, rows[start:stop].numpy(), 1)
            return torch.as_tensor(scores)[rows[start:stop]]

        return blocks

    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        source = ranking.ScoreRows(
            lambda rows: torch.as_tensor(scores)[rows], C, prepare=prepare_rows if fused else None
        )
        result = ranking.rank_batches(
            source,
            row_of_query,
            true,
            filters=ranking.RowFilters(exclusions=exclusions, topk_exclusions=topk_exclusions),
            top_k=k,
            device="cpu",
            memory_budget_mb=0.01,  # several batches of rows
        )
    finally:
        torch.set_num_threads(threads)
    assert (scored == 1).all() if fused else (scored == 0).all()
    row_sets, topk_sets = excluded_sets(pairs, num_rows), excluded_sets(topk_pairs, num_rows)
    query_scores = scores[row_of_query]
    ref = brute_force(
        query_scores, true, [row_sets[r] for r in row_of_query], [topk_sets[r] for r in row_of_query], k=k
    )
    np.testing.assert_array_equal(result.rank_optimistic, ref["opt"])
    np.testing.assert_array_equal(result.rank_pessimistic, ref["pess"])
    np.testing.assert_array_equal(result.rank_nondeterministic, ref["nd"])
    np.testing.assert_array_equal(result.num_candidates, ref["nc"])
    check_topk(result, query_scores, ref, k)


def test_nondeterministic_rank_hand_made_ties():
    # candidate IDs:        0    1    2    3    4    5
    scores = np.array([[3.0, 1.0, 3.0, 2.0, 3.0, 5.0]], dtype=np.float32)
    score_fn = lambda rows: torch.as_tensor(scores)[rows]  # noqa: E731
    # stable descending sort of [3, 1, 3, 2, 3, 5] in ID order: 5, 0, 2, 4, 3, 1 -> candidate 4 is 4th
    order = torch.sort(torch.as_tensor(scores[0]), descending=True, stable=True).indices.tolist()
    assert order == [5, 0, 2, 4, 3, 1]
    result = rank_from_score_fn(score_fn, [4], 6)
    assert result.rank_nondeterministic.tolist() == [4]
    assert result.rank_optimistic.tolist() == [2]
    assert result.rank_pessimistic.tolist() == [4]
    assert result.rank_realistic.tolist() == [3.0]
    # filter candidates 0 and 5: [3, 2, 3, 1] for IDs [2, 3, 4, 1] sorted -> 2, 4, 3, 1: candidate 4 is 2nd
    result = rank_from_score_fn(score_fn, [4], 6, exclude=([0, 0], [0, 5]))
    assert result.rank_nondeterministic.tolist() == [2]
    assert result.rank_optimistic.tolist() == [1]
    assert result.rank_pessimistic.tolist() == [2]
    assert result.num_candidates.tolist() == [4]
    # candidate 0 is first among the ties
    assert rank_from_score_fn(score_fn, [0], 6).rank_nondeterministic.tolist() == [2]


def test_constant_scorer():
    n, C = 40, 30
    rng = np.random.default_rng(0)
    true = rng.integers(0, C, size=n)
    pairs = [(i, j) for i in range(n) for j in range(C) if rng.random() < 0.4]
    result = rank_from_score_fn(lambda rows: torch.zeros(len(rows), C), true, C, exclude=as_pairs(pairs))
    excluded = excluded_sets(pairs, n)
    num = np.array([C - len(excluded[i] - {int(true[i])}) for i in range(n)])
    np.testing.assert_array_equal(result.num_candidates, num)
    np.testing.assert_array_equal(result.rank_optimistic, np.ones(n))
    np.testing.assert_array_equal(result.rank_pessimistic, num)
    np.testing.assert_array_equal(result.rank_realistic, (num + 1) / 2)
    # non-deterministic: 1 + the unfiltered candidates with a smaller ID
    below = np.array([sum(1 for j in range(true[i]) if j not in excluded[i]) for i in range(n)])
    np.testing.assert_array_equal(result.rank_nondeterministic, below + 1)


def test_true_candidate_is_never_filtered():
    scores = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
    result = rank_from_score_fn(lambda rows: torch.as_tensor(scores)[rows], [1], 3, exclude=([0, 0], [1, 2]))
    assert result.rank_optimistic.tolist() == [1]
    assert result.num_candidates.tolist() == [2]
    assert result.score.tolist() == [2.0]


def test_invalid_input():
    score_fn = lambda rows: torch.zeros(len(rows), 3)  # noqa: E731
    with pytest.raises(ValueError, match="outside"):
        rank_from_score_fn(score_fn, [3], 3)
    with pytest.raises(ValueError, match="shape"):
        rank_from_score_fn(lambda rows: torch.zeros(len(rows), 4), [0], 3)
    with pytest.raises(ValueError, match="NaN"):
        rank_from_score_fn(lambda rows: torch.full((len(rows), 3), float("nan")), [0], 3)
    with pytest.raises(ValueError, match="exclude"):
        rank_from_score_fn(score_fn, [0], 3, exclude=([5], [0]))
    with pytest.raises(ValueError, match="memory_budget_mb"):
        rank_from_score_fn(score_fn, [0], 3, memory_budget_mb=0)


def test_empty_input():
    result = rank_from_score_fn(lambda rows: torch.zeros(len(rows), 3), np.zeros(0, dtype=int), 3, top_k=2)
    assert len(result) == 0 and result.topk_ids.shape == (0, 2)


# ---------------------------------------------------------------------------------------------------------------
# filter index


def test_filter_index_matches_brute_force():
    rng = np.random.default_rng(0)
    triples = np.stack([rng.integers(0, 20, 300), rng.integers(0, 4, 300), rng.integers(0, 20, 300)], axis=1)
    index = FilterIndex([triples[:150], triples[150:]], num_entities=20, num_relations=4)
    anchors, relations = rng.integers(0, 20, 50), rng.integers(0, 4, 50)
    for side, (a_col, x_col) in {"tail": (0, 2), "head": (2, 0)}.items():
        rows, answers = index.lookup(side, anchors, relations)
        for i in range(50):
            expected = sorted({int(t[x_col]) for t in triples if t[a_col] == anchors[i] and t[1] == relations[i]})
            assert answers[rows == i].tolist() == expected
            assert index.counts(side, anchors[i : i + 1], relations[i : i + 1]).tolist() == [len(expected)]
        candidates = rng.integers(0, 20, 50)
        known = {(int(t[a_col]), int(t[1]), int(t[x_col])) for t in triples}
        expected = [(int(a), int(r), int(c)) in known for a, r, c in zip(anchors, relations, candidates)]
        assert index.contains(side, anchors, relations, candidates).tolist() == expected


@pytest.mark.parametrize("low", [0, -5])
def test_csr_index_from_pairs_matches_brute_force(low):
    """Sorted unique keys, each with its sorted unique values: the combined-integer sort (non-negative pairs) and
    the lexsort it falls back to (negative keys or values), duplicates and empty input included."""
    rng = np.random.default_rng(abs(low))
    for trial in range(200):
        m = int(rng.integers(0, 60))
        keys, values = rng.integers(low, 15, m), rng.integers(low, 25, m)
        index = CSRIndex.from_pairs(keys, values)
        pairs = sorted(set(zip(keys.tolist(), values.tolist())))
        expected_keys = sorted({key for key, _ in pairs})
        assert index.keys.tolist() == expected_keys and index.indptr.tolist()[-1] == len(pairs)
        for i, key in enumerate(expected_keys):
            got = index.values[index.indptr[i] : index.indptr[i + 1]].tolist()
            assert got == [value for k, value in pairs if k == key]
        assert index.keys.dtype == index.indptr.dtype == index.values.dtype == np.int64


def test_filter_index_errors_and_expand():
    with pytest.raises(ValueError, match=r"shape \(m, 3\)"):
        FilterIndex(np.zeros((3, 2), dtype=int))
    with pytest.raises(ValueError, match="num_entities"):
        FilterIndex([[0, 0, 5]], num_entities=3, num_relations=1)
    with pytest.raises(ValueError, match="side"):
        FilterIndex([[0, 0, 1]]).lookup("relation", [0], [0])
    rows, positions = expand_csr(np.array([5, 0, 2]), np.array([2, 0, 3]))
    assert rows.tolist() == [0, 0, 2, 2, 2] and positions.tolist() == [5, 6, 2, 3, 4]


# ---------------------------------------------------------------------------------------------------------------
# link prediction against PyKEEN's evaluator


def make_model(name: str, dataset, seed: int = 0, **kwargs):
    return model_resolver.make(name, triples_factory=dataset.training, random_seed=seed, **SMALL_KWARGS[name], **kwargs)


def pykeen_ranks(model, triples, filter_triples, batch_size: int = 64):
    """Per-triple ranks from PyKEEN's own RankBasedEvaluator."""
    evaluator = RankBasedEvaluator(clear_on_finalize=False)
    evaluator.evaluate(model, triples, additional_filter_triples=filter_triples, use_tqdm=False, batch_size=batch_size)
    ranks = {
        (side, rank_type): np.concatenate(evaluator.ranks[side, rank_type])
        for side in ("head", "tail")
        for rank_type in RANK_TYPES
    }
    candidates = {side: np.concatenate(evaluator.num_candidates[side]) for side in ("head", "tail")}
    return ranks, candidates


def assert_equal_to_pykeen(result, ranks, candidates):
    for side in ("head", "tail"):
        for rank_type in RANK_TYPES:
            np.testing.assert_array_equal(
                getattr(result[side], f"rank_{rank_type}"), ranks[side, rank_type], err_msg=f"{side} {rank_type}"
            )
        np.testing.assert_array_equal(result[side].num_candidates, candidates[side], err_msg=f"{side} candidates")


@pytest.fixture(scope="module")
def nations():
    return Nations()


@pytest.fixture(scope="module")
def nations_inverse():
    return Nations(create_inverse_triples=True)


def dataset_for(name, nations, nations_inverse):
    # ConvE is trained with inverse triples (PyKEEN requires it)
    return nations_inverse if name == "ConvE" else nations


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("name", FAMILIES)
def test_rank_lp_equals_pykeen_on_nations(name, fast, nations, nations_inverse):
    dataset = dataset_for(name, nations, nations_inverse)
    model = make_model(name, dataset)
    test = dataset.testing.mapped_triples
    known = [dataset.training.mapped_triples, dataset.validation.mapped_triples]
    ranks, candidates = pykeen_ranks(model, test, known)
    # budgets small enough to need several batches (the PyKEEN fallback needs more memory per row)
    budget = 0.01 if fast else 0.5
    result = rank_lp(model, test, filter_triples=[*known, test], fast=fast, device="cpu", memory_budget_mb=budget)
    assert_equal_to_pykeen(result, ranks, candidates)


@pytest.mark.parametrize("fast", [True, False])
def test_rank_lp_ties_constant_model(nations, fast):
    """A DistMult with zero embeddings scores every triple 0: the engine and PyKEEN must agree on pure ties."""
    model = make_model("DistMult", nations)
    with torch.no_grad():
        model.entity_representations[0]._embeddings.weight.zero_()
    test = nations.testing.mapped_triples
    known = [nations.training.mapped_triples, nations.validation.mapped_triples]
    ranks, candidates = pykeen_ranks(model, test, known)
    result = rank_lp(model, test, filter_triples=[*known, test], device="cpu", fast=fast)
    assert_equal_to_pykeen(result, ranks, candidates)
    for side in ("head", "tail"):
        r = result[side]
        np.testing.assert_array_equal(r.rank_optimistic, 1)
        np.testing.assert_array_equal(r.rank_pessimistic, r.num_candidates)
        np.testing.assert_array_equal(r.rank_realistic, (r.num_candidates + 1) / 2)


def filtered_reference(model, triples, known, side):
    """Non-deterministic ranks and filtered score rows from PyKEEN's predict_h / predict_t, by brute force."""
    known_set = {tuple(t) for t in known.tolist()}
    with torch.no_grad():
        if side == "tail":
            scores = model.predict_t(triples[:, :2]).numpy()
        else:
            scores = model.predict_h(triples[:, 1:]).numpy()
    nd = []
    for i, (h, r, t) in enumerate(triples.tolist()):
        true = t if side == "tail" else h
        keep = [
            e
            for e in range(scores.shape[1])
            if e == true or ((h, r, e) if side == "tail" else (e, r, t)) not in known_set
        ]
        order = torch.sort(torch.as_tensor(scores[i, keep]), descending=True, stable=True).indices.tolist()
        nd.append(1 + order.index(keep.index(true)))
    return np.asarray(nd), scores


@pytest.mark.parametrize("topk_filter", ["train+valid", "same"])
@pytest.mark.parametrize("name", ["DistMult", "TransE"])
def test_rank_lp_torch_batches_equal_cpu_blocks(nations, monkeypatch, name, topk_filter):
    """The GPU's whole-batch reduction (on CPU tensors) gives the CPU engine's ranks and top-k lists, over several
    batches whose rows several queries share; with other triples removed from the top-k lists, and with the filtered
    ones (one filter, its entries set to -inf for the top-k lists without a restore).

    Compared exactly: the integer ranks, candidate counts and top-k IDs (no two of these random models' scores lie
    within rounding of each other). The scores (true and top-k) are compared exactly only for TransE, whose L1
    distances have ``torch.cdist``'s bits whatever the rows scored together (no matrix product); DistMult's come from
    two different matrix products (the whole batch at once on all threads, against each block of rows on one worker
    thread), and a BLAS gives bit-equal results only within one call shape: on a 2-core AMD EPYC host (MKL's AVX2
    path) 4 of 804 top-k scores differed by up to 7.5e-9 (2.3e-7 relative). So they are compared to the rounding of
    the float32 product: a few ulps relative, plus an absolute term small against the scores' scale."""
    import kgeval.lp.engine.batches as batches

    model = make_model(name, nations)
    test = nations.testing.mapped_triples
    known = [nations.training.mapped_triples, nations.validation.mapped_triples, test]
    topk_known = known[:2] if topk_filter == "train+valid" else None
    kwargs = dict(filter_triples=known, topk_filter_triples=topk_known, top_k=4, device="cpu", memory_budget_mb=0.002)
    blocks = rank_lp(model, test, **kwargs)
    monkeypatch.setattr(batches, "reduces_in_blocks", lambda device: False)
    whole = rank_lp(model, test, **kwargs)
    for side in ("head", "tail"):
        for field in ("rank_optimistic", "rank_pessimistic", "rank_nondeterministic", "num_candidates", "topk_ids"):
            np.testing.assert_array_equal(getattr(whole[side], field), getattr(blocks[side], field), err_msg=field)
        for field in ("score", "topk_scores"):
            got, expected = getattr(whole[side], field), getattr(blocks[side], field)
            if name == "TransE":
                np.testing.assert_array_equal(got, expected, err_msg=field)
                continue
            # NaN (empty places of a list) and -inf (filtered entries) must sit in the same places
            scale = float(np.abs(expected[np.isfinite(expected)]).max(initial=0.0))
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6 * scale, err_msg=field)


def test_rank_lp_nondeterministic_and_topk(nations):
    model = make_model("DistMult", nations)
    test = nations.testing.mapped_triples
    train_valid = torch.cat([nations.training.mapped_triples, nations.validation.mapped_triples])
    known = torch.cat([train_valid, test])
    k = 5
    result = rank_lp(model, test, filter_triples=known, topk_filter_triples=train_valid, top_k=k, device="cpu")
    train_valid_set = {tuple(t) for t in train_valid.tolist()}
    for side in ("head", "tail"):
        nd, scores = filtered_reference(model, test, known, side)
        np.testing.assert_array_equal(result[side].rank_nondeterministic, nd)
        true_scores = scores[np.arange(len(test)), test[:, 2 if side == "tail" else 0]]
        np.testing.assert_allclose(result[side].score, true_scores, rtol=1e-5, atol=1e-7)
        # top-k: best candidates that are not train/valid answers (test answers stay in)
        for i, (h, r, t) in enumerate(test.tolist()):
            allowed = [
                e
                for e in range(model.num_entities)
                if ((h, r, e) if side == "tail" else (e, r, t)) not in train_valid_set
            ]
            expected = sorted(allowed, key=lambda e: (-scores[i, e], e))[:k]
            assert result[side].topk_ids[i, : len(expected)].tolist() == expected


def test_rank_lp_keeps_input_order(nations):
    model = make_model("TransE", nations)
    test = nations.testing.mapped_triples
    known = [nations.training.mapped_triples, nations.validation.mapped_triples, test]
    permutation = torch.randperm(len(test), generator=torch.Generator().manual_seed(0))
    a = rank_lp(model, test, filter_triples=known, device="cpu")
    b = rank_lp(model, test[permutation], filter_triples=known, device="cpu")
    for side in ("head", "tail"):
        np.testing.assert_array_equal(a[side].rank_realistic[permutation.numpy()], b[side].rank_realistic)
        np.testing.assert_array_equal(a[side].score[permutation.numpy()], b[side].score)


def test_rank_lp_prebuilt_filter_index(nations):
    """A FilterIndex built once (with its own relation count) gives the same ranks as the triples themselves."""
    model = make_model("DistMult", nations)
    test = nations.testing.mapped_triples
    known = [nations.training.mapped_triples, nations.validation.mapped_triples, test]
    index = FilterIndex(known, num_entities=nations.num_entities, num_relations=3 * nations.num_relations)
    a = rank_lp(model, test, filter_triples=known, top_k=3, device="cpu")
    b = rank_lp(model, test, filter_triples=index, top_k=3, device="cpu")
    for side in ("head", "tail"):
        np.testing.assert_array_equal(a[side].rank_pessimistic, b[side].rank_pessimistic)
        np.testing.assert_array_equal(a[side].num_candidates, b[side].num_candidates)
        np.testing.assert_array_equal(a[side].topk_ids, b[side].topk_ids)
    with pytest.raises(ValueError, match="FilterIndex over"):
        rank_lp(model, test, filter_triples=FilterIndex(known, num_entities=99), device="cpu")


def test_rank_lp_rejects_unknown_ids(nations):
    model = make_model("DistMult", nations)
    with pytest.raises(ValueError, match="entity_to_id"):
        rank_lp(model, torch.tensor([[0, 0, 999]]), filter_triples=None, device="cpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_rank_lp_gpu_equals_cpu(nations):
    model = make_model("ComplEx", nations)
    test = nations.testing.mapped_triples
    known = [nations.training.mapped_triples, nations.validation.mapped_triples, test]
    cpu = rank_lp(model, test, filter_triples=known, top_k=3, device="cpu")
    gpu = rank_lp(model, test, filter_triples=known, top_k=3, device="cuda")
    model.cpu()
    for side in ("head", "tail"):
        np.testing.assert_array_equal(cpu[side].rank_optimistic, gpu[side].rank_optimistic)
        np.testing.assert_array_equal(cpu[side].rank_nondeterministic, gpu[side].rank_nondeterministic)
        np.testing.assert_allclose(cpu[side].score, gpu[side].score, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------------------------
# FB15k-237 (shared data)


@pytest.fixture(scope="module")
def fb15k237():
    return fb15k237_factories(inverse=True)


def assert_equal_up_to_float_noise(model, triples, known, result, ranks, candidates, rtol: float = 1e-5) -> None:
    """Ranks equal PyKEEN's, except where a fast path's float32 rounding reorders near-ties.

    A fast scorer computes the same scores as PyKEEN in a different summation order (~1e-7 relative), so a
    candidate whose score lies within that noise of the true score may compare differently. Every difference must
    be covered by such near-tied candidates (counted on PyKEEN's own scores), and differences must be rare.
    """
    index = FilterIndex(known, num_entities=model.num_entities)
    for side in ("head", "tail"):
        np.testing.assert_array_equal(result[side].num_candidates, candidates[side])
        anchor_column, answer_column = (0, 2) if side == "tail" else (2, 0)
        for rank_type in RANK_TYPES:
            engine = getattr(result[side], f"rank_{rank_type}")
            reference = ranks[side, rank_type]
            bad = np.flatnonzero(engine != reference)
            assert len(bad) <= 0.01 * len(engine), f"{side} {rank_type}: {len(bad)} of {len(engine)} ranks differ"
            if not len(bad):
                continue
            batch = triples[torch.as_tensor(bad)]
            with torch.no_grad():
                scores = (model.predict_t(batch[:, :2]) if side == "tail" else model.predict_h(batch[:, 1:])).numpy()
            true = batch[:, answer_column].numpy()
            # candidates left after filtering, other than the true one
            keep = np.ones_like(scores, dtype=bool)
            rows, answers = index.lookup(side, batch[:, anchor_column].numpy(), batch[:, 1].numpy())
            keep[rows, answers] = False
            keep[np.arange(len(bad)), true] = False
            true_scores = scores[np.arange(len(bad)), true][:, None]
            tolerance = rtol * np.abs(scores).max(axis=1, keepdims=True)
            near = np.count_nonzero(keep & (np.abs(scores - true_scores) <= tolerance), axis=1)
            difference = np.abs(engine[bad] - reference[bad])
            assert (difference <= near).all(), f"{side} {rank_type}: differences {difference} exceed near-ties {near}"


@pytest.mark.slow
@pytest.mark.shared_data
@pytest.mark.parametrize("name", FAMILIES)
def test_rank_lp_equals_pykeen_on_fb15k237_subset(name, fb15k237):
    train, valid, test, inverse = fb15k237
    factory = inverse if name == "ConvE" else train
    model = model_resolver.make(name, triples_factory=factory, random_seed=0, **FB_KWARGS[name])
    generator = torch.Generator().manual_seed(0)
    subset = test.mapped_triples[torch.randperm(test.num_triples, generator=generator)[:1000]]
    known = [train.mapped_triples, valid.mapped_triples, test.mapped_triples]
    ranks, candidates = pykeen_ranks(model, subset, known, batch_size=32)
    result = rank_lp(model, subset, filter_triples=known, device="cpu", fast=True)
    assert_equal_up_to_float_noise(model, subset, known, result, ranks, candidates)
    if name == "DistMult":
        # the engine itself (filtering, counting, grouping) on PyKEEN's own scores: exactly equal
        result = rank_lp(model, subset, filter_triples=known, device="cpu", fast=False)
        assert_equal_to_pykeen(result, ranks, candidates)
