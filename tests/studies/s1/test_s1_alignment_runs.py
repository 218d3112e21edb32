"""S1 EA pipeline steps (file in / file out): the split table, one short training run, and the ranks of a test pool
against brute force on hand-made representations."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from kgeval.ea.data import load_ea_pair
from kgeval.ea.pair import EAPair
from kgeval.io import read_tsv, write_tsv
from kgeval.studies.s1.alignment_runs import (
    TrainingFiles,
    ea_ranks_to_file,
    load_representations,
    read_split,
    split_frame,
    summarize_ea_pair,
    train_ea_to_files,
)
from kgeval.studies.s1.splits import split_alignment

SPEC = {"source": "two_view", "dataset": "umls", "keep_fraction": 0.5, "seed": 0}


def _pair() -> EAPair:
    triples = np.array([[0, 0, 1], [1, 0, 2], [2, 0, 3]])
    return EAPair(
        name="hand",
        triples1=triples,
        triples2=triples,
        entity_labels1=[f"a{i}" for i in range(5)],
        entity_labels2=[f"b{i}" for i in range(5)],
        alignment=np.array([[0, 4], [1, 3], [2, 2], [3, 1], [4, 0]]),
    )


def test_split_table_round_trip_keeps_the_nested_order(tmp_path):
    pair = _pair()
    train = np.array([[3, 1]])
    pool = np.array([[4, 0], [0, 4], [2, 2], [1, 3]])  # nested order, not sorted
    table = split_frame(pair, train, pool)
    assert list(table["role"]) == ["train"] + ["test"] * 4
    assert list(table["position"]) == [0, 0, 1, 2, 3]
    assert list(table["label1"]) == ["a3", "a4", "a0", "a2", "a1"]
    assert list(table["label2"]) == ["b1", "b0", "b4", "b2", "b3"]
    # the file may list the rows in any order: read_split restores the positions
    shuffled = table.sample(frac=1.0, random_state=3)
    write_tsv(shuffled, tmp_path / "split.tsv", sort_by=["id1"])
    got_train, got_pool = read_split(tmp_path / "split.tsv")
    np.testing.assert_array_equal(got_train, train)
    np.testing.assert_array_equal(got_pool, pool)
    assert got_train.dtype == np.int64 and got_pool.shape == (4, 2)
    # no training pairs: an empty (0, 2) array
    write_tsv(split_frame(pair, np.zeros((0, 2), dtype=np.int64), pool), tmp_path / "empty.tsv")
    empty, again = read_split(tmp_path / "empty.tsv")
    assert empty.shape == (0, 2)
    np.testing.assert_array_equal(again, pool)
    write_tsv(table.drop(columns="position"), tmp_path / "bad.tsv")
    with pytest.raises(ValueError, match="lacks columns \\['position'\\]"):
        read_split(tmp_path / "bad.tsv")


def test_summary_counts_the_pair(tmp_path):
    table = summarize_ea_pair("umls", SPEC, None, tmp_path / "summary.tsv")
    pair = load_ea_pair("umls", SPEC, None)
    row = read_tsv(tmp_path / "summary.tsv").iloc[0]
    assert len(table) == 1
    assert row["num_entities1"] == len(pair.entity_labels1) and row["num_entities2"] == len(pair.entity_labels2)
    assert row["num_triples1"] == len(pair.triples1) and row["num_triples2"] == len(pair.triples2)
    assert row["num_alignments"] == len(pair.alignment)


def test_training_run_writes_consistent_files(tmp_path):
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        files = TrainingFiles(*(tmp_path / name for name in
                                ("representations.pt", "split.tsv", "losses.tsv", "config.json", "timing.json")))
        model = {"embedding_dim": 8, "num_negatives": 2, "num_epochs": 3}
        train_ea_to_files("umls", SPEC, None, model, 10, 4, files)
    finally:
        torch.set_num_threads(previous)
    pair = load_ea_pair("umls", SPEC, None)
    want_train, want_pool = split_alignment(pair.alignment, 10, 4)
    train, pool = read_split(files.split)
    np.testing.assert_array_equal(train, want_train)
    np.testing.assert_array_equal(pool, want_pool)
    left, right = load_representations(files.representations)
    assert left.shape == (pair.num_entities1, 8) and right.shape == (pair.num_entities2, 8)
    assert torch.isfinite(left).all() and torch.isfinite(right).all()
    losses = read_tsv(files.losses)
    assert list(losses["epoch"]) == [1, 2, 3] and np.isfinite(losses["loss"]).all()
    config = json.loads(files.config.read_text())
    assert (config["model"], config["ea_dataset"], config["num_train"], config["seed"]) == ("gcn_align", "umls", 10, 4)
    assert config["embedding_dim"] == 8 and config["num_epochs"] == 3
    timing = json.loads(files.timing.read_text())
    assert timing["epochs"] == 3 and timing["device"] == "cpu" and timing["torch_threads"] == 1
    assert timing["seconds_per_epoch"] == pytest.approx(timing["train_seconds"] / 3)


def _brute_force(queries: np.ndarray, candidates: np.ndarray) -> dict[str, list]:
    """Ranks of query i's partner (candidate i) by the negative L1 distance; ties broken by candidate position."""
    out = {"optimistic": [], "pessimistic": [], "realistic": [], "nondeterministic": []}
    for i, q in enumerate(queries):
        score = [-float(np.abs(q - c).sum()) for c in candidates]
        better = sum(s > score[i] for s in score)
        tied_before = sum(s == score[i] for s in score[:i])
        out["optimistic"].append(1 + better)
        out["pessimistic"].append(better + sum(s == score[i] for s in score))
        out["realistic"].append((out["optimistic"][-1] + out["pessimistic"][-1]) / 2)
        out["nondeterministic"].append(1 + better + tied_before)
    return out


