"""Fixtures of the study tests: a small synthetic EA pair whose alignment is known."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.ea.data import EAPair
from kgeval.studies.s3.data import S3Pair


def synthetic_pair(n: int = 40, m: int = 160, r: int = 4, seed: int = 0, names: bool = True) -> S3Pair:
    """Two isomorphic random graphs (graph 2 = graph 1 with permuted ids); graph-2 names are graph-1 names with the
    last letter replaced by ``x`` (near-identical); alignment = the permutation."""
    rng = np.random.default_rng(seed)
    t1 = np.stack([rng.integers(n, size=m), rng.integers(r, size=m), rng.integers(n, size=m)], axis=1)
    t1 = np.unique(t1[t1[:, 0] != t1[:, 2]], axis=0)
    perm = rng.permutation(n)
    t2 = np.stack([perm[t1[:, 0]], t1[:, 1], perm[t1[:, 2]]], axis=1)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = ["".join(rng.choice(letters, size=7)) for _ in range(n)]
    names1 = [(w,) if names else () for w in words]
    names2: list[tuple[str, ...]] = [()] * n
    for i, j in enumerate(perm):
        names2[j] = (words[i][:-1] + "x",) if names else ()
    pair = EAPair(
        name="synthetic",
        triples1=t1,
        triples2=t2,
        entity_labels1=[f"a{i}" for i in range(n)],
        entity_labels2=[f"b{i}" for i in range(n)],
        alignment=np.stack([np.arange(n), perm], axis=1),
    )
    return S3Pair(pair, names1, names2, None, None, "synthetic", "none")


@pytest.fixture
def make_pair():
    """:func:`synthetic_pair` as a fixture."""
    return synthetic_pair


@pytest.fixture
def hits_at_1():
    """:func:`left_hits_at_1` as a fixture."""
    return left_hits_at_1


def left_hits_at_1(scorer, test: np.ndarray, n: int) -> float:
    """Hits@1 of graph-1 -> graph-2 ranking against all n graph-2 entities."""
    from kgeval.studies.s3.models import rank_test_pairs

    result = rank_test_pairs(scorer, test, n, n, candidates="all", sides=("left",))["left"]
    return float((np.asarray(result.rank_realistic) <= 1).mean())
