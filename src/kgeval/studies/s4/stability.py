"""Stability to the test data (Fig. 7) and discriminative power (Fig. 8) of micro and macro metrics.

**Data sensitivity, the paper's way: discard test triples** (:func:`triple_units`, :func:`triple_subset_taus`).
A subset keeps a random share of the level's evaluated triples; ranks are not recomputed (the runs stay as they are),
only the labels shrink, as when trec_eval scores the same run against fewer qrels:

- micro metrics: the mean over the answers (both sides) of the kept triples;
- macro metrics: every question with at least one kept answer; its rank is the best kept answer's (the minimum of
  the answers' macro ranks), its AP@c and nDCG@c are recomputed from the kept answers' positions in the question's
  IR run (a discarded answer stays in the run as an unjudged, i.e. non-relevant, document).

**Data sensitivity, an extension: discard questions** (:func:`unit_values`, :func:`subset_taus`). The unit of
sampling is the *question* (an IR topic, the IR convention of topic subsampling): a subset keeps a random share of
the questions of a level, and every metric is recomputed on it from per-question values that are fixed once:

- macro metrics: the question's own value ``f(q)`` (reciprocal rank, hit, AP@c, nDCG@c); the subset's value is their
  mean;
- micro metrics: the question's *sum* of per-answer values and its number of answers; the subset's value is the
  sum of sums over the sum of counts, i.e. the mean over the answers of the kept questions.

So no rank and no IR measure is recomputed: each repeat draws one permutation of the questions, and the prefix sums
of the permuted per-question sums give every subset size of that repeat at once. In both variants Kendall's tau of all
subsets against the full set is computed in one vectorised step (equal to SciPy's tau-b, see
:func:`kendall_tau_batch`); :func:`stability_table` labels each row with its ``unit`` (``triples``: the paper's,
``questions``: the extension).

**Discriminative power.** For every pair of systems and metric, a paired two-tailed test over the units of the
metric (answers for micro, questions for macro). The method (column ``pvalue``, named in ``test``) is the paired
randomization (sign-flip) test that kgeval uses for every model comparison
(:func:`kgeval.uncertainty.comparisons.sign_flip_pvalues`; all pairs of one metric share the sign vectors), one
sign per *component*: a test triple answers a head and a tail question, so questions linked by shared triples
(:func:`question_components`) and their answers are not independent draws, and each component's summed difference
is flipped as a whole. The paper's paired Student t-test (SciPy's ``ttest_rel``) over the units stays beside it
(``statistic``, ``pvalue_t``). Pairs whose per-unit values are all equal get p = 1 in both (no difference at all),
which SciPy leaves undefined.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kgeval.studies.s4.analysis import kendall_tau_batch
from kgeval.studies.s4.metrics import answer_values, macro_metric_names, micro_metric_names, question_values
from kgeval.uncertainty.comparisons import sign_flip_pvalues
from kgeval.uncertainty.resampling import stream_seed

__all__ = [
    "UNIT_TRIPLES",
    "UNIT_QUESTIONS",
    "UnitValues",
    "unit_values",
    "subset_taus",
    "TripleUnits",
    "triple_units",
    "triple_subset_values",
    "triple_subset_taus",
    "stability_table",
    "question_components",
    "component_sums",
    "discriminative_power",
]

#: the paper's unit of data sensitivity: test triples are discarded
UNIT_TRIPLES = "triples"
#: kgeval's extension: whole questions (IR topics) are discarded
UNIT_QUESTIONS = "questions"


@dataclass(frozen=True)
class UnitValues:
    """Per-question sums and counts of every metric and system at one level.

    :ivar numerators: shape: (Q, S, M), per question the sum of the per-answer values (micro) or the value (macro)
    :ivar denominators: shape: (Q, M), the number of answers (micro) or 1 (macro)
    :ivar systems: the S system names
    :ivar metrics: the M ``(family, metric)`` pairs
    :ivar questions: shape: (Q, 3), ``side, relation, anchor`` of every question, in row order
    """

    numerators: np.ndarray
    denominators: np.ndarray
    systems: list[str]
    metrics: list[tuple[str, str]]
    questions: pd.DataFrame

    def full(self) -> np.ndarray:
        """Metric values on all questions, shape: (S, M)."""
        return self.numerators.sum(axis=0) / self.denominators.sum(axis=0)[None, :]


def _level_tables(answers: pd.DataFrame, questions: pd.DataFrame, level: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    a = answers.loc[answers["level"] == level]
    q = questions.loc[questions["level"] == level]
    if a.empty or q.empty:
        raise ValueError(f"no answers/questions at level {level!r}")
    return a, q


def unit_values(
    answers: pd.DataFrame, questions: pd.DataFrame, level: str, hits_at: Sequence[int], ir_cutoff: int
) -> UnitValues:
    """Per-question sums/values of every micro and macro metric at one level.

    :param answers: the answers table (``level, system, side, relation, anchor, head, tail, rank``)
    :param questions: the questions table (``level, system, side, relation, anchor, rank, map@c, ndcg@c``)
    :raises ValueError: when systems do not share the same questions and answers
    """
    a, q = _level_tables(answers, questions, level)
    systems = sorted(set(q["system"]))
    key = ["side", "relation", "anchor"]
    question_keys = q.loc[q["system"] == systems[0], key].sort_values(key).reset_index(drop=True)
    question_index = pd.MultiIndex.from_frame(question_keys)
    micro_names = micro_metric_names(hits_at)
    macro_names = macro_metric_names(hits_at, ir_cutoff)
    Q, S = len(question_keys), len(systems)
    numerators = np.zeros((Q, S, len(micro_names) + len(macro_names)))
    counts = None
    for s, system in enumerate(systems):
        sa = a.loc[a["system"] == system]
        sq = q.loc[q["system"] == system]
        qpos = question_index.get_indexer(pd.MultiIndex.from_frame(sq[key]))
        apos = question_index.get_indexer(pd.MultiIndex.from_frame(sa[key]))
        if len(sq) != Q or (qpos < 0).any() or (apos < 0).any():
            raise ValueError(f"level {level!r}: system {system!r} has other questions than {systems[0]!r}")
        values = answer_values(sa["rank"], hits_at).to_numpy()
        for m in range(len(micro_names)):
            numerators[:, s, m] = np.bincount(apos, weights=values[:, m], minlength=Q)
        system_counts = np.bincount(apos, minlength=Q)
        if counts is None:
            counts = system_counts
        elif not np.array_equal(counts, system_counts):
            raise ValueError(f"level {level!r}: system {system!r} has other answers than {systems[0]!r}")
        numerators[qpos, s, len(micro_names) :] = question_values(sq, hits_at, ir_cutoff).to_numpy()
    assert counts is not None
    denominators = np.concatenate(
        [np.repeat(counts[:, None], len(micro_names), axis=1), np.ones((Q, len(macro_names)))], axis=1
    ).astype(np.float64)
    metrics = [("micro", m) for m in micro_names] + [("macro", m) for m in macro_names]
    return UnitValues(
        numerators=numerators, denominators=denominators, systems=systems, metrics=metrics, questions=question_keys
    )


def subset_taus(values: UnitValues, fractions: Sequence[float], repeats: int, seed: int) -> np.ndarray:
    """Kendall's tau between every random question subset's system ranking and the full set's.

    Each repeat draws one random permutation of the Q questions; the subset of size ``k`` is its first ``k``
    questions, so for every size the ``repeats`` subsets are independent uniform draws (sizes of one repeat are
    nested, which lets one pass of prefix sums serve all sizes). tau is computed for all subsets at once
    (:func:`kendall_tau_batch`, equal to SciPy's tau-b).

    :param values: per-question values (:func:`unit_values`)
    :param fractions: subset sizes as shares of the Q questions (each subset has ``max(1, round(f * Q))``)
    :param repeats: subsets per size
    :param seed: seed of ``numpy.random.default_rng``; the draws depend only on it, Q and ``repeats``
    :return: shape: (len(fractions), repeats, M), NaN where tau is undefined (e.g. all systems tie on the subset)
    """
    Q, S, M = values.numerators.shape
    sizes = _subset_sizes(fractions, Q)
    unique_sizes = np.unique(sizes)  # strictly increasing
    where = np.searchsorted(unique_sizes, sizes)
    starts = np.concatenate([[0], unique_sizes[:-1]])
    flat = values.numerators.reshape(Q, S * M)
    full = values.full()
    rng = np.random.default_rng(seed)
    out = np.full((len(fractions), repeats, M), np.nan)
    for r in range(repeats):
        order = rng.permutation(Q)[: unique_sizes[-1]]
        numerators = np.cumsum(np.add.reduceat(flat[order], starts, axis=0), axis=0)  # (K, S*M)
        denominators = np.cumsum(np.add.reduceat(values.denominators[order], starts, axis=0), axis=0)  # (K, M)
        subset = numerators.reshape(len(unique_sizes), S, M) / denominators[:, None, :]
        out[:, r, :] = kendall_tau_batch(subset, full)[where]
    return out


def _subset_sizes(fractions: Sequence[float], n: int) -> np.ndarray:
    for fraction in fractions:
        if not 0.0 < fraction <= 1.0:
            raise ValueError(f"subset fraction must be in (0, 1], got {fraction}")
    return np.array([max(1, round(f * n)) for f in fractions], dtype=np.int64)


@dataclass(frozen=True)
class TripleUnits:
    """Per-answer values of every system at one level, grouped by question, for discarding test triples.

    Answers are in the same order for every system: by question, then by triple.

    :ivar micro: shape: (S, A, M1), the per-answer micro values (``mr, mrr, hits@k``)
    :ivar macro_rank: shape: (S, A), the answers' macro ranks (a question's rank is the minimum over its kept answers)
    :ivar order: shape: (S, A), per system the answers sorted by question, then IR position (a permutation within
        each question's block)
    :ivar position: shape: (S, A), the IR position of the answers in ``order``
    :ivar triple: shape: (A,), the triple number (0..T-1) of every answer
    :ivar question: shape: (A,), the question number (0..Q-1, non-decreasing) of every answer
    :ivar systems: the S system names
    :ivar metrics: the ``(family, metric)`` pairs, micro then macro (as :func:`unit_values`)
    :ivar hits_at: the k of Hits@k
    :ivar ir_cutoff: the cutoff c of AP@c and nDCG@c
    """

    micro: np.ndarray
    macro_rank: np.ndarray
    order: np.ndarray
    position: np.ndarray
    triple: np.ndarray
    question: np.ndarray
    systems: list[str]
    metrics: list[tuple[str, str]]
    hits_at: tuple[int, ...]
    ir_cutoff: int

    @property
    def num_triples(self) -> int:
        """Number of evaluated triples T."""
        return int(self.triple.max()) + 1 if self.triple.size else 0

    @property
    def num_questions(self) -> int:
        """Number of questions Q."""
        return int(self.question.max()) + 1 if self.question.size else 0


def triple_units(
    answers: pd.DataFrame, questions: pd.DataFrame, level: str, hits_at: Sequence[int], ir_cutoff: int
) -> TripleUnits:
    """Per-answer values of every system at one level (:class:`TripleUnits`).

    :param answers: the answers table with ``macro_rank`` and ``ir_position``
        (:func:`kgeval.studies.s4.metrics.evaluate_label_levels`)
    :param questions: the questions table (used to check that the systems share the questions)
    :raises ValueError: when the answers table predates ``macro_rank``/``ir_position`` or the systems' answers differ
    """
    a, q = _level_tables(answers, questions, level)
    missing = {"macro_rank", "ir_position"} - set(a.columns)
    if missing:
        raise ValueError(
            f"the answers table lacks {sorted(missing)}; rebuild it with evaluate_label_levels (rule evaluate_s4_levels)"
        )
    systems = sorted(set(q["system"]))
    key = ["side", "relation", "anchor", "head", "tail"]
    micro_names = micro_metric_names(hits_at)
    macro_names = macro_metric_names(hits_at, ir_cutoff)
    reference = None
    micro, macro_rank, order, position = [], [], [], []
    for system in systems:
        part = a.loc[a["system"] == system].sort_values(key, kind="stable").reset_index(drop=True)
        if reference is None:
            reference = part[key]
        elif not part[key].equals(reference):
            raise ValueError(f"level {level!r}: system {system!r} has other answers than {systems[0]!r}")
        micro.append(answer_values(part["rank"], hits_at).to_numpy())
        macro_rank.append(part["macro_rank"].to_numpy(dtype=np.float64))
        pos = part["ir_position"].to_numpy(dtype=np.int64)
        qcode = pd.MultiIndex.from_frame(part[["side", "relation", "anchor"]]).factorize(sort=True)[0]
        o = np.lexsort((pos, qcode))
        order.append(o)
        position.append(pos[o])
    assert reference is not None
    question = pd.MultiIndex.from_frame(reference[["side", "relation", "anchor"]]).factorize(sort=True)[0]
    triple = pd.MultiIndex.from_frame(reference[["head", "relation", "tail"]]).factorize(sort=True)[0]
    return TripleUnits(
        micro=np.stack(micro),
        macro_rank=np.stack(macro_rank),
        order=np.stack(order),
        position=np.stack(position),
        triple=triple.astype(np.int64),
        question=question.astype(np.int64),
        systems=systems,
        metrics=[("micro", m) for m in micro_names] + [("macro", m) for m in macro_names],
        hits_at=tuple(int(k) for k in hits_at),
        ir_cutoff=int(ir_cutoff),
    )


def triple_subset_values(units: TripleUnits, kept: np.ndarray) -> np.ndarray:
    """Metric values of every system on subsets of the triples.

    :param units: per-answer values (:func:`triple_units`)
    :param kept: shape: (R, T) bool, the triples each subset keeps
    :return: shape: (R, S, M), NaN for a metric of a subset without any answer
    """
    kept = np.asarray(kept, dtype=bool)
    T, Q = units.num_triples, units.num_questions
    if kept.ndim != 2 or kept.shape[1] != T:
        raise ValueError(f"kept must have shape (R, {T}), got {kept.shape}")
    S, A, _ = units.micro.shape
    c = units.ir_cutoff
    starts = np.flatnonzero(np.r_[True, units.question[1:] != units.question[:-1]])
    # ideal DCG@c of a question with m relevant documents: sum over i <= min(m, c) of 1/log2(i + 1)
    ideal = np.r_[0.0, np.cumsum(1.0 / np.log2(np.arange(2, c + 2)))]
    out = np.full((len(kept), S, len(units.metrics)), np.nan)
    for r, keep in enumerate(kept):
        answer_kept = keep[units.triple]  # (A,)
        n_answers = answer_kept.sum()
        if n_answers == 0:
            continue
        micro = (units.micro * answer_kept[None, :, None]).sum(axis=1) / n_answers  # (S, M1)
        per_q = np.bincount(units.question, weights=answer_kept, minlength=Q)  # kept answers per question
        present = per_q > 0
        rank = np.where(answer_kept[None, :], units.macro_rank, np.inf)
        best = np.minimum.reduceat(rank, starts, axis=1)[:, present]  # (S, Q')
        macro = [1.0 / best] + [(best <= k).astype(np.float64) for k in units.hits_at]
        # AP@c and nDCG@c from the kept answers' positions, per system in IR order
        sorted_kept = answer_kept[units.order]  # (S, A)
        cum = np.cumsum(sorted_kept, axis=1)
        before = np.concatenate([np.zeros((S, 1)), cum[:, starts[1:] - 1]], axis=1)  # kept before each question
        j = cum - before[:, units.question]  # 1-based rank among the kept answers of the question
        hit = sorted_kept & (units.position <= c)
        precision = np.where(hit, j / units.position, 0.0)
        gain = np.where(hit, 1.0 / np.log2(units.position + 1.0), 0.0)
        ap = np.add.reduceat(precision, starts, axis=1)[:, present] / per_q[present]
        dcg = np.add.reduceat(gain, starts, axis=1)[:, present]
        ndcg = dcg / ideal[np.minimum(per_q[present], c).astype(np.int64)]
        macro += [ap, ndcg]
        out[r] = np.concatenate([micro, np.stack([m.mean(axis=1) for m in macro], axis=1)], axis=1)
    return out


def triple_subset_taus(units: TripleUnits, fractions: Sequence[float], repeats: int, seed: int) -> np.ndarray:
    """Kendall's tau between the system ranking on random triple subsets and on all triples (the paper's Fig. 7).

    Each repeat draws one random permutation of the T triples; the subset of size ``k`` is its first ``k`` (so for
    every size the ``repeats`` subsets are independent uniform draws).

    :param fractions: subset sizes as shares of the T triples (each subset has ``max(1, round(f * T))``)
    :return: shape: (len(fractions), repeats, M), NaN where tau is undefined
    """
    T = units.num_triples
    sizes = _subset_sizes(fractions, T)
    full = triple_subset_values(units, np.ones((1, T), dtype=bool))[0]
    rng = np.random.default_rng(seed)
    out = np.full((len(fractions), repeats, len(units.metrics)), np.nan)
    for r in range(repeats):
        rank_of = np.empty(T, dtype=np.int64)
        rank_of[rng.permutation(T)] = np.arange(T)
        kept = rank_of[None, :] < sizes[:, None]  # (F, T)
        out[:, r, :] = kendall_tau_batch(triple_subset_values(units, kept), full)
    return out


def stability_table(
    values: UnitValues | TripleUnits, fractions: Sequence[float], repeats: int, seed: int
) -> pd.DataFrame:
    """Mean Kendall's tau per subset size and metric (Fig. 7), discarding triples or questions.

    :param values: :func:`triple_units` (the paper's: discard test triples) or :func:`unit_values` (the extension:
        discard questions)
    :return: ``unit, fraction, num_units, family, metric, tau_mean, tau_std, num_defined`` (``unit``: ``triples`` or
        ``questions``; ``num_units``: the triples or questions a subset keeps), sorted by family, metric, fraction
    """
    if isinstance(values, TripleUnits):
        unit, n = UNIT_TRIPLES, values.num_triples
        taus = triple_subset_taus(values, fractions, repeats, seed)
    else:
        unit, n = UNIT_QUESTIONS, values.numerators.shape[0]
        taus = subset_taus(values, fractions, repeats, seed)
    rows = []
    for f, fraction in enumerate(fractions):
        for m, (family, metric) in enumerate(values.metrics):
            t = taus[f, :, m]
            defined = np.isfinite(t)
            rows.append(
                (
                    unit,
                    float(fraction),
                    max(1, round(fraction * n)),
                    family,
                    metric,
                    float(np.mean(t[defined])) if defined.any() else np.nan,
                    float(np.std(t[defined])) if defined.any() else np.nan,
                    int(defined.sum()),
                )
            )
    columns = ["unit", "fraction", "num_units", "family", "metric", "tau_mean", "tau_std", "num_defined"]
    out = pd.DataFrame(rows, columns=columns)
    return out.sort_values(["family", "metric", "fraction"], kind="stable").reset_index(drop=True)


def _paired_pvalues(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Paired two-tailed t-tests between all column pairs of ``matrix`` (units x systems)."""
    from scipy import stats  # here, not at the top: most S4 jobs never need SciPy

    S = matrix.shape[1]
    first, second = np.triu_indices(S, k=1)
    a, b = matrix[:, first], matrix[:, second]
    with np.errstate(divide="ignore", invalid="ignore"):
        result = stats.ttest_rel(a, b, axis=0)
    statistic = np.asarray(result.statistic, dtype=float)
    pvalue = np.asarray(result.pvalue, dtype=float)
    diff = a - b
    identical = np.all(diff == 0, axis=0)
    pvalue = np.where(identical, 1.0, pvalue)
    statistic = np.where(identical, 0.0, statistic)
    # a constant non-zero difference: t is infinite, the difference certain
    constant = ~identical & np.all(diff == diff[:1], axis=0)
    pvalue = np.where(constant, 0.0, pvalue)
    return first, second, statistic, pvalue


