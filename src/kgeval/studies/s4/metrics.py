"""Micro (per answer, Eq. 1) and macro (per question, Eq. 2) metrics of S4 for every label level and system.

For a label level with evaluated answers ``E`` and filtered answers ``F`` (:meth:`kgeval.studies.s4.labels.LabelSet.level_masks`):

- **micro** (Eq. 1): every evaluated (triple, side) is one answer, ranked with train+valid and ``F`` filtered
  (only the answer itself stays in); MR, MRR and Hits@k are means over answers. With relation weights
  ``psi_p`` (Table 4), the mean becomes ``sum_p psi_p * mean over the answers of relation p``; the default weights
  (each relation's share of the answers) give the plain mean.
- **macro** (Eq. 2): every question ``q = (side, relation, anchor)`` with at least one evaluated answer is one IR
  query; its relevant documents are its evaluated answers ``A_q``; the ranking removes only train+valid. A question's
  rank is that of its best relevant answer, ``min_a rank(a)`` with the other relevant answers set aside (for
  optimistic ranks: one plus the candidates above the best answer); macro MRR is the mean of its reciprocal, macro
  Hits@k the share of questions with that rank <= k. MAP@c and nDCG@c come from ``ir-measures`` (trec_eval's
  ``map_cut``/``ndcg_cut`` via pytrec_eval) on TREC qrels and a run whose relevant documents sit at their exact
  positions (the non-deterministic ranks, a strict order) with placeholder non-relevant documents elsewhere.

Every rank comes from :class:`kgeval.studies.s4.ranks.AnswerIndex`, i.e. from the one ranks table per system.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import ir_measures
import numpy as np
import pandas as pd

from kgeval.studies.s4.labels import TRIPLE_COLUMNS, LabelSet

from kgeval.studies.s4.ranks import AnswerIndex

__all__ = [
    "MICRO_METRICS",
    "micro_metric_names",
    "macro_metric_names",
    "ir_measures_per_question",
    "evaluate_label_levels",
    "aggregate_metrics",
    "answer_values",
    "question_values",
    "weighted_micro",
]

#: micro metric order of the paper's figures, before the hits@k that the config picks
MICRO_METRICS: tuple[str, ...] = ("mr", "mrr")


def micro_metric_names(hits_at: Sequence[int]) -> list[str]:
    """``mr, mrr, hits@k...``."""
    return list(MICRO_METRICS) + [f"hits@{k}" for k in hits_at]


def macro_metric_names(hits_at: Sequence[int], ir_cutoff: int) -> list[str]:
    """``mrr, hits@k..., map@c, ndcg@c``."""
    return ["mrr"] + [f"hits@{k}" for k in hits_at] + [f"map@{ir_cutoff}", f"ndcg@{ir_cutoff}"]


def ir_measures_per_question(
    question_ids: np.ndarray,
    documents: np.ndarray,
    positions: np.ndarray,
    cutoff: int,
    measures: Sequence[str] = ("map", "ndcg"),
) -> pd.DataFrame:
    """Per-question IR measures from the positions of the relevant documents, via ``ir-measures``.

    :param question_ids: shape: (m,), the question of every relevant document (str or int)
    :param documents: shape: (m,), the relevant documents (answer labels), unique per question
    :param positions: shape: (m,), each document's 1-based position in the question's ranking (a strict order)
    :param cutoff: the measures' cutoff ``c``
    :param measures: ``map`` (AP@c, trec_eval ``map_cut``) and/or ``ndcg`` (nDCG@c, ``ndcg_cut``)
    :return: one row per distinct question id, sorted: ``question`` and ``map@c`` / ``ndcg@c`` (0 for a question
        without relevant document in the top ``c``)
    """
    qid = pd.Series(np.asarray(question_ids)).astype(str).to_numpy()
    doc = pd.Series(np.asarray(documents)).astype(str).to_numpy()
    pos = np.asarray(positions, dtype=np.int64)
    if len(pd.MultiIndex.from_arrays([qid, pd.Series(pos)]).unique()) != len(pos):
        raise ValueError("ir_measures_per_question: two relevant documents share a position; positions must be strict")
    qrels = pd.DataFrame({"query_id": qid, "doc_id": doc, "relevance": 1})
    top = pos <= cutoff
    run_rel = pd.DataFrame({"query_id": qid[top], "doc_id": doc[top], "position": pos[top]})
    # fill every position above a question's deepest relevant document with a placeholder non-relevant document
    deepest = run_rel.groupby("query_id")["position"].max()
    filler_q = np.repeat(deepest.index.to_numpy(), deepest.to_numpy())
    filler_p = np.concatenate([np.arange(1, d + 1) for d in deepest.to_numpy()]) if len(deepest) else np.empty(0, int)
    fillers = pd.DataFrame({"query_id": filler_q, "position": filler_p})
    fillers = fillers.merge(run_rel[["query_id", "position"]], how="left", indicator=True)
    fillers = fillers.loc[fillers["_merge"] == "left_only", ["query_id", "position"]]
    fillers["doc_id"] = "\x1fnonrelevant\x1f" + fillers["position"].astype(str)
    run = pd.concat([run_rel, fillers], ignore_index=True)
    run["score"] = -run["position"].astype(float)
    names = {"map": ir_measures.AP @ cutoff, "ndcg": ir_measures.nDCG @ cutoff}
    unknown = set(measures) - set(names)
    if unknown:
        raise ValueError(f"ir_measures_per_question: unknown measure(s) {sorted(unknown)}; use map, ndcg")
    chosen = {names[m]: f"{m}@{cutoff}" for m in measures}
    questions = np.unique(qid)
    out = pd.DataFrame(0.0, index=pd.Index(questions, name="question"), columns=list(chosen.values()))
    if len(run):
        calc = ir_measures.iter_calc(list(chosen), qrels, run[["query_id", "doc_id", "score"]])
        found = pd.DataFrame([(m.query_id, chosen[m.measure], m.value) for m in calc], columns=["q", "m", "v"])
        if len(found):
            out.update(found.pivot(index="q", columns="m", values="v"))
    return out.reset_index()


def _universe_positions(index: AnswerIndex, universe: pd.DataFrame, system: str) -> np.ndarray:
    """Each of ``index``'s answers' row in the label set's universe; raises unless they are the same triples."""
    position = index.triple_positions(universe)
    if (position < 0).any():
        row = index.answers.loc[position < 0].iloc[0]
        raise ValueError(
            f"ranks of {system!r}: the triple ({row['head']}, {row['relation']}, {row['tail']}) is not in the label "
            f"set's universe ({int((position < 0).sum())} rows); rank exactly the label set's triples"
        )
    covered = np.zeros(len(universe), dtype=bool)
    covered[position] = True
    if not covered.all():
        row = universe.loc[~covered].iloc[0]
        raise ValueError(
            f"ranks of {system!r}: {int((~covered).sum())} label-set triple(s) have no rank, e.g. "
            f"({row['head']}, {row['relation']}, {row['tail']})"
        )
    return position


