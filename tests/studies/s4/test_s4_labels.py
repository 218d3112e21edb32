"""S4 label sets: simulated pooling (deterministic, no leak, depths by brute force) and the released S4 labels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s4.labels import (
    LabelSet,
    load_released_labels,
    read_label_set,
    read_triples_file,
    simulate_labels,
    write_label_set,
)
from kgeval.studies.s4.categories import compare_categories, load_released_categories, relation_categories

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


# ---------------------------------------------------------------------------------------------------------------
# the released labels (FB15k-237): ../shared/data/kgc-sparsity and ../shared/data/fb15k237


@pytest.fixture(scope="module")
def release(request):
    from conftest import shared_data_dir

    root = shared_data_dir()
    if not (root / "kgc-sparsity").is_dir() or not (root / "fb15k237").is_dir():
        pytest.skip(f"S4 release or FB15k-237 not present under {root} (set KGEVAL_SHARED_DATA)")
    return root


def read_train(release) -> pd.DataFrame:
    return pd.read_csv(
        release / "fb15k237" / "train.txt",
        sep="\t",
        header=None,
        names=["head", "relation", "tail"],
        dtype=str,
        quoting=3,
        keep_default_na=False,
    )


@pytest.mark.shared_data
def test_released_labels(release) -> None:
    test_file = read_triples_file(release / "fb15k237" / "test.txt")
    train = read_train(release)
    entities = set(train["head"]) | set(train["tail"])
    # as the dataset loader does: drop test triples with entities unseen in training (one of them is sampled)
    known = test_file["head"].isin(entities) & test_file["tail"].isin(entities)
    test = test_file.loc[known]
    labels = load_released_labels(test, release / "kgc-sparsity", entities=entities, relations=set(train["relation"]))
    t = labels.triples
    # FB-Test-S: the 1,023 sampled test triples are the rows of test.txt at sample_idxs.txt
    idx = [int(x) for x in (release / "kgc-sparsity/FB-Test-S/sample_idxs.txt").read_text().split()]
    sampled = read_triples_file(release / "kgc-sparsity/FB-Test-S/samples.txt")
    pd.testing.assert_frame_equal(test_file.iloc[idx].reset_index(drop=True), sampled)
    sampled = sampled.loc[sampled["head"].isin(entities) & sampled["tail"].isin(entities)]
    assert len(sampled) == 1022 and labels.meta["dropped_unknown"]["samples"] == 1
    sparse_eval, sparse_filter = labels.level_masks("sparse")
    got = (
        t.loc[sparse_eval, ["head", "relation", "tail"]]
        .sort_values(["head", "relation", "tail"])
        .reset_index(drop=True)
    )
    pd.testing.assert_frame_equal(got, sampled.sort_values(["head", "relation", "tail"]).reset_index(drop=True))
    # every FB-Test-O triple is filtered at every level
    assert int(t["original"].sum()) == len(test.drop_duplicates())
    assert (sparse_filter == (sparse_eval | t["original"].to_numpy())).all()
    # FB-Test-S-C: 2,738 positives = 1,023 sampled + 1,715 pooled; the sampled one with an unseen entity is gone
    deepest_eval, _ = labels.level_masks("depth10")
    assert int(deepest_eval.sum()) == 2738 - 1
    assert labels.meta["num_added_positive"] == 1715
    summary = labels.summary().set_index("level")
    added = summary.loc[[f"depth{d}" for d in range(1, 11)], "num_added"].to_numpy()
    assert (np.diff(added) >= 0).all() and added[0] > 0
    assert (
        summary.loc["depth2", "num_added"] == 287
    )  # "merely 287 added labeled positive triples at depth 2" (Sec. 4.2)
    # 21,469 pooled judgments, less the 45 non-sampled ones with an entity unseen in training
    assert summary.loc["depth10", "num_judged"] == 21469 - 45


@pytest.mark.shared_data
def test_relation_categories_match_the_release(release) -> None:
    train = read_train(release)
    computed = relation_categories(train)
    released = load_released_categories(release / "kgc-sparsity")
    table = compare_categories(computed, released)
    assert table.to_numpy().sum() == 237
    assert np.trace(table.to_numpy()) == 237, f"categories disagree with the release:\n{table}"


def test_relation_categories_by_hand() -> None:
    triples = pd.DataFrame(
        [
            ("a", "one", "x"),
            ("b", "one", "y"),  # 1-1
            ("a", "onemany", "x"),
            ("a", "onemany", "y"),
            ("b", "onemany", "z"),
            ("b", "onemany", "w"),  # 1-N
            ("a", "manyone", "x"),
            ("b", "manyone", "x"),
            ("c", "manyone", "y"),
            ("d", "manyone", "y"),  # N-1
            ("a", "mm", "x"),
            ("a", "mm", "y"),
            ("b", "mm", "x"),
            ("b", "mm", "y"),  # N-N
        ],
        columns=["head", "relation", "tail"],
    )
    got = relation_categories(triples).set_index("relation")["category"].to_dict()
    assert got == {"one": "1-1", "onemany": "1-N", "manyone": "N-1", "mm": "N-N"}
    with pytest.raises(ValueError, match="lack the column"):
        relation_categories(triples.drop(columns="tail"))


def test_label_set_validation() -> None:
    triples = pd.DataFrame(
        {
            "head": ["a", "a"],
            "relation": ["r", "r"],
            "tail": ["b", "b"],
            "depth": [0.0, 1.0],
            "original": True,
            "known": False,
        }
    )
    with pytest.raises(ValueError, match="twice"):
        LabelSet(triples=triples, judgments=pd.DataFrame(), max_depth=1)
    ok = LabelSet(triples=triples.iloc[:1], judgments=pd.DataFrame(columns=["depth"]), max_depth=1)
    with pytest.raises(ValueError, match="deeper"):
        ok.level_masks("depth3")
    with pytest.raises(ValueError, match="unknown label level"):
        ok.level_masks("deep")


@pytest.mark.shared_data
def test_release_download_and_cache(release, tmp_path) -> None:
    """The download path (pystow) fetches every release file once; a second call reads the cache only."""
    from kgeval.studies.s4.labels import RELEASE_FILES, fetch_release

    root = fetch_release(tmp_path, url=(release / "kgc-sparsity").as_uri())
    for relative in RELEASE_FILES:
        assert (root / relative).read_bytes() == (release / "kgc-sparsity" / relative).read_bytes()
    again = fetch_release(tmp_path, url="file:///nonexistent/kgc-sparsity")  # cached: nothing is fetched
    assert again == root
