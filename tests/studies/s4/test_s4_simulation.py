"""S4 simulated pooling: deterministic and seeded, no leak of hidden answers, depths by brute force."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s4.labels import read_label_set, write_label_set
from kgeval.studies.s4.simulation import simulate_labels

from test_s4_ranks import World


def topk_table(world: World, scores: dict, k: int) -> pd.DataFrame:
    """Top-k of every question with a universe answer: train answers removed, universe (test) answers kept."""
    rows = []
    questions = {("head", r, t) for h, r, t in world.universe} | {("tail", r, h) for h, r, t in world.universe}
    for side, r, anchor in sorted(questions):
        train = world.answers_of(side, r, anchor, world.train)
        s = scores[(side, r, anchor)]
        order = sorted((j for j in range(len(s)) if j not in train), key=lambda j: (-s[j], j))[:k]
        for position, j in enumerate(order, start=1):
            rows.append((side, f"r{r}", world.entities[anchor], position, world.entities[j], s[j]))
    return pd.DataFrame(rows, columns=["side", "relation", "anchor", "position", "candidate", "score"])


def frame(world: World, triples) -> pd.DataFrame:
    return pd.DataFrame(
        [(world.entities[h], f"r{r}", world.entities[t]) for h, r, t in triples], columns=["head", "relation", "tail"]
    )


@pytest.fixture(scope="module")
def setting():
    world = World(7, num_entities=25, num_true=260)
    other = World(8, num_entities=25, num_true=260).scores  # a second system: other scores, same world
    topk = {"sys_a": topk_table(world, world.scores, 6), "sys_b": topk_table(world, other, 6)}
    test = frame(world, world.universe)
    oracle = pd.concat([frame(world, sorted(world.train)), test])
    return world, test, topk, oracle


def test_simulation_is_deterministic_and_seeded(setting) -> None:
    world, test, topk, oracle = setting
    a = simulate_labels(test, topk, oracle=oracle, hide_fraction=0.4, seed=3, max_depth=5)
    b = simulate_labels(
        test.sample(frac=1.0, random_state=1),
        dict(reversed(topk.items())),
        oracle=oracle,
        hide_fraction=0.4,
        seed=3,
        max_depth=5,
    )
    pd.testing.assert_frame_equal(a.triples, b.triples)
    pd.testing.assert_frame_equal(a.judgments, b.judgments)
    c = simulate_labels(test, topk, oracle=oracle, hide_fraction=0.4, seed=4, max_depth=5)
    assert not a.triples["depth"].fillna(-1).equals(c.triples["depth"].fillna(-1))
    assert int((a.triples["depth"] != 0).sum()) == round(0.4 * len(test))


def test_hidden_answers_never_leak_and_depths_match_brute_force(setting) -> None:
    world, test, topk, oracle = setting
    labels = simulate_labels(test, topk, oracle=oracle, hide_fraction=0.5, seed=0, max_depth=4)
    t = labels.triples
    visible = t.loc[t["depth"] == 0, ["head", "relation", "tail"]]
    hidden = t.loc[t["depth"] != 0]  # NaN or pooled
    assert len(hidden) == round(0.5 * len(test)) and len(visible) + len(hidden) == len(test)
    sparse_eval, sparse_filter = labels.level_masks("sparse")
    hidden_index = pd.MultiIndex.from_frame(hidden[["head", "relation", "tail"]])
    triples_index = pd.MultiIndex.from_frame(t[["head", "relation", "tail"]])
    assert not (sparse_eval & triples_index.isin(hidden_index)).any()
    assert not (sparse_filter & triples_index.isin(hidden_index)).any()
    assert not t["known"].any()

    # brute force: a hidden triple's depth is its best top-k position among the visible triples' questions
    visible_questions = {("head", r, tl) for h, r, tl in visible.itertuples(index=False, name=None)} | {
        ("tail", r, h) for h, r, tl in visible.itertuples(index=False, name=None)
    }
    expected = {}
    for table in topk.values():
        for side, r, anchor, position, candidate, _ in table.itertuples(index=False, name=None):
            if (side, r, anchor) in visible_questions and position <= 4:
                triple = (candidate, r, anchor) if side == "head" else (anchor, r, candidate)
                expected[triple] = min(expected.get(triple, 99), position)
    visible_set = set(visible[["head", "relation", "tail"]].itertuples(index=False, name=None))
    expected = {k: v for k, v in expected.items() if k not in visible_set}
    judged = labels.judgments.set_index(["head", "relation", "tail"])
    assert set(judged.index) == set(expected)
    oracle_set = set(oracle.itertuples(index=False, name=None))
    for triple, depth in expected.items():
        assert judged.loc[triple, "depth"] == depth
        assert judged.loc[triple, "label"] == ("Y" if triple in oracle_set else "N")
    pooled = {k: v for k, v in expected.items() if k in oracle_set}
    assert pooled, "the pool found no hidden answer: the test would be vacuous"
    for h, r, tl, depth in hidden[["head", "relation", "tail", "depth"]].itertuples(index=False, name=None):
        assert (depth == pooled[(h, r, tl)]) if (h, r, tl) in pooled else np.isnan(depth)
    # deeper pools label more (never fewer) answers
    sizes = [int(labels.level_masks(level)[0].sum()) for level in labels.levels()[1:]]
    assert sizes == sorted(sizes) and sizes[-1] > sizes[0]


def test_simulation_rejects_bad_input_and_round_trips(setting, tmp_path) -> None:
    world, test, topk, oracle = setting
    with pytest.raises(ValueError, match="holds 6 positions"):
        simulate_labels(test, topk, oracle=oracle, hide_fraction=0.5, seed=0, max_depth=10)
    with pytest.raises(ValueError, match="hide_fraction"):
        simulate_labels(test, topk, oracle=oracle, hide_fraction=1.0, seed=0)
    labels = simulate_labels(test, topk, oracle=oracle, hide_fraction=0.3, seed=1, max_depth=3)
    write_label_set(labels, tmp_path / "t.tsv", tmp_path / "j.tsv", tmp_path / "meta.json")
    back = read_label_set(tmp_path / "t.tsv", tmp_path / "j.tsv", max_depth=3)
    pd.testing.assert_frame_equal(back.triples, labels.triples, check_dtype=False)
    assert back.levels() == ["original", "sparse", "depth1", "depth2", "depth3"]


def test_stray_oracle_positive_is_reported(setting) -> None:
    world, test, topk, oracle = setting
    # the question (?, r, t) of a test triple, with a train triple's head injected at position 1
    h, r, t = world.universe[0]
    train_heads = [a for a, rr, b in world.train if rr == r and b == t]
    if not train_heads:
        pytest.skip("no train triple shares a question with the first test triple")
    bad = topk["sys_a"].copy()
    row = pd.DataFrame(
        [("head", f"r{r}", world.entities[t], 1, world.entities[train_heads[0]], 9.0)], columns=bad.columns
    )
    with pytest.raises(ValueError, match="outside the test set"):
        simulate_labels(test, {"x": pd.concat([row, bad])}, oracle=oracle, hide_fraction=0.0, seed=0, max_depth=3)
