"""S4 analyses: Kendall tau pipeline with known answers, categories, re-weighting, stability, discriminative power."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from kgeval.studies.s4.analysis import kendall_tau, kendall_tau_batch, tau_by_category, tau_by_depth, tau_reweighted
from kgeval.studies.s4.metrics import aggregate_metrics, evaluate_label_levels, ir_measures_per_question
from kgeval.studies.s4.stability import (
    discriminative_power,
    stability_table,
    subset_taus,
    subset_values,
    triple_subset_taus,
    triple_subset_values,
    triple_units,
    unit_values,
)

from test_s4_metrics import world_labels
from test_s4_ranks import World


def brute_tau(x, y) -> float:
    """Kendall's tau-a by counting pairs (equals tau-b without ties)."""
    pairs = list(itertools.combinations(range(len(x)), 2))
    s = sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i, j in pairs)
    return s / len(pairs)


def test_kendall_tau_known_answers() -> None:
    assert kendall_tau([4, 3, 2, 1], [4, 3, 2, 1])[0] == pytest.approx(1.0)
    assert kendall_tau([4, 3, 2, 1], [1, 2, 3, 4])[0] == pytest.approx(-1.0)
    assert kendall_tau([4, 3, 2, 1], [4, 2, 3, 1])[0] == pytest.approx(4 / 6)  # one discordant pair of six
    rng = np.random.default_rng(0)
    for _ in range(20):
        x, y = rng.random(13), rng.random(13)
        assert kendall_tau(x, y)[0] == pytest.approx(brute_tau(x, y))
    # 13 systems, 78 pairs: 30 concordant and 48 discordant give (30 - 48) / 78, the paper's -0.2308 in Fig. 3
    assert (30 - 48) / 78 == pytest.approx(-0.2308, abs=1e-4)
    assert np.isnan(kendall_tau([1, 1, 1], [1, 2, 3])[0])


def test_kendall_tau_counts_only_the_systems_it_ranks() -> None:
    """A system without a value at one level is left out of the tau, and the count says so."""
    result = kendall_tau([4, 3, np.nan, 1], [4, 3, 2, 1])
    assert result.tau == pytest.approx(1.0) and result.num_systems == 3
    assert kendall_tau([1, np.nan], [1, 2]).num_systems == 1
    systems = ["A", "B", "C", "D"]
    rows = [("sparse", s, "micro", "mrr", v) for s, v in zip(systems, [0.4, 0.3, 0.2, 0.1])]
    rows += [("depth1", s, "micro", "mrr", v) for s, v in zip(systems[:3], [0.4, 0.3, 0.2])]  # D has no value
    out = tau_by_depth(pd.DataFrame(rows, columns=["level", "system", "family", "metric", "value"]))
    out = out.set_index("level")["num_systems"]
    assert out["sparse"] == 4 and out["depth1"] == 3


def test_tau_by_depth_known_answer() -> None:
    systems = ["A", "B", "C", "D"]
    values = {
        "sparse": [0.4, 0.3, 0.2, 0.1],
        "depth1": [0.4, 0.2, 0.3, 0.1],  # one swap: tau 2/3
        "depth2": [0.1, 0.2, 0.3, 0.4],  # reversed: tau -1
        "original": [0.5, 0.4, 0.3, 0.2],
    }
    rows = [(level, s, "micro", "mrr", v) for level, vs in values.items() for s, v in zip(systems, vs)]
    # MR: lower is better; the same orders expressed as ranks keep the same tau
    rows += [(level, s, "micro", "mr", 1 / v) for level, vs in values.items() for s, v in zip(systems, vs)]
    metrics = pd.DataFrame(rows, columns=["level", "system", "family", "metric", "value"])
    out = tau_by_depth(metrics).set_index(["metric", "level"])["tau"]
    for metric in ("mrr", "mr"):
        assert out[(metric, "sparse")] == pytest.approx(1.0)
        assert out[(metric, "depth1")] == pytest.approx(2 / 3)
        assert out[(metric, "depth2")] == pytest.approx(-1.0)
        assert out[(metric, "original")] == pytest.approx(1.0)


def answers_for(systems_ranks: dict[str, dict[str, list[float]]]) -> pd.DataFrame:
    """An answers table: per system and level a list of ranks over fixed answers (relation r<i % 2>, side alternating)."""
    rows = []
    for system, levels in systems_ranks.items():
        for level, ranks in levels.items():
            for i, rank in enumerate(ranks):
                side = "head" if i % 2 == 0 else "tail"
                rows.append(
                    (level, system, side, f"r{i % 3}", f"h{i}", f"t{i}", f"t{i}" if side == "head" else f"h{i}", rank)
                )
    return pd.DataFrame(rows, columns=["level", "system", "side", "relation", "head", "tail", "anchor", "rank"])