def question_components(answers: pd.DataFrame, questions: pd.DataFrame) -> np.ndarray:
    """Connected components of the questions linked by a shared answer triple.

    A triple ``(h, r, t)`` answers the tail question ``(tail, r, h)`` and the head question ``(head, r, t)``; questions
    that share a triple, directly or through a chain of questions, fall in one component.

    :param answers: rows with ``side, relation, anchor, head, tail`` (repeats are harmless); rows whose question is
        not in ``questions`` are ignored
    :param questions: shape: (Q, >=3), the distinct questions ``side, relation, anchor`` to group, in row order
    :return: shape: (Q,) int64, the component of every question, numbered 0..C-1 in order of first appearance
    """
    from scipy.sparse import coo_matrix  # here, not at the top: most S4 jobs never need SciPy
    from scipy.sparse.csgraph import connected_components

    key, Q = ["side", "relation", "anchor"], len(questions)
    rows = pd.MultiIndex.from_frame(questions[key]).get_indexer(pd.MultiIndex.from_frame(answers[key]))
    triple = pd.MultiIndex.from_frame(answers.loc[rows >= 0, ["head", "relation", "tail"]]).factorize()[0]
    rows = rows[rows >= 0]
    first = np.full(int(triple.max()) + 1 if triple.size else 0, Q, dtype=np.int64)
    np.minimum.at(first, triple, rows)  # every question is linked to the first question of each of its triples
    graph = coo_matrix((np.ones(len(rows)), (rows, first[triple])), shape=(Q, Q))
    return pd.factorize(connected_components(graph, directed=False)[1])[0].astype(np.int64)


