"""S4: micro metrics (Eq. 1) and macro metrics (Eq. 2) on hand-made cases and against ir-measures."""

from __future__ import annotations

import math

import ir_measures
import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s4.labels import LabelSet
from kgeval.studies.s4.metrics import (
    aggregate_metrics,
    answer_values,
    evaluate_label_levels,
    ir_measures_per_question,
    weighted_micro,
)

from test_s4_ranks import World, brute_rank


def test_eq1_micro_metrics_by_hand() -> None:
    values = answer_values(np.array([1, 2, 4, 10, 20]), hits_at=(1, 3, 10)).mean()
    assert values["mr"] == pytest.approx(37 / 5)
    assert values["mrr"] == pytest.approx((1 + 0.5 + 0.25 + 0.1 + 0.05) / 5)
    assert values["hits@1"] == pytest.approx(0.2)
    assert values["hits@3"] == pytest.approx(0.4)
    assert values["hits@10"] == pytest.approx(0.8)


def test_eq1_relation_weights() -> None:
    answers = pd.DataFrame({"relation": ["a", "a", "b", "b", "b"], "rank": [1.0, 2.0, 4.0, 10.0, 20.0]})
    plain = weighted_micro(answers, (1,))  # psi = each relation's share: the plain mean
    assert plain["mrr"] == pytest.approx((1 + 0.5 + 0.25 + 0.1 + 0.05) / 5)
    equal = weighted_micro(answers, (1,), pd.Series({"a": 1.0, "b": 1.0}))
    assert equal["mrr"] == pytest.approx(0.5 * 0.75 + 0.5 * (0.25 + 0.1 + 0.05) / 3)
    assert equal["mr"] == pytest.approx(0.5 * 1.5 + 0.5 * 34 / 3)
    only_b = weighted_micro(answers, (1,), pd.Series({"b": 3.0, "c": 5.0}))  # c absent: renormalised over b
    assert only_b["hits@1"] == 0.0
    with pytest.raises(ValueError, match="no mass"):
        weighted_micro(answers, (1,), pd.Series({"c": 1.0}))


def hand_made() -> tuple[LabelSet, pd.DataFrame]:
    """One tail question (a, r, ?) with scores e0=5, e1=4, e2=3, e3=2, e4=1, e5=0; answers e1 (pooled at depth 1) and
    e4 (sparse label). Head questions (?, r, e1) and (?, r, e4) have the single answer a at ranks 1 and 3."""
    triples = pd.DataFrame(
        {
            "head": ["a", "a"],
            "relation": ["r", "r"],
            "tail": ["e1", "e4"],
            "depth": [1.0, 0.0],
            "original": [True, True],
            "known": [False, False],
        }
    )
    labels = LabelSet(
        triples=triples, judgments=triples.iloc[:0][["head", "relation", "tail"]].assign(label="", depth=0), max_depth=1
    )
    # ranks filtered by train+valid+universe: e1 is 2nd (e0 above), e4 is 4th (e0, e2, e3 above; e1 filtered)
    ranks = pd.DataFrame(
        {
            "head": ["a", "a", "a", "a"],
            "relation": ["r"] * 4,
            "tail": ["e1", "e4", "e1", "e4"],
            "side": ["tail", "tail", "head", "head"],
            "rank_optimistic": [2, 4, 1, 3],
            "rank_realistic": [2.0, 4.0, 1.0, 3.0],
            "rank_pessimistic": [2, 4, 1, 3],
            "rank_nondeterministic": [2, 4, 1, 3],
            "num_candidates": [5, 5, 6, 6],
            "score": [4.0, 1.0, 7.0, 7.0],
        }
    )
    return labels, ranks


