"""Bootstrap of S4's tau-by-depth statistics over questions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from kgeval.studies.s4.stability import UnitValues
from kgeval.studies.s4.tau_bootstrap import level_units, paired_tau_batch, tau_replicates

METRICS = [("micro", "mrr"), ("macro", "mrr")]


def _values(keys: list[tuple[str, str, str]], numerators: np.ndarray, denominators: np.ndarray) -> UnitValues:
    questions = pd.DataFrame(keys, columns=["side", "relation", "anchor"])
    return UnitValues(numerators, denominators, ["a", "b", "c"], list(METRICS), questions)


def test_paired_tau_batch_equals_scipy():
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 4, size=(5, 6, 2)).astype(float), rng.normal(size=(5, 6, 2))
    taus = paired_tau_batch(x, y)
    for b in range(5):
        for m in range(2):
            expected = stats.kendalltau(x[b, :, m], y[b, :, m]).statistic
            assert taus[b, m] == pytest.approx(expected) or (np.isnan(expected) and np.isnan(taus[b, m]))


def test_paired_tau_batch_constant_ranking_is_nan():
    x = np.ones((1, 3, 1))
    assert np.isnan(paired_tau_batch(x, np.arange(3.0).reshape(1, 3, 1))[0, 0])


def test_level_units_aligns_on_the_union_of_questions():
    sparse = _values([("head", "r", "x")], np.ones((1, 3, 2)), np.ones((1, 2)))
    deep = _values([("head", "r", "x"), ("tail", "r", "y")], np.full((2, 3, 2), 2.0), np.full((2, 2), 2.0))
    units = level_units({"sparse": sparse, "depth1": deep}, [("micro", "mrr")])
    assert units["sparse"].numerators.shape == (2, 3, 1)
    assert units["sparse"].denominators[:, 0].tolist() == [1.0, 0.0]  # the sparse level lacks the tail question
    assert units["depth1"].metrics == [("micro", "mrr")]


def test_identical_levels_give_tau_one_in_every_resample():
    rng = np.random.default_rng(1)
    keys = [("head", "r", str(i)) for i in range(50)]
    values = _values(keys, rng.random((50, 3, 2)), np.ones((50, 2)))
    boot = tau_replicates({"sparse": values, "depth1": values, "depth2": values}, resamples=70, seed=3)
    assert boot.depths == [1, 2] and boot.resamples == 70 and boot.num_questions == 50
    assert np.all(boot.at("micro", "mrr", 2) == 1.0)
    assert "50 questions" in boot.unit()


def test_replicates_are_seeded():
    rng = np.random.default_rng(2)
    keys = [("head", "r", str(i)) for i in range(20)]
    a, b = (_values(keys, rng.random((20, 3, 2)), np.ones((20, 2))) for _ in range(2))
    one = tau_replicates({"sparse": a, "depth1": b}, 30, seed=5).taus
    two = tau_replicates({"sparse": a, "depth1": b}, 30, seed=5).taus
    np.testing.assert_array_equal(one, two)
    assert not np.array_equal(one, tau_replicates({"sparse": a, "depth1": b}, 30, seed=6).taus)


def _random_levels(rng, questions: int) -> dict[str, UnitValues]:
    """Three levels over the same questions; the sparse level lacks some of them (denominator 0)."""
    keys = [("head", "r", str(i)) for i in range(questions)]
    levels = {}
    for level in ("sparse", "depth1", "depth3"):
        counts = rng.integers(0 if level == "sparse" else 1, 4, size=(questions, 1)).astype(float)
        denominators = np.concatenate([counts, (counts > 0).astype(float)], axis=1)  # micro counts, macro 0/1
        numerators = rng.random((questions, 3, 2)) * denominators[:, None, :]
        levels[level] = _values(keys, numerators, denominators)
    return levels


def test_component_resampling_equals_brute_force():
    """Each resample draws components with replacement; a drawn component brings all its questions, every level's
    values are the kept questions' pooled sums, and tau is SciPy's tau-b of the two rankings."""
    from kgeval.uncertainty.resampling import resample_indices

    rng = np.random.default_rng(7)
    levels = _random_levels(rng, 30)
    components = np.repeat(np.arange(12), [1, 2, 3, 4, 1, 1, 5, 2, 3, 2, 4, 2])[rng.permutation(30)]
    components = pd.factorize(components)[0]
    boot = tau_replicates(levels, resamples=25, seed=4, components=components)
    assert boot.num_components == 12 and boot.num_questions == 30 and "12 components of 30 questions" in boot.unit()
    drawn = next(resample_indices(12, 25, 4))
    for b, picks in enumerate(drawn):
        rows = np.concatenate([np.flatnonzero(components == c) for c in picks])  # a component drawn twice counts twice

        def ranking(level: str) -> np.ndarray:
            v = levels[level]
            return v.numerators[rows].sum(axis=0) / v.denominators[rows].sum(axis=0)[None, :]

        for depth in (1, 3):
            for m, metric in enumerate(METRICS):
                x, y = ranking("sparse")[:, m], ranking(f"depth{depth}")[:, m]
                want = stats.kendalltau(x, y).statistic if np.isfinite(x).all() else np.nan
                got = boot.at(*metric, depth)[b]
                assert got == pytest.approx(want) or (np.isnan(want) and np.isnan(got))


def test_singleton_components_are_the_question_bootstrap():
    levels = _random_levels(np.random.default_rng(8), 15)
    plain = tau_replicates(levels, resamples=40, seed=2)
    singletons = tau_replicates(levels, resamples=40, seed=2, components=np.arange(15))
    np.testing.assert_array_equal(plain.taus, singletons.taus)
    assert plain.num_components == 15


def test_components_must_number_every_question():
    levels = _random_levels(np.random.default_rng(9), 4)
    for bad in (np.array([0, 1, 1]), np.array([0, 2, 2, 0])):  # too short; component 1 empty
        with pytest.raises(ValueError, match="components must number the 4 questions"):
            tau_replicates(levels, resamples=5, seed=0, components=bad)


def test_compute_tau_replicates_links_the_questions_of_shared_triples():
    """From the tables: a triple answers its head and its tail question, so they fall in one component."""
    from kgeval.studies.s4.tau_bootstrap import compute_tau_replicates

    triples = [("a", "r", "b", "sparse"), ("a", "r", "c", "depth1"), ("d", "r", "e", "sparse"), ("f", "s", "g", "depth1")]
    answers, questions = [], []
    for system, shift in (("x", 0), ("y", 1), ("z", 2)):
        for level in ("sparse", "depth1"):
            for i, (h, r, t, first) in enumerate(triples):
                if level == "sparse" and first != "sparse":
                    continue
                for side, anchor in (("head", t), ("tail", h)):
                    rank = 1.0 + (i + shift + (side == "head")) % 3
                    answers.append((level, system, side, r, h, t, anchor, rank))
    answers = pd.DataFrame(answers, columns=["level", "system", "side", "relation", "head", "tail", "anchor", "rank"])
    for (level, system, side, r, anchor), group in answers.groupby(["level", "system", "side", "relation", "anchor"]):
        best = group["rank"].min()
        questions.append((level, system, side, r, anchor, best, 1 / best, 1 / best))
    questions = pd.DataFrame(
        questions, columns=["level", "system", "side", "relation", "anchor", "rank", "map@20", "ndcg@20"]
    )
    boot = compute_tau_replicates(answers, questions, metrics=METRICS, hits_at=(1,), ir_cutoff=20, resamples=8,
                                  seed=0)
    # questions: (head, r, b), (head, r, c), (tail, r, a) linked by a-r-b and a-r-c; (head, r, e), (tail, r, d);
    # (head, s, g), (tail, s, f)
    assert boot.num_questions == 7 and boot.num_components == 3
