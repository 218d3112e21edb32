"""Rank disagreements of float32 rankers are near-ties within rounding (kgeval.lp.precision, #36).

On the CPU: kgeval's float32 ranks against exact float64 ranks of FB15k-237 queries; on a GPU (skipped without
CUDA): kgeval's engine against PyKEEN's evaluator, both on the device, the case the issue saw (4 and 9 of 1,000)."""

from __future__ import annotations


import numpy as np
import pytest
import torch
from pykeen.models import model_resolver

from conftest import fb15k237_factories
from kgeval.lp.precision import float64_scores, near_tie_report
from kgeval.lp.ranking import rank_lp
from kgeval.lp.scoring import make_scorer


def test_near_tie_report_brute_force():
    rng = np.random.default_rng(0)
    s64 = rng.normal(size=(50, 30))
    true = rng.integers(0, 30, 50)
    a = (s64 + rng.normal(scale=1e-3, size=s64.shape)).astype(np.float32)
    b = (s64 + rng.normal(scale=1e-4, size=s64.shape)).astype(np.float32)
    report = near_tie_report(s64, [a, b], true)
    for i in range(50):
        gap = min(abs(s64[i, true[i]] - s64[i, c]) for c in range(30) if c != true[i])
        err = max(np.abs(a[i].astype(float) - s64[i]).max(), np.abs(b[i].astype(float) - s64[i]).max())
        assert report.gap64[i] == gap and report.err32[i] == err and report.near_tie[i] == (gap <= 2 * err)
    # the bound: wherever the two float32 orders of the true candidate and a rival differ, the query is a near-tie
    for i in range(50):
        flipped = np.sign(a[i] - a[i, true[i]]) != np.sign(b[i] - b[i, true[i]])
        flipped[true[i]] = False
        if flipped.any():
            assert report.near_tie[i]
    # an excluded candidate is no rival: excluding every candidate but the nearest leaves the same gap
    nearest = np.argsort(np.abs(s64 - s64[np.arange(50), true][:, None]), axis=1)[:, 1]
    exclude = np.ones_like(s64, dtype=bool)
    exclude[np.arange(50), nearest] = False
    assert np.array_equal(near_tie_report(s64, [a], true, exclude=exclude).gap64, near_tie_report(s64, [a], true).gap64)
    exclude[np.arange(50), nearest] = True
    assert np.isinf(near_tie_report(s64, [a], true, exclude=exclude).gap64).all()
    with pytest.raises(ValueError, match="shape"):
        near_tie_report(s64, [a[:3]], true)


@pytest.fixture(scope="module")
def fb15k237():
    train, _, test, _ = fb15k237_factories()
    return train, test.mapped_triples[:1000]


def _optimistic(scores: np.ndarray, true: np.ndarray) -> np.ndarray:
    rows = np.arange(len(true))
    return 1 + (scores > scores[rows, true][:, None]).sum(axis=1)


@pytest.mark.slow
@pytest.mark.shared_data
@pytest.mark.parametrize("name", ["DistMult", "ComplEx"])
def test_float32_ranks_differ_from_float64_only_at_near_ties(fb15k237, name):
    """The engine's raw float32 ranks against exact float64 ranks: every difference is a near-tie, and the near-tie
    criterion is not vacuous (it holds for a small share of all queries)."""
    train, test = fb15k237
    model = model_resolver.make(name, triples_factory=train, embedding_dim=64, random_seed=0).eval()
    engine = rank_lp(model, test, filter_triples=None, sides=("tail",), device="cpu")["tail"]
    s64 = float64_scores(model, test, "tail")
    true = test[:, 2].numpy()
    with torch.no_grad():
        s32 = make_scorer(model, device="cpu").score("tail", test[:, 0], test[:, 1]).numpy()
    report = near_tie_report(s64, [s32], true)
    differ = np.flatnonzero(engine.rank_optimistic != _optimistic(s64, true))
    print(f"{name}: {len(differ)} of {len(true)} optimistic ranks differ from float64; "
          f"{int(report.near_tie.sum())} queries are near-ties")
    assert report.near_tie[differ].all(), report.iloc[differ][~report.near_tie[differ]]
    assert report.near_tie.mean() < 0.2


