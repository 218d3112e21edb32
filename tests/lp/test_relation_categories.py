"""kgeval.lp.relation_categories: the categories equal a brute-force count on hand-built and random triples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.lp.relation_categories import relation_categories


def _brute_force(triples: list[tuple[str, str, str]], relation: str) -> str:
    pairs = {(h, t) for h, r, t in triples if r == relation}
    heads, tails = {h for h, _ in pairs}, {t for _, t in pairs}
    tails_per_head = np.mean([len({t for h2, t in pairs if h2 == h}) for h in heads])
    heads_per_tail = np.mean([len({h for h, t2 in pairs if t2 == t}) for t in tails])
    return {(False, False): "1-1", (True, False): "1-N", (False, True): "N-1", (True, True): "M-N"}[
        (tails_per_head >= 1.5, heads_per_tail >= 1.5)]


def test_categories_match_brute_force_on_hand_built_triples():
    triples = [
        ("a", "capital", "x"), ("b", "capital", "y"),                        # 1-1
        ("a", "child", "x"), ("a", "child", "y"), ("b", "child", "z"),       # tails per head 1.5: 1-N
        ("a", "born", "x"), ("b", "born", "x"), ("c", "born", "y"),          # heads per tail 1.5: N-1
        ("a", "knows", "b"), ("a", "knows", "c"), ("b", "knows", "a"), ("c", "knows", "a"),
        ("b", "knows", "c"), ("c", "knows", "b"),                            # 2 and 2: M-N
        ("a", "near", "x"), ("a", "near", "x"), ("a", "near", "y"), ("b", "near", "z"), ("c", "near", "z"),
    ]
    table = relation_categories(pd.DataFrame(triples, columns=["head", "relation", "tail"]))
    assert table["relation"].tolist() == sorted({r for _, r, _ in triples})
    expected = {r: _brute_force(triples, r) for r in table["relation"]}
    assert dict(zip(table["relation"], table["category"])) == expected
    assert [expected[r] for r in ("capital", "child", "born", "knows")] == ["1-1", "1-N", "N-1", "M-N"]
    rng = np.random.default_rng(0)
    names = [f"e{i}" for i in range(6)]
    random = [(rng.choice(names), f"r{rng.integers(4)}", rng.choice(names)) for _ in range(60)]
    table = relation_categories(pd.DataFrame(random, columns=["head", "relation", "tail"]))
    assert dict(zip(table["relation"], table["category"])) == {r: _brute_force(random, r) for r in table["relation"]}


def test_other_names_and_bad_input():
    triples = pd.DataFrame([("a", "r", "x"), ("a", "r", "y"), ("b", "r", "x"), ("b", "r", "y")],
                           columns=["head", "relation", "tail"])
    assert relation_categories(triples, labels=("1-1", "1-N", "N-1", "N-N"))["category"].tolist() == ["N-N"]
    with pytest.raises(ValueError, match="lack the column"):
        relation_categories(triples.drop(columns="tail"))
    with pytest.raises(ValueError, match="no triples given"):
        relation_categories(triples.iloc[:0])
