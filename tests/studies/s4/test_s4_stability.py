"""S4 stability to the test data (Fig. 7) and discriminative power (Fig. 8): the fast subset paths against the metrics
recomputed from scratch, SciPy's tau and t-test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from kgeval.studies.s4.analysis import kendall_tau
from kgeval.studies.s4.metrics import aggregate_metrics, evaluate_label_levels, ir_measures_per_question
from kgeval.uncertainty.comparisons import sign_flip_pvalues
from kgeval.uncertainty.resampling import stream_seed
from kgeval.studies.s4.stability import (
    UNIT_QUESTIONS,
    UNIT_TRIPLES,
    component_sums,
    discriminative_power,
    question_components,
    stability_table,
    UnitValues,
    subset_taus,
    triple_subset_taus,
    triple_subset_values,
    triple_units,
    unit_values,
)

from test_s4_metrics import world_labels
from test_s4_ranks import World


def subset_values(values: UnitValues, weights: np.ndarray) -> np.ndarray:
    """Reference: metric values of every system on question subsets given as 0/1 weights (R, Q), shape (R, S, M):
    the kept questions' summed numerators over their summed denominators."""
    Q, S, M = values.numerators.shape
    weights = np.asarray(weights, dtype=np.float64)
    flat = values.numerators.reshape(Q, S * M)
    return (weights @ flat).reshape(len(weights), S, M) / (weights @ values.denominators)[:, None, :]