def test_tau_by_category_known_answer() -> None:
    # answers i = 0..5: relation r0, r1, r2, r0, r1, r2; sides head, tail, head, tail, head, tail
    # categories: r0 -> 1-1, r1 -> N-N, r2 -> 1-N; so (head, 1-1) = answer 0, (tail, 1-1) = answer 3, ...
    ranks = {
        "A": {"sparse": [1, 1, 1, 1, 1, 1], "depth2": [1, 5, 1, 1, 1, 1]},
        "B": {"sparse": [2, 2, 2, 2, 2, 2], "depth2": [2, 2, 2, 2, 2, 2]},
        "C": {"sparse": [3, 3, 3, 3, 3, 3], "depth2": [3, 1, 3, 3, 3, 3]},
    }
    answers = answers_for(ranks)
    out = tau_by_category(answers, {"r0": "1-1", "r1": "N-N", "r2": "1-N"}, level="depth2", hits_at=(1,))
    out = out.set_index(["side", "category", "metric"])["tau"]
    assert out[("head", "1-1", "mrr")] == pytest.approx(1.0)
    # (tail, N-N) holds answer 1: sparse order A > B > C, pooled C > B > A: reversed
    assert out[("tail", "N-N", "mrr")] == pytest.approx(-1.0)
    assert np.isnan(out[("head", "N-1", "mrr")])  # no answer in that cell


def test_tau_reweighted_by_hand() -> None:
    # sparse: one answer per relation r0, r1 (weights 1:1); pooled adds two more r0 answers
    answers = pd.DataFrame(
        [
            ("sparse", "A", "head", "r0", "a", "b", "b", 1.0),
            ("sparse", "A", "head", "r1", "c", "d", "d", 4.0),
            ("sparse", "B", "head", "r0", "a", "b", "b", 2.0),
            ("sparse", "B", "head", "r1", "c", "d", "d", 1.0),
            ("deep", "A", "head", "r0", "a", "b", "b", 1.0),
            ("deep", "A", "head", "r1", "c", "d", "d", 4.0),
            ("deep", "A", "head", "r0", "e", "b", "b", 1.0),
            ("deep", "A", "head", "r0", "f", "b", "b", 1.0),
            ("deep", "B", "head", "r0", "a", "b", "b", 2.0),
            ("deep", "B", "head", "r1", "c", "d", "d", 1.0),
            ("deep", "B", "head", "r0", "e", "b", "b", 2.0),
            ("deep", "B", "head", "r0", "f", "b", "b", 2.0),
        ],
        columns=["level", "system", "side", "relation", "head", "tail", "anchor", "rank"],
    )
    answers["level"] = answers["level"].replace("deep", "depth3")
    out = tau_reweighted(answers, level="depth3", hits_at=(1,)).set_index(["distribution", "metric"])["tau"]
    # MRR sparse: A = (1 + 1/4)/2 = .625, B = (1/2 + 1)/2 = .75 -> B ahead
    # complete weights (3:1): A = .75*1 + .25*.25 = .8125, B = .75*.5 + .25*1 = .625 -> A ahead: tau -1
    # sparse weights (1:1): A = .625, B = .75 -> same as sparse: tau 1
    assert out[("complete", "mrr")] == pytest.approx(-1.0)
    assert out[("sparse", "mrr")] == pytest.approx(1.0)


@pytest.fixture(scope="module")
def evaluated():
    world = World(11, num_entities=20, num_true=220)
    labels = world_labels(world, 11)
    ranks = {}
    for s in range(5):
        w = World(11, num_entities=20, num_true=220)
        noise = World(100 + s, num_entities=20, num_true=220).scores
        w.scores = {k: v + 0.3 * s * noise[k] for k, v in w.scores.items()}
        ranks[f"sys{s}"] = w.ranks(set(w.universe))
    answers, questions = evaluate_label_levels(labels, ranks, ir_cutoff=20)
    return answers, questions


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
        # a random question subset: the fast product equals the metrics recomputed on the subset's tables
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


def test_batched_tau_equals_scipy() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, size=(7, 9, 5)).astype(float)  # many ties
    y = rng.integers(0, 4, size=(9, 5)).astype(float)
    y[:, 4] = 1.0  # a constant reference: undefined
    got = kendall_tau_batch(x, y)
    for i in range(7):
        for m in range(5):
            want = kendall_tau(x[i, :, m], y[:, m])[0]
            assert (np.isnan(want) and np.isnan(got[i, m])) or got[i, m] == pytest.approx(want)


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
    assert row["pvalue"] == pytest.approx(stats.ttest_rel(x, y).pvalue)
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
    assert (both["pvalue"] == 1.0).all()