def test_eq2_macro_and_micro_by_hand() -> None:
    labels, ranks = hand_made()
    answers, questions = evaluate_label_levels(labels, {"m": ranks}, ir_cutoff=20)
    metrics = aggregate_metrics(answers, questions, hits_at=(1, 3), ir_cutoff=20).set_index(
        ["level", "family", "metric"]
    )

    # sparse: only (a, r, e4) is labelled; e1 is unlabelled, so it is not filtered and beats e4: tail rank 4 + 1
    sparse = answers.loc[answers["level"] == "sparse"].set_index("side")["rank"]
    assert sparse.to_dict() == {"head": 3.0, "tail": 5.0}
    assert metrics.loc[("sparse", "micro", "mrr"), "value"] == pytest.approx((1 / 3 + 1 / 5) / 2)
    assert metrics.loc[("sparse", "micro", "mr"), "value"] == pytest.approx(4.0)
    # macro sparse: questions (a, r, ?) first relevant at 5, (?, r, e4) at 3
    assert metrics.loc[("sparse", "macro", "mrr"), "value"] == pytest.approx((1 / 5 + 1 / 3) / 2)
    assert metrics.loc[("sparse", "macro", "hits@3"), "value"] == pytest.approx(0.5)
    assert metrics.loc[("sparse", "macro", "map@20"), "value"] == pytest.approx((1 / 5 + 1 / 3) / 2)

    # depth 1: both labelled; micro filters the other answer: tail ranks 2 and 4, head ranks 1 and 3
    assert metrics.loc[("depth1", "micro", "mrr"), "value"] == pytest.approx((1 / 2 + 1 / 4 + 1 + 1 / 3) / 4)
    assert metrics.loc[("depth1", "micro", "hits@1"), "value"] == pytest.approx(1 / 4)
    # macro: tail question's relevant answers at positions 2 and 5 -> RR 1/2, AP (1/2 + 2/5) / 2
    assert metrics.loc[("depth1", "macro", "mrr"), "value"] == pytest.approx((1 / 2 + 1 + 1 / 3) / 3)
    assert metrics.loc[("depth1", "macro", "hits@1"), "value"] == pytest.approx(1 / 3)
    assert metrics.loc[("depth1", "macro", "map@20"), "value"] == pytest.approx(((1 / 2 + 2 / 5) / 2 + 1 + 1 / 3) / 3)
    ndcg_tail = (1 / math.log2(3) + 1 / math.log2(6)) / (1 + 1 / math.log2(3))
    ndcg_head3 = 1 / math.log2(4)
    assert metrics.loc[("depth1", "macro", "ndcg@20"), "value"] == pytest.approx((ndcg_tail + 1 + ndcg_head3) / 3)
    # original = every original test triple = depth1 here
    assert metrics.loc["original", "value"].to_numpy() == pytest.approx(metrics.loc["depth1", "value"].to_numpy())


def test_ir_measures_cutoff_and_fillers() -> None:
    out = ir_measures_per_question(["q1", "q1", "q2", "q3"], ["x", "y", "x", "z"], [1, 25, 3, 30], cutoff=20).set_index(
        "question"
    )
    assert out.loc["q1", "map@20"] == pytest.approx(0.5)  # R = 2, only the first in the top 20
    assert out.loc["q2", "map@20"] == pytest.approx(1 / 3)
    assert out.loc["q3", "map@20"] == 0.0 and out.loc["q3", "ndcg@20"] == 0.0
    with pytest.raises(ValueError, match="share a position"):
        ir_measures_per_question(["q"] * 2, ["x", "y"], [2, 2], cutoff=20)


def world_labels(world: World, seed: int) -> LabelSet:
    rng = np.random.default_rng(seed)
    triples = pd.DataFrame(
        [(world.entities[h], f"r{r}", world.entities[t]) for h, r, t in world.universe],
        columns=["head", "relation", "tail"],
    )
    depth = rng.choice([0.0, 1.0, 2.0, np.nan], size=len(triples), p=[0.4, 0.2, 0.2, 0.2])
    triples = triples.assign(depth=depth, original=True, known=rng.random(len(triples)) < 0.1)
    triples = triples.sort_values(["head", "relation", "tail"]).reset_index(drop=True)
    empty = triples.iloc[:0][["head", "relation", "tail"]].assign(label="", depth=0)
    return LabelSet(triples=triples, judgments=empty, max_depth=2)