def component_sums(values: np.ndarray, component: np.ndarray) -> np.ndarray:
    """Sums of the rows of ``values``, shape: (n, ...), per ``component``, shape: (n,) in 0..C-1; shape: (C, ...)."""
    component = np.asarray(component, dtype=np.int64)
    out = np.zeros((int(component.max()) + 1 if component.size else 0, *np.shape(values)[1:]))
    np.add.at(out, component, values)
    return out


def discriminative_power(
    answers: pd.DataFrame,
    questions: pd.DataFrame,
    level: str,
    hits_at: Sequence[int],
    ir_cutoff: int,
    permutations: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """Paired-test p-values for every system pair and metric at one level (Fig. 8).

    Micro metrics pair the systems' values per answer, macro metrics per question. The sign-flip test flips one
    sign per component of linked questions (:func:`question_components`), the t-test pairs the units themselves.

    :param permutations: sign vectors of the sign-flip test
    :param seed: seed of the sign vectors, combined with the level, family and metric
    :return: ``family, metric, system_a, system_b, statistic, pvalue, test, pvalue_t`` (system_a < system_b;
        ``pvalue``: the sign-flip test named in ``test``; ``statistic``, ``pvalue_t``: the paired t-test), sorted
    """
    a, q = _level_tables(answers, questions, level)
    systems = sorted(set(q["system"]))
    rows = []
    answer_key = ["side", "relation", "head", "tail"]
    question_key = ["side", "relation", "anchor"]
    level_questions = q.loc[q["system"] == systems[0], question_key].drop_duplicates().reset_index(drop=True)
    question_index = pd.MultiIndex.from_frame(level_questions)
    component_of_question = question_components(a, level_questions)
    for family, table, key, names, values_of in (
        ("micro", a, answer_key, micro_metric_names(hits_at), lambda t: answer_values(t["rank"], hits_at)),
        (
            "macro",
            q,
            question_key,
            macro_metric_names(hits_at, ir_cutoff),
            lambda t: question_values(t, hits_at, ir_cutoff),
        ),
    ):
        per_system = []
        reference_keys = None
        for system in systems:
            part = table.loc[table["system"] == system].sort_values(key, kind="stable")
            keys = part[key].reset_index(drop=True)
            if reference_keys is None:
                reference_keys = keys
                unit_question = question_index.get_indexer(pd.MultiIndex.from_frame(part[question_key]))
            elif not keys.equals(reference_keys):
                raise ValueError(f"level {level!r}: system {system!r} has other {family} units than {systems[0]!r}")
            per_system.append(values_of(part).to_numpy())
        cube = np.stack(per_system, axis=2)  # units x metrics x systems
        component = component_of_question[unit_question]
        test = f"sign-flip over components of linked questions ({permutations:,} permutations)"
        for m, metric in enumerate(names):
            first, second, statistic, pvalue = _paired_pvalues(cube[:, m, :])
            differences = component_sums(cube[:, m, first] - cube[:, m, second], component).T  # (pairs, components)
            flips = np.atleast_1d(
                sign_flip_pvalues(differences, permutations, stream_seed(seed, level, family, metric))
            )
            for i, j, t, p, f in zip(first, second, statistic, pvalue, flips, strict=True):
                rows.append((family, metric, systems[i], systems[j], float(t), float(f), test, float(p)))
    columns = ["family", "metric", "system_a", "system_b", "statistic", "pvalue", "test", "pvalue_t"]
    out = pd.DataFrame(rows, columns=columns)
    return out.sort_values(["family", "metric", "system_a", "system_b"], kind="stable").reset_index(drop=True)