def _level_frames(
    index: AnswerIndex,
    system: str,
    level: str,
    masks: tuple[np.ndarray, np.ndarray],
    ir_positions: np.ndarray,
    rank_type: str,
) -> tuple[pd.DataFrame, pd.DataFrame, tuple[pd.Series, np.ndarray, np.ndarray]]:
    """One system's answers and questions at one level, and the inputs of their IR measures.

    :param masks: the level's ``evaluated`` and ``filtered`` masks over ``index``'s answers
    :return: the answer rows, the question rows (with a combined ``query_id``), and ``(query id, answer, IR position)``
        per evaluated answer
    """
    evaluated, filtered = masks
    micro = index.ranks(~filtered, rank_type)
    macro = index.ranks(~evaluated, rank_type)
    rows = np.flatnonzero(evaluated)
    base = index.answers.iloc[rows]
    answers = pd.DataFrame(
        {
            "level": level,
            "system": system,
            "side": base["side"].to_numpy(),
            "relation": base["relation"].to_numpy(),
            "head": base["head"].to_numpy(),
            "tail": base["tail"].to_numpy(),
            "anchor": base["anchor"].to_numpy(),
            "rank": micro[rows],
            "macro_rank": macro[rows],
            "ir_position": ir_positions[rows],
        }
    )
    question = index.question[rows]
    per_q = pd.DataFrame({"question": question, "rank": macro[rows]}).groupby("question")["rank"].agg(["min", "size"])
    keys = index.questions.iloc[per_q.index.to_numpy()]
    # IR inputs of all systems and levels go to ir-measures in one call, with a combined query id
    prefix = f"{system}\x1f{level}\x1f"
    ir_input = (prefix + pd.Series(question).astype(str), base["answer"].to_numpy(), ir_positions[rows])
    questions = pd.DataFrame(
        {
            "query_id": prefix + per_q.index.astype(str),
            "level": level,
            "system": system,
            "side": keys["side"].to_numpy(),
            "relation": keys["relation"].to_numpy(),
            "anchor": keys["anchor"].to_numpy(),
            "num_relevant": per_q["size"].to_numpy(dtype=np.int64),
            "rank": per_q["min"].to_numpy(dtype=np.float64),
        }
    )
    return answers, questions, ir_input