def five_systems() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The answers and questions tables of five systems, increasingly noisy copies of one world, on its labels."""
    world = World(11, num_entities=20, num_true=220)
    labels = world_labels(world, 11)
    ranks = {}
    for s in range(5):
        w = World(11, num_entities=20, num_true=220)
        noise = World(100 + s, num_entities=20, num_true=220).scores
        w.scores = {k: v + 0.3 * s * noise[k] for k, v in w.scores.items()}
        ranks[f"sys{s}"] = w.ranks(set(w.universe))
    return evaluate_label_levels(labels, ranks, ir_cutoff=20)


@pytest.fixture(scope="module")
def evaluated():
    return five_systems()


def test_unit_values_reproduce_the_metrics(evaluated) -> None:
    answers, questions = evaluated
    metrics = aggregate_metrics(answers, questions, (1, 3), 20).set_index(["level", "system", "family", "metric"])[
        "value"
    ]
    for level in ("sparse", "depth2"):
        values = unit_values(answers, questions, level, (1, 3), 20)
        full = values.full()
        for s, system in enumerate(values.systems):
            for m, (family, metric) in enumerate(values.metrics):
                assert full[s, m] == pytest.approx(metrics[(level, system, family, metric)])
        # a random question subset: the per-question values summed over it equal the metrics recomputed on the
        # subset's tables
        rng = np.random.default_rng(0)
        keep = rng.random(len(values.questions)) < 0.4
        got = subset_values(values, keep[None, :].astype(float))[0]
        kept = pd.MultiIndex.from_frame(values.questions.loc[keep])
        a = answers.loc[
            (answers["level"] == level) & pd.MultiIndex.from_frame(answers[["side", "relation", "anchor"]]).isin(kept)
        ]
        q = questions.loc[
            (questions["level"] == level)
            & pd.MultiIndex.from_frame(questions[["side", "relation", "anchor"]]).isin(kept)
        ]
        direct = aggregate_metrics(a, q, (1, 3), 20).set_index(["system", "family", "metric"])["value"]
        for s, system in enumerate(values.systems):
            for m, (family, metric) in enumerate(values.metrics):
                assert got[s, m] == pytest.approx(direct[(system, family, metric)])


def test_subset_taus_equal_direct_subsets(evaluated) -> None:
    """The prefix-sum fast path against subset_values + SciPy on the same drawn subsets."""
    answers, questions = evaluated
    values = unit_values(answers, questions, "depth1", (1, 3), 20)
    Q = len(values.questions)
    fractions = [0.3, 0.1, 0.3, 0.8]
    taus = subset_taus(values, fractions, repeats=2, seed=5)
    rng = np.random.default_rng(5)
    full = values.full()
    for r in range(2):
        order = rng.permutation(Q)
        for f, fraction in enumerate(fractions):
            weights = np.zeros((1, Q))
            weights[0, order[: round(fraction * Q)]] = 1.0
            subset = subset_values(values, weights)[0]
            for m in range(len(values.metrics)):
                want = kendall_tau(subset[:, m], full[:, m])[0]
                got = taus[f, r, m]
                assert (np.isnan(want) and np.isnan(got)) or got == pytest.approx(want)


def test_stability_full_subsets_agree_and_seed_determines(evaluated) -> None:
    answers, questions = evaluated
    values = unit_values(answers, questions, "depth2", (1, 3), 20)
    taus = subset_taus(values, [1.0], repeats=3, seed=0)
    defined = np.isfinite(taus)
    assert defined.any() and np.allclose(taus[defined], 1.0)
    a = stability_table(values, [0.2, 0.6], repeats=5, seed=1)
    b = stability_table(values, [0.2, 0.6], repeats=5, seed=1)
    pd.testing.assert_frame_equal(a, b)
    assert set(a["family"]) == {"micro", "macro"} and (a["num_units"] > 0).all() and set(a["unit"]) == {"questions"}
    with pytest.raises(ValueError, match="fraction"):
        subset_taus(values, [1.5], repeats=1, seed=0)


def _direct_triple_subset(answers: pd.DataFrame, questions: pd.DataFrame, level: str, kept_triples: set) -> pd.Series:
    """Metrics of a triple subset recomputed from scratch: micro over the kept answers; per question the best kept
    answer's macro rank, and AP@20/nDCG@20 by ir-measures from the kept answers' IR positions."""
    a = answers.loc[answers["level"] == level]
    keep = pd.Series(list(zip(a["head"], a["relation"], a["tail"])), index=a.index).isin(kept_triples)
    a = a.loc[keep]
    rows = []
    for system, part in a.groupby("system"):
        r = part["rank"].to_numpy(float)
        micro = {"mr": r.mean(), "mrr": (1 / r).mean(), "hits@1": (r <= 1).mean(), "hits@3": (r <= 3).mean()}
        qkey = part["side"] + "|" + part["relation"] + "|" + part["anchor"]
        best = part.groupby(qkey)["macro_rank"].min()
        ir = ir_measures_per_question(qkey.to_numpy(), part["head"] + "|" + part["tail"], part["ir_position"], 20)
        macro = {
            "mrr": (1 / best).mean(),
            "hits@1": (best <= 1).mean(),
            "hits@3": (best <= 3).mean(),
            "map@20": ir["map@20"].mean(),
            "ndcg@20": ir["ndcg@20"].mean(),
        }
        rows += [(system, "micro", m, v) for m, v in micro.items()] + [
            (system, "macro", m, v) for m, v in macro.items()
        ]
    return pd.DataFrame(rows, columns=["system", "family", "metric", "value"]).set_index(
        ["system", "family", "metric"]
    )["value"]


def test_triple_units_reproduce_the_metrics_and_direct_subsets(evaluated) -> None:
    """Discarding test triples (the paper's Fig. 7): the full set gives the level's metrics (AP/nDCG as trec_eval's),
    a random subset the metrics recomputed from scratch on the kept triples."""
    answers, questions = evaluated
    metrics = aggregate_metrics(answers, questions, (1, 3), 20).set_index(["level", "system", "family", "metric"])[
        "value"
    ]
    for level in ("original", "depth2"):
        units = triple_units(answers, questions, level, (1, 3), 20)
        full = triple_subset_values(units, np.ones((1, units.num_triples), dtype=bool))[0]
        for s, system in enumerate(units.systems):
            for m, (family, metric) in enumerate(units.metrics):
                assert full[s, m] == pytest.approx(metrics[(level, system, family, metric)]), (level, family, metric)
        a = answers.loc[(answers["level"] == level) & (answers["system"] == units.systems[0])]
        triples = sorted(set(zip(a["head"], a["relation"], a["tail"])))
        rng = np.random.default_rng(1)
        keep = rng.random(len(triples)) < 0.4
        kept = {t for t, k in zip(triples, keep) if k}
        got = triple_subset_values(units, keep[None, :])[0]
        direct = _direct_triple_subset(answers, questions, level, kept)
        for s, system in enumerate(units.systems):
            for m, (family, metric) in enumerate(units.metrics):
                assert got[s, m] == pytest.approx(direct[(system, family, metric)]), (level, family, metric)


def test_triple_subset_taus_and_table(evaluated) -> None:
    answers, questions = evaluated
    units = triple_units(answers, questions, "depth1", (1, 3), 20)
    fractions = [0.5, 1.0]
    taus = triple_subset_taus(units, fractions, repeats=3, seed=2)
    full = triple_subset_values(units, np.ones((1, units.num_triples), dtype=bool))[0]
    rng = np.random.default_rng(2)
    for r in range(3):
        rank_of = np.empty(units.num_triples, dtype=np.int64)
        rank_of[rng.permutation(units.num_triples)] = np.arange(units.num_triples)
        subset = triple_subset_values(units, (rank_of < round(0.5 * units.num_triples))[None, :])[0]
        for m in range(len(units.metrics)):
            want = kendall_tau(subset[:, m], full[:, m]).tau
            assert (np.isnan(want) and np.isnan(taus[0, r, m])) or taus[0, r, m] == pytest.approx(want)
    defined = np.isfinite(taus[1])
    assert defined.any() and np.allclose(taus[1][defined], 1.0)
    table = stability_table(units, [0.3, 0.9], repeats=2, seed=0)
    assert set(table["unit"]) == {"triples"} and (table["num_units"] <= units.num_triples).all()


def test_discriminative_power_against_scipy(evaluated) -> None:
    answers, questions = evaluated
    table = discriminative_power(answers, questions, "depth2", (1, 3), 20)
    assert len(table) == 10 * (4 + 5)  # 10 pairs x (mr, mrr, hits@1, hits@3 + mrr, hits@1, hits@3, map, ndcg)
    level = answers.loc[answers["level"] == "depth2"].sort_values(["side", "relation", "head", "tail"], kind="stable")
    x = 1 / level.loc[level["system"] == "sys0", "rank"].to_numpy()
    y = 1 / level.loc[level["system"] == "sys3", "rank"].to_numpy()
    row = table.set_index(["family", "metric", "system_a", "system_b"]).loc[("micro", "mrr", "sys0", "sys3")]
    assert row["pvalue_t"] == pytest.approx(stats.ttest_rel(x, y).pvalue)
    # the method: the paired sign-flip test, the same as kgeval's model comparisons
    assert row["test"] == "sign-flip over components of linked questions (1,000 permutations)"
    assert 1 / 1001 <= row["pvalue"] <= 1.0
    again = discriminative_power(answers, questions, "depth2", (1, 3), 20, permutations=1000, seed=0)
    pd.testing.assert_frame_equal(table, again)
    # a system against a copy of itself: p = 1
    twin = answers.loc[answers["system"] == "sys1"].assign(system="twin")
    twin_q = questions.loc[questions["system"] == "sys1"].assign(system="twin")
    both = discriminative_power(
        pd.concat([answers.loc[answers["system"] == "sys1"], twin]),
        pd.concat([questions.loc[questions["system"] == "sys1"], twin_q]),
        "depth2",
        (1, 3),
        20,
    )
    assert (both["pvalue"] == 1.0).all() and (both["pvalue_t"] == 1.0).all()


def test_stability_table_summarises_the_subset_taus(evaluated) -> None:
    """Each row is the mean and SD of the defined taus of its (fraction, metric), with the subset size it used."""
    answers, questions = evaluated
    for values, draw, unit in (
        (unit_values(answers, questions, "depth1", (1, 3), 20), subset_taus, UNIT_QUESTIONS),
        (triple_units(answers, questions, "depth1", (1, 3), 20), triple_subset_taus, UNIT_TRIPLES),
    ):
        n = values.numerators.shape[0] if unit == UNIT_QUESTIONS else values.num_triples
        fractions = [0.5, 0.05]
        table = stability_table(values, fractions, repeats=4, seed=9)
        taus = draw(values, fractions, repeats=4, seed=9)
        assert list(table.columns) == ["unit", "fraction", "num_units", "family", "metric", "tau_mean", "tau_std",
                                       "num_defined"]
        assert set(table["unit"]) == {unit} and len(table) == 2 * len(values.metrics)
        keys = list(zip(table["family"], table["metric"], table["fraction"]))
        assert keys == sorted(keys)
        for row in table.itertuples():
            f = fractions.index(row.fraction)
            t = taus[f, :, values.metrics.index((row.family, row.metric))]
            t = t[np.isfinite(t)]
            assert row.num_units == max(1, round(row.fraction * n)) and row.num_defined == len(t)
            if len(t):
                assert row.tau_mean == pytest.approx(t.mean()) and row.tau_std == pytest.approx(t.std())
            else:
                assert np.isnan(row.tau_mean)


def test_subset_inputs_are_checked(evaluated) -> None:
    answers, questions = evaluated
    values = unit_values(answers, questions, "sparse", (1,), 20)
    with pytest.raises(ValueError, match="subset fraction must be in \\(0, 1\\]"):
        subset_taus(values, [0.0], repeats=1, seed=0)
    units = triple_units(answers, questions, "sparse", (1,), 20)
    with pytest.raises(ValueError, match="kept must have shape"):
        triple_subset_values(units, np.ones((1, units.num_triples - 1), dtype=bool))
    with pytest.raises(ValueError, match="subset fraction"):
        triple_subset_taus(units, [1.2], repeats=1, seed=0)
    # a subset without any triple has no value
    empty = triple_subset_values(units, np.zeros((1, units.num_triples), dtype=bool))
    assert np.isnan(empty).all()
    with pytest.raises(ValueError, match="lacks \\['ir_position', 'macro_rank'\\]"):
        triple_units(answers.drop(columns=["macro_rank", "ir_position"]), questions, "sparse", (1,), 20)
    with pytest.raises(ValueError, match="no answers/questions at level 'depth9'"):
        unit_values(answers, questions, "depth9", (1,), 20)


def test_systems_must_share_their_units(evaluated) -> None:
    answers, questions = evaluated
    level = "depth2"
    first = questions.loc[(questions["level"] == level) & (questions["system"] == "sys1")].index[0]
    with pytest.raises(ValueError, match="system 'sys1' has other questions than 'sys0'"):
        unit_values(answers, questions.drop(index=first), level, (1,), 20)
    dropped = answers.loc[(answers["level"] == level) & (answers["system"] == "sys2")].index[0]
    with pytest.raises(ValueError, match="system 'sys2' has other answers than 'sys0'"):
        triple_units(answers.drop(index=dropped), questions, level, (1,), 20)
    with pytest.raises(ValueError, match="system 'sys2' has other micro units than 'sys0'"):
        discriminative_power(answers.drop(index=dropped), questions, level, (1,), 20)


@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")  # SciPy, on the constant difference
def test_discriminative_power_of_a_constant_shift() -> None:
    """Two systems whose per-answer ranks differ by exactly one everywhere: t is infinite, p = 0; a third system with
    mixed differences gets SciPy's paired p-value."""
    rows, qrows = [], []
    ranks = {"A": [1, 2, 3, 4], "B": [2, 3, 4, 5], "C": [1, 3, 3, 9]}
    for system, rs in ranks.items():
        for i, r in enumerate(rs):
            rows.append(("original", system, "head", "r0", f"e{i}", f"t{i}", f"t{i}", float(r)))
            qrows.append(("original", system, "head", "r0", f"t{i}", float(r), 1.0 / r, 1.0 / r))
    answers = pd.DataFrame(rows, columns=["level", "system", "side", "relation", "head", "tail", "anchor", "rank"])
    questions = pd.DataFrame(qrows, columns=["level", "system", "side", "relation", "anchor", "rank", "map@20",
                                             "ndcg@20"])
    table = discriminative_power(answers, questions, "original", (1,), 20)
    table = table.set_index(["family", "metric", "system_a", "system_b"])
    assert table.loc[("micro", "mr", "A", "B"), "pvalue_t"] == 0.0
    # the sign-flip test on 4 units: only the 2 of 16 sign vectors with one sign reach the observed mean, p ~ 1/8
    assert 0.08 < table.loc[("micro", "mr", "A", "B"), "pvalue"] < 0.18
    want = stats.ttest_rel(np.array(ranks["A"], float), np.array(ranks["C"], float)).pvalue
    assert table.loc[("micro", "mr", "A", "C"), "pvalue_t"] == pytest.approx(want)
    hits_a, hits_c = np.array(ranks["A"]) <= 1, np.array(ranks["C"]) <= 1
    assert np.array_equal(hits_a, hits_c) and table.loc[("micro", "hits@1", "A", "C"), "pvalue"] == 1.0


def brute_components(answers: pd.DataFrame, questions: list[tuple]) -> list[set[tuple]]:
    """Reference: grow each component from a question by following shared triples until nothing new joins."""
    triples_of = {q: set() for q in questions}
    for row in answers.itertuples():
        if (row.side, row.relation, row.anchor) in triples_of:
            triples_of[(row.side, row.relation, row.anchor)].add((row.head, row.relation, row.tail))
    left, out = list(questions), []
    while left:
        component, triples = {left[0]}, set(triples_of[left[0]])
        grown = True
        while grown:
            joining = {q for q in left if q not in component and triples_of[q] & triples}
            component |= joining
            triples |= set().union(*(triples_of[q] for q in joining)) if joining else set()
            grown = bool(joining)
        out.append(component)
        left = [q for q in left if q not in component]
    return out


def test_question_components_equal_brute_force(evaluated) -> None:
    answers, questions = evaluated
    for level in ("sparse", "depth2", "original"):
        a = answers.loc[answers["level"] == level]
        keys = questions.loc[(questions["level"] == level) & (questions["system"] == "sys0"),
                             ["side", "relation", "anchor"]].reset_index(drop=True)
        component = question_components(a, keys)
        got = {}
        for q, c in zip(map(tuple, keys.to_numpy()), component, strict=True):
            got.setdefault(c, set()).add(q)
        assert sorted(got) == list(range(len(got)))  # numbered 0..C-1
        assert pd.Series(component).drop_duplicates().is_monotonic_increasing  # in order of first appearance
        want = brute_components(a, list(map(tuple, keys.to_numpy())))
        assert sorted(map(sorted, got.values())) == sorted(map(sorted, want))
        assert len(want) < len(keys)  # a triple's two questions are linked
    # questions without any answer given stay alone; answers of other questions are ignored
    lone = pd.DataFrame({"side": ["head", "tail", "head"], "relation": "r", "anchor": ["x", "y", "z"]})
    linking = pd.DataFrame({"side": ["head", "tail", "head"], "relation": "r", "anchor": ["x", "y", "w"],
                            "head": ["y", "y", "q"], "tail": ["x", "x", "w"]})
    assert question_components(linking, lone).tolist() == [0, 0, 1]
    assert question_components(linking.iloc[:0], lone).tolist() == [0, 1, 2]


def test_component_sums() -> None:
    values = np.arange(12.0).reshape(6, 2)
    np.testing.assert_array_equal(component_sums(values, np.array([1, 0, 1, 2, 0, 1])),
                                  [[2 + 8, 3 + 9], [0 + 4 + 10, 1 + 5 + 11], [6, 7]])


def test_discriminative_power_flips_components(evaluated) -> None:
    """Brute force: per unit the paired difference, summed over each component of linked questions (an answer's
    component is its question's), then kgeval's sign-flip test on the component sums with the same seed."""
    answers, questions = evaluated
    level, permutations = "depth2", 500
    table = discriminative_power(answers, questions, level, (1, 3), 20, permutations=permutations, seed=3)
    table = table.set_index(["family", "metric", "system_a", "system_b"])
    a = answers.loc[answers["level"] == level]
    q = questions.loc[questions["level"] == level]
    keys = q.loc[q["system"] == "sys0", ["side", "relation", "anchor"]].reset_index(drop=True)
    component_of = dict(zip(map(tuple, keys.to_numpy()), question_components(a, keys), strict=True))
    for family, frame, key, value in (
        ("micro", a, ["side", "relation", "head", "tail"], lambda t: 1.0 / t["rank"]),
        ("macro", q, ["side", "relation", "anchor"], lambda t: 1.0 / t["rank"]),
    ):
        x, y = (frame.loc[frame["system"] == s].sort_values(key) for s in ("sys1", "sys4"))
        sums = {}
        for question, d in zip(map(tuple, x[["side", "relation", "anchor"]].to_numpy()),
                               value(x).to_numpy() - value(y).to_numpy(), strict=True):
            sums[component_of[question]] = sums.get(component_of[question], 0.0) + d
        differences = np.array([sums[c] for c in sorted(sums)])
        assert len(differences) < len(x)
        want = sign_flip_pvalues(differences, permutations, stream_seed(3, level, family, "mrr"))
        assert table.loc[(family, "mrr", "sys1", "sys4"), "pvalue"] == pytest.approx(want)
