"""kgeval.lp.ranks: the ranks and top-k tables of a small PyKEEN model on tests/data/tiny, against a brute-force
ranking of ``model.score_hrt`` over every entity, filtered with the triples read straight from the files."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest
import torch
from pykeen.models import DistMult

from conftest import REPO
from kgeval.lp.datasets import load_dataset
from kgeval.lp.ranks import RANK_COLUMNS, TrainedModel, compute_ranks, load_model, rank_triples, ranks_frame, topk_frame

FILES = {s: REPO / "tests" / "data" / "tiny" / f"{s}.txt" for s in ("train", "valid", "test")}
SPEC = {"source": "files", **{s: str(p) for s, p in FILES.items()}}


def read(split: str) -> list[tuple[str, str, str]]:
    return [tuple(line.split("\t")) for line in FILES[split].read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def tiny():
    return load_dataset("tiny", SPEC)


@pytest.fixture(scope="module")
def model(tiny):
    model = DistMult(triples_factory=tiny.training, embedding_dim=8, random_seed=3)
    model.eval()
    return model


def label_scores(model, data, h: str, r: str, t: str, side: str) -> dict[str, float]:
    """score_hrt of every entity label in the missing slot."""
    e2i, r2i = data.training.entity_to_id, data.training.relation_to_id
    labels = list(e2i)
    ids = torch.tensor([e2i[e] for e in labels])
    anchor = torch.full_like(ids, e2i[h] if side == "tail" else e2i[t])
    rel = torch.full_like(ids, r2i[r])
    hrt = torch.stack((anchor, rel, ids) if side == "tail" else (ids, rel, anchor), dim=1)
    with torch.no_grad():
        scores = model.score_hrt(hrt).reshape(-1).tolist()
    return dict(zip(labels, scores))


def brute_force_row(model, data, h, r, t, side, known) -> dict[str, float]:
    """The rank columns of one (triple, side), counted over the entities that are not another known answer."""
    e2i = data.training.entity_to_id
    scores = label_scores(model, data, h, r, t, side)
    true = t if side == "tail" else h
    others = [e for e in scores if e != true and ((h, r, e) if side == "tail" else (e, r, t)) not in known]
    s = scores[true]
    better = sum(scores[e] > s for e in others)
    tied = [e for e in others if scores[e] == s]
    return {
        "rank_optimistic": 1 + better,
        "rank_pessimistic": 1 + better + len(tied),
        "rank_realistic": 1 + better + len(tied) / 2,
        "rank_nondeterministic": 1 + better + sum(e2i[e] < e2i[true] for e in tied),
        "num_candidates": 1 + len(others),
        "score": s,
    }


def assert_brute_force(table: pd.DataFrame, model, data, split: str) -> None:
    known = set(read("train") + read("valid") + read("test"))
    triples = read(split)
    assert list(table.columns) == ["head", "relation", "tail", "side", *RANK_COLUMNS]
    assert table["side"].tolist() == ["head"] * len(triples) + ["tail"] * len(triples)
    for side in ("head", "tail"):
        rows = table[table["side"] == side]
        assert Counter(zip(rows["head"], rows["relation"], rows["tail"])) == Counter(triples)
    for row in table.itertuples(index=False):
        expected = brute_force_row(model, data, row.head, row.relation, row.tail, row.side, known)
        got = {column: getattr(row, column) for column in RANK_COLUMNS}
        assert got["score"] == pytest.approx(expected.pop("score"), rel=1e-5, abs=1e-6)
        assert {k: got[k] for k in expected} == expected, (row.head, row.relation, row.tail, row.side)


def test_rank_triples_equal_brute_force(tiny, model, tmp_path):
    triples = tiny.factory("test").mapped_triples
    out = tmp_path / "ranks" / "test.parquet"
    table, results, seconds = rank_triples(tiny, model, triples, str(out), filter_triples=tiny.all_mapped_triples())
    assert seconds >= 0 and set(results) == {"head", "tail"}
    assert_brute_force(table, model, tiny, "test")
    pd.testing.assert_frame_equal(pd.read_parquet(out), table)
    assert table["rank_optimistic"].dtype == np.int64 and table["rank_realistic"].dtype == np.float64


def test_ties_are_counted_on_every_rank_type(tiny, tmp_path):
    """All-zero entity embeddings: every candidate ties with the true one."""
    model = DistMult(triples_factory=tiny.training, embedding_dim=4, random_seed=0)
    with torch.no_grad():
        model.entity_representations[0]._embeddings.weight.zero_()
    model.eval()
    triples = tiny.factory("valid").mapped_triples
    table, _, _ = rank_triples(tiny, model, triples, str(tmp_path / "r.parquet"), filter_triples=tiny.all_mapped_triples())
    assert (table["rank_optimistic"] == 1).all()
    assert (table["rank_pessimistic"] == table["num_candidates"]).all()
    assert_brute_force(table, model, tiny, "valid")


def test_ranks_frame_only_the_sides_given(tiny, model):
    from kgeval.lp.ranking import rank_lp

    triples = tiny.factory("valid").mapped_triples
    results = rank_lp(model, triples, filter_triples=tiny.all_mapped_triples(), sides=("tail",), device="cpu")
    table = ranks_frame(tiny, triples, results)
    assert table["side"].unique().tolist() == ["tail"] and len(table) == len(triples)


def test_topk_frame_equals_brute_force(tiny, model):
    from kgeval.lp.ranking import rank_lp

    k = 4
    triples = tiny.factory("test").mapped_triples
    results = rank_lp(
        model, triples, filter_triples=tiny.all_mapped_triples(),
        topk_filter_triples=[tiny.training.mapped_triples, tiny.validation.mapped_triples], top_k=k, device="cpu",
    )
    table = topk_frame(tiny, triples, results)
    assert list(table.columns) == ["side", "relation", "anchor", "position", "candidate", "score"]
    removed = set(read("train") + read("valid"))  # test answers stay in the top-k lists
    expected_rows = []
    for side in ("head", "tail"):
        queries = sorted({(r, t if side == "head" else h) for h, r, t in read("test")})
        for r, anchor in queries:
            h, t = (None, anchor) if side == "head" else (anchor, None)
            scores = label_scores(model, tiny, h, r, t, side)
            allowed = [e for e in scores if ((h, r, e) if side == "tail" else (e, r, t)) not in removed]
            best = sorted(allowed, key=lambda e: -scores[e])[:k]
            expected_rows += [(side, r, anchor, i + 1, e) for i, e in enumerate(best)]
    got = list(table[["side", "relation", "anchor", "position", "candidate"]].itertuples(index=False, name=None))
    assert sorted(got) == sorted(expected_rows)


def test_compute_ranks_writes_every_table(tiny, model, tmp_path):
    path = tmp_path / "model.pt"
    torch.save(model, path)
    loaded = load_model(str(path))
    assert not loaded.training
    trained = TrainedModel(str(path), "tiny", SPEC, None)
    out = {name: tmp_path / "out" / name for name in ("valid.parquet", "test.parquet", "topk.parquet", "timing.json")}
    tables = compute_ranks(
        trained, ["valid", "test"], [str(out["valid.parquet"]), str(out["test.parquet"])], str(out["topk.parquet"]),
        str(out["timing.json"]), top_k=3,
    )
    for split in ("valid", "test"):
        assert_brute_force(tables[split], model, tiny, split)
        pd.testing.assert_frame_equal(pd.read_parquet(out[f"{split}.parquet"]), tables[split])
    topk = pd.read_parquet(out["topk.parquet"])
    assert topk["position"].max() == 3 and set(topk["side"]) == {"head", "tail"}
    assert set(json.loads(out["timing.json"].read_text())) == {"valid_seconds", "test_seconds"}


@pytest.mark.skipif(torch.cuda.is_available(), reason="the fallback is for hosts without a GPU")
def test_load_model_asked_for_cuda_without_a_gpu_loads_on_the_cpu(model, tmp_path, caplog):
    """``--set-resources compute_ranks:gpu=1`` on a host without CUDA ranks on the CPU, as training does."""
    path = tmp_path / "model.pt"
    torch.save(model, path)
    with caplog.at_level("WARNING", logger="kgeval.lp.scorer_interface"):
        loaded = load_model(str(path), device="cuda")
    assert all(p.device.type == "cpu" for p in loaded.parameters())
    assert "CUDA is not available" in caplog.text