def evaluate_label_levels(
    label_set: LabelSet,
    ranks: Mapping[str, pd.DataFrame],
    *,
    levels: Sequence[str] | None = None,
    rank_type: str = "realistic",
    ir_cutoff: int = 20,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-answer and per-question ranks of every system at every label level.

    :param label_set: the label levels; its universe must be exactly the triples of every ranks table
    :param ranks: per system, its ranks table over the universe (filtered by train+valid+universe)
    :param levels: levels to evaluate (default: all of the label set's)
    :param rank_type: rank type for micro ranks and macro question ranks
    :param ir_cutoff: cutoff of MAP and nDCG
    :return: ``answers``: one row per (level, system, evaluated triple, side): ``level, system, side, relation, head,
        tail, anchor, rank`` (micro), ``macro_rank`` (the answer's rank with the level's other answers set aside: the
        question's rank is the minimum) and ``ir_position`` (its position in the question's IR run, a strict order of
        every candidate but train+valid); ``questions``: one row per (level, system, question): ``level, system, side, relation,
        anchor, num_relevant, rank, map@c, ndcg@c``; both sorted
    :raises ValueError: when a ranks table's triples differ from the label set's universe
    """
    levels = list(levels) if levels is not None else label_set.levels()
    universe = label_set.triples[TRIPLE_COLUMNS]
    masks = {level: label_set.level_masks(level) for level in levels}
    answer_frames, question_frames, ir_inputs = [], [], []
    for system in sorted(ranks):
        index = AnswerIndex(ranks[system], name=f"ranks of {system!r}")
        position = _universe_positions(index, universe, system)
        all_unfiltered = np.ones(len(index), dtype=bool)
        ir_positions = index.ranks(all_unfiltered, "nondeterministic").astype(np.int64)
        for level in levels:
            evaluated_t, filtered_t = masks[level]
            answers, questions, ir_input = _level_frames(
                index, system, level, (evaluated_t[position], filtered_t[position]), ir_positions, rank_type
            )
            answer_frames.append(answers)
            question_frames.append(questions)
            ir_inputs.append(ir_input)
    ir = ir_measures_per_question(
        np.concatenate([q.to_numpy(dtype=object) for q, _, _ in ir_inputs]),
        np.concatenate([d for _, d, _ in ir_inputs]),
        np.concatenate([p for _, _, p in ir_inputs]),
        ir_cutoff,
    ).rename(columns={"question": "query_id"})
    answers = pd.concat(answer_frames, ignore_index=True)
    answers = answers.sort_values(["level", "system", "side", "relation", "head", "tail"], kind="stable")
    questions = pd.concat(question_frames, ignore_index=True).merge(ir, on="query_id", how="left", validate="1:1")
    questions = questions.drop(columns="query_id")
    if questions[[f"map@{ir_cutoff}", f"ndcg@{ir_cutoff}"]].isna().any().any():
        raise RuntimeError("evaluate_label_levels: a question lost its IR measures")
    questions = questions.sort_values(["level", "system", "side", "relation", "anchor"], kind="stable")
    return answers.reset_index(drop=True), questions.reset_index(drop=True)


def answer_values(ranks: np.ndarray | pd.Series, hits_at: Sequence[int]) -> pd.DataFrame:
    """Per-answer micro values ``f`` of Eq. 1: ``mr`` (the rank), ``mrr`` (1/rank), ``hits@k`` (rank <= k).

    :param ranks: shape: (n,)
    :return: shape: (n, 2 + len(hits_at))
    """
    r = np.asarray(ranks, dtype=np.float64)
    out = {"mr": r, "mrr": 1.0 / r}
    for k in hits_at:
        out[f"hits@{k}"] = (r <= k).astype(np.float64)
    return pd.DataFrame(out)


def question_values(questions: pd.DataFrame, hits_at: Sequence[int], ir_cutoff: int) -> pd.DataFrame:
    """Per-question macro values ``f(q)`` of Eq. 2 (and the IR measures), shape: (Q, 1 + len(hits_at) + 2)."""
    r = questions["rank"].to_numpy(dtype=np.float64)
    out = {"mrr": 1.0 / r}
    for k in hits_at:
        out[f"hits@{k}"] = (r <= k).astype(np.float64)
    for column in (f"map@{ir_cutoff}", f"ndcg@{ir_cutoff}"):
        out[column] = questions[column].to_numpy(dtype=np.float64)
    return pd.DataFrame(out)


def weighted_micro(answers: pd.DataFrame, hits_at: Sequence[int], weights: pd.Series | None = None) -> pd.Series:
    """Eq. 1 for one (level, system): ``sum_p psi_p * mean of f over the answers of relation p``.

    :param answers: the answers of one level and system (``relation, rank``)
    :param weights: ``psi`` per relation (normalised here over the relations present); None: each relation's share
        of the answers, which makes this the plain mean over answers
    :return: value per micro metric
    """
    values = answer_values(answers["rank"], hits_at)
    values["relation"] = answers["relation"].to_numpy()
    per_relation = values.groupby("relation").mean()
    if weights is None:
        weights = answers.groupby("relation").size().astype(float)
    psi = weights.reindex(per_relation.index).fillna(0.0)
    if psi.sum() <= 0:
        raise ValueError("weighted_micro: the weights give no mass to any relation of these answers")
    psi = psi / psi.sum()
    return per_relation.mul(psi, axis=0).sum()


def aggregate_metrics(
    answers: pd.DataFrame, questions: pd.DataFrame, hits_at: Sequence[int], ir_cutoff: int
) -> pd.DataFrame:
    """Micro and macro metrics per level and system.

    :return: long table ``level, system, family, metric, value`` (family ``micro``/``macro``), sorted
    """
    rows = []
    for (level, system), group in answers.groupby(["level", "system"], sort=True):
        for metric, value in answer_values(group["rank"], hits_at).mean().items():
            rows.append((level, system, "micro", metric, float(value)))
    for (level, system), group in questions.groupby(["level", "system"], sort=True):
        for metric, value in question_values(group, hits_at, ir_cutoff).mean().items():
            rows.append((level, system, "macro", metric, float(value)))
    out = pd.DataFrame(rows, columns=["level", "system", "family", "metric", "value"])
    return out.sort_values(["level", "system", "family", "metric"], kind="stable").reset_index(drop=True)