@pytest.mark.slow
@pytest.mark.shared_data
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: the disagreement is a GPU one")
@pytest.mark.parametrize("name", ["DistMult", "ComplEx"])
def test_gpu_disagreements_with_pykeen_are_near_ties(fb15k237, name):
    from pykeen.evaluation import RankBasedEvaluator

    train, test = fb15k237
    model = model_resolver.make(name, triples_factory=train, embedding_dim=200, random_seed=0).eval().cuda()
    # PyKEEN's evaluator filters the evaluated triples themselves: the engine filters the same
    engine = rank_lp(model, test, filter_triples=[test], sides=("tail",), device="cuda")["tail"]
    evaluator = RankBasedEvaluator(clear_on_finalize=False)
    evaluator.evaluate(model, test.cuda(), use_tqdm=False, batch_size=64, targets=["tail"])
    pykeen = np.concatenate(evaluator.ranks["tail", "optimistic"])
    s64 = float64_scores(model, test, "tail")
    with torch.no_grad():
        ours = make_scorer(model, device="cuda").score("tail", test[:, 0].cuda(), test[:, 1].cuda()).float().cpu()
        theirs = model.score_t(test[:, :2].cuda()).float().cpu()
    triples = test.numpy()
    filtered = np.zeros(s64.shape, dtype=bool)  # other test answers of the same (head, relation): no rivals
    for i, (h, r, _) in enumerate(triples):
        filtered[i, triples[(triples[:, 0] == h) & (triples[:, 1] == r), 2]] = True
    report = near_tie_report(s64, [ours.numpy(), theirs.numpy()], triples[:, 2], exclude=filtered)
    differ = np.flatnonzero(engine.rank_optimistic != pykeen)
    print(f"{name} on {torch.cuda.get_device_name()}: {len(differ)} of {len(test)} ranks differ from PyKEEN's; "
          f"{int(report.near_tie.sum())} near-ties")
    assert report.near_tie[differ].all(), report.iloc[differ][~report.near_tie[differ]]


def test_disagreement_report_brute_force():
    """Each flagged query's float64 gap to its nearest rival (its other known answers are no rivals) computed by hand
    from DistMult's embeddings in float64; the float32 error at least PyKEEN's own; near-tie as the bound says."""
    from kgeval.lp.datasets import load_dataset
    from kgeval.lp.precision import disagreement_report

    data = load_dataset("nations", {"source": "pykeen", "name": "Nations"})
    train, test = data.training, data.testing.mapped_triples
    model = model_resolver.make("DistMult", triples_factory=train, embedding_dim=8, random_seed=0).eval()
    known = [train.mapped_triples, test]
    differ = {"tail": np.arange(len(test)) % 9 == 0, "head": np.arange(len(test)) % 13 == 0}
    report = disagreement_report(model, test, differ, known)
    assert sorted(report[report.side == "tail"].triple) == list(np.flatnonzero(differ["tail"]))
    assert sorted(report[report.side == "head"].triple) == list(np.flatnonzero(differ["head"]))
    with torch.no_grad():
        entities = model.entity_representations[0](indices=None).double()
        relations = model.relation_representations[0](indices=None).double()
    every = {tuple(t) for t in torch.cat(known).tolist()}
    theirs = {}  # PyKEEN's float32 scores of each side's flagged queries, scored in one batch as the report does
    with torch.no_grad():
        for side, mask in differ.items():
            batch = test[np.flatnonzero(mask)]
            scored = model.score_t(batch[:, :2]) if side == "tail" else model.score_h(batch[:, 1:])
            theirs.update({(side, i): row for i, row in zip(np.flatnonzero(mask), scored.double().numpy())})
    for row in report.itertuples():
        h, r, t = test[row.triple].tolist()
        anchor = entities[h] if row.side == "tail" else entities[t]
        scores = (anchor * relations[r] * entities).sum(dim=1).numpy()  # DistMult is symmetric in head and tail
        true = t if row.side == "tail" else h
        rivals = [
            c for c in range(len(scores))
            if c != true and ((h, r, c) if row.side == "tail" else (c, r, t)) not in every
        ]
        assert row.gap64 == pytest.approx(min(abs(scores[c] - scores[true]) for c in rivals), rel=1e-9, abs=1e-12)
        assert row.err32 >= np.abs(theirs[row.side, row.triple] - scores).max() * (1 - 1e-6)
        assert row.near_tie == (row.gap64 <= 2 * row.err32)
    with pytest.raises(ValueError, match="side"):
        disagreement_report(model, test, {"middle": differ["tail"]}, known)
    assert disagreement_report(model, test, {"tail": np.zeros(len(test), dtype=bool)}, known).empty