@pytest.mark.parametrize("seed", [0, 1])
def test_macro_metrics_equal_ir_measures_on_full_runs(seed: int) -> None:
    """Macro RR / Success@k / AP@20 / nDCG@20 against ir-measures on complete TREC runs built from the raw scores."""
    world = World(seed, num_entities=20, num_true=220)
    labels = world_labels(world, seed)
    ranks = world.ranks(set(world.universe))
    entity_id = {e: i for i, e in enumerate(world.entities)}
    for rank_type in ("nondeterministic", "optimistic", "pessimistic"):
        answers, questions = evaluate_label_levels(labels, {"m": ranks}, rank_type=rank_type, ir_cutoff=20)
        for level in labels.levels():
            evaluated, _ = labels.level_masks(level)
            relevant = labels.triples.loc[evaluated]
            qrels, run, expected_rank = [], [], {}
            for (side, relation, anchor), group in pd.concat(
                [
                    relevant.assign(side="head", anchor=relevant["tail"], answer=relevant["head"]),
                    relevant.assign(side="tail", anchor=relevant["head"], answer=relevant["tail"]),
                ]
            ).groupby(["side", "relation", "anchor"]):
                qid = f"{side}|{relation}|{anchor}"
                scores = world.scores[(side, int(relation[1:]), entity_id[anchor])]
                train = world.answers_of(side, int(relation[1:]), entity_id[anchor], world.train)
                rel_ids = {entity_id[a] for a in group["answer"]}
                candidates = [j for j in range(len(scores)) if j not in train or j in rel_ids]
                order = sorted(candidates, key=lambda j: (-scores[j], j))
                for a in rel_ids:
                    qrels.append(ir_measures.Qrel(qid, world.entities[a], 1))
                for position, j in enumerate(order, start=1):
                    run.append(ir_measures.ScoredDoc(qid, world.entities[j], float(-position)))
                # brute force: best relevant answer with the other relevant answers set aside
                best = min(
                    brute_rank(scores, a, (set(range(len(scores))) - set(candidates)) | (rel_ids - {a}))[rank_type]
                    for a in rel_ids
                )
                expected_rank[qid] = best
            got = questions.loc[questions["level"] == level]
            got_ids = got["side"] + "|" + got["relation"] + "|" + got["anchor"]
            got_rank = dict(zip(got_ids, got["rank"], strict=True))
            assert got_rank == pytest.approx(expected_rank), (level, rank_type)
            if rank_type != "nondeterministic":
                continue
            measures = [
                ir_measures.RR,
                ir_measures.Success @ 1,
                ir_measures.Success @ 3,
                ir_measures.AP @ 20,
                ir_measures.nDCG @ 20,
            ]
            lib = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, qrels, run)}
            for qid, r, ap, ndcg in zip(got_ids, got["rank"], got["map@20"], got["ndcg@20"], strict=True):
                assert 1 / r == pytest.approx(lib[(qid, "RR")])
                assert float(r <= 1) == lib[(qid, "Success@1")]
                assert float(r <= 3) == lib[(qid, "Success@3")]
                assert ap == pytest.approx(lib[(qid, "AP@20")])
                assert ndcg == pytest.approx(lib[(qid, "nDCG@20")])


def test_micro_ranks_equal_brute_force_per_level() -> None:
    world = World(4, num_entities=20, num_true=200)
    labels = world_labels(world, 4)
    ranks = world.ranks(set(world.universe))
    answers, _ = evaluate_label_levels(labels, {"m": ranks}, rank_type="realistic")
    for level in labels.levels():
        evaluated, filtered = labels.level_masks(level)
        keep = {
            (world.entities.index(h), int(r[1:]), world.entities.index(t))
            for h, r, t in labels.triples.loc[filtered, ["head", "relation", "tail"]].itertuples(index=False)
        }
        expected = world.ranks(keep).set_index(["head", "relation", "tail", "side"])["rank_realistic"]
        got = answers.loc[answers["level"] == level].set_index(["head", "relation", "tail", "side"])["rank"]
        assert len(got) == 2 * int(evaluated.sum())
        np.testing.assert_array_equal(got.to_numpy(), expected.loc[got.index].to_numpy())


def test_universe_mismatch_is_an_error() -> None:
    labels, ranks = hand_made()
    with pytest.raises(ValueError, match="not in the label set's universe"):
        evaluate_label_levels(labels, {"m": pd.concat([ranks, ranks.iloc[:1].assign(tail="zz")])})
    with pytest.raises(ValueError, match="have no rank"):
        evaluate_label_levels(labels, {"m": ranks.iloc[[0, 2]]})