def test_ranks_of_the_test_pool_by_brute_force(tmp_path):
    pair = load_ea_pair("umls", SPEC, None)
    rng = np.random.default_rng(0)
    left = torch.from_numpy(rng.integers(0, 3, size=(pair.num_entities1, 2)).astype(np.float32))  # many ties
    right = torch.from_numpy(rng.integers(0, 3, size=(pair.num_entities2, 2)).astype(np.float32))
    torch.save({"left": left, "right": right}, tmp_path / "representations.pt")
    train, pool = split_alignment(pair.alignment, 120, seed=1)
    write_tsv(split_frame(pair, train, pool), tmp_path / "split.tsv")
    table = ea_ranks_to_file("umls", SPEC, None, tmp_path / "representations.pt", tmp_path / "split.tsv",
                             tmp_path / "ranks.parquet")
    back = pd.read_parquet(tmp_path / "ranks.parquet")
    pd.testing.assert_frame_equal(back, table)
    assert len(table) == 2 * len(pool) and (table["num_candidates"] == len(pool)).all()
    a, b = left.numpy()[pool[:, 0]], right.numpy()[pool[:, 1]]
    lab1 = np.asarray(pair.entity_labels1, dtype=object)[pool[:, 0]]
    lab2 = np.asarray(pair.entity_labels2, dtype=object)[pool[:, 1]]
    for side, queries, candidates, source, target in (("left", a, b, lab1, lab2), ("right", b, a, lab2, lab1)):
        want = pd.DataFrame({"source": source, "target": target, **_brute_force(queries, candidates)})
        got = table[table["side"] == side].merge(want, on=["source", "target"], suffixes=("", "_want"))
        assert len(got) == len(pool)
        for rank_type in ("optimistic", "pessimistic", "realistic", "nondeterministic"):
            np.testing.assert_array_equal(got[f"rank_{rank_type}"], got[rank_type], err_msg=f"{side} {rank_type}")
    assert (table["rank_optimistic"] < table["rank_pessimistic"]).any()  # the data do tie
