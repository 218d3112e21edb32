"""S5: posterior probabilities of a calibration function versus ranks (paper 004, Sec. 4-6, Figs. 1-3, Tables 1-2).

Per trained model (:func:`run_s5`), in one process, on one device, with one batch size (``memory_budget_mb``):

1. ``t_LP``: the full filtered rank evaluation of the test split (:func:`kgeval.lp.ranking.rank_lp`).
2. ``t_score`` and ``t_stats``: scores of the validation positives and of all their LCWA negatives (filtered by
   train + valid, Eq. 12), streamed batch by batch into :class:`~kgeval.studies.s5.calibration.CalibrationData`;
   each batch's time is split between scoring (``t_score``) and the statistics pass (``t_stats``)
   (:class:`~kgeval.studies.s5.timing.PhaseTimer`).
3. ``t_fit_all``: isotonic regression and the six Platt functions of each procedure (:mod:`kgeval.studies.s5.fitting`)
   fitted on those statistics with the weights of Eq. 11, each fit timed on its own (``t_fit_isotonic``,
   ``t_fit_platt`` for all, ``t_fit_platt_<procedure>``, ``t_fit_selected`` for the selected one), plus
   ``t_select``: the in-sample assessment that picks the best by ``R2_w`` (Sec. 6.2). With
   ``holdout_fraction > 0`` only the rest of validation is scored and fitted; the held-out share is assessed
   afterwards, untimed (``holdout_*`` columns of the calibrators' table), on negatives disjoint from the fit's; so is
   the paper procedure at 10 and 100 times its epoch budget (:func:`~kgeval.studies.s5.fitting.budget_columns`).
4. ``t_posteriors``: scores of the test positives (one score per triple, no negatives) and their posteriors.

``t_A`` in the paper's reading is ``t_stats + t_fit_selected + t_posteriors`` and end to end ``t_score + t_A``
(:mod:`kgeval.studies.s5.timing`, with ``%Delta t`` of each, ``pct_delta_t`` and ``pct_delta_t_end_to_end``).

Then, untimed, the assessment on the test split: the isotonic function and the best Platt function are applied to
the test positives and to all negatives of every strategy (filtered by the whole graph): ``BS_w``, ``R2_w``, TPR,
TNR, BA (Eq. 7-9, 16-17, weights of Eq. 11 with the strategy's ``|N|``), and the Pearson correlation between
posteriors and relative ranks (Eq. 18-19, both sides, each posterior used twice). The sums of that pass are also
kept per test triple (:mod:`kgeval.studies.s5.triple_sums`, ``triple_sums.parquet``), so that every measure can be
resampled over the test triples.

Across models: :mod:`kgeval.studies.s5.tables` (Tables 1 and 2) and :mod:`kgeval.studies.s5.figures` (Figs. 1-3).
"""

from __future__ import annotations

import copy
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kgeval.io import write_parquet, write_tsv
from kgeval.lp.filtering import as_triples_array
from kgeval.studies.s5.assessment_plan import (
    AssessmentPlan,
    best_of_method,
    calibrators_to_assess,
    expand_sums,
    plan_assessment,
)
from kgeval.studies.s5.calibration import Calibrator, fit_calibrators
from kgeval.studies.s5.fitting import budget_columns, fit_candidates, holdout_columns, split_holdout
from kgeval.studies.s5.measures import CalibrationSums, in_sample_sums, negative_feature_totals, select_calibrator
from kgeval.studies.s5.negatives import NegativeSet, queries_per_batch
from kgeval.studies.s5.settings import RANK_COLUMNS, S5Settings
from kgeval.studies.s5.statistics import CalibrationData
from kgeval.studies.s5.summary import run_counts, summary_table
from kgeval.studies.s5.timing import PhaseTimer, pct_delta_t
from kgeval.studies.s5.triple_sums import TripleSums, strategy_weights

# torch, PyKEEN and the ranking engine are imported by the functions that score (run_s5 and its helpers), not here:
# the S5 collation, table and figure jobs import this module for its TSV functions and need none of them.
if TYPE_CHECKING:
    import torch

    from kgeval.lp.datasets import LPData
    from kgeval.lp.scoring import Scorer

__all__ = [
    "pct_delta_t",
    "S5Result",
    "score_triples",
    "stream_calibration_data",
    "assess_negatives",
    "relative_ranks",
    "rank_posterior_correlation",
    "run_s5",
    "assess_calibration",
]

logger = logging.getLogger(__name__)


@dataclass
class S5Result:
    """Everything :func:`run_s5` measures for one model.

    :ivar calibrators: one row per fitted function: parameters and measures on validation, ``selected``
    :ivar assessment: long table ``calibrator, method, selected, strategy, metric, value`` on test
    :ivar summary: long table ``metric, value``: timings, MR, counts
    :ivar positives: one row per test triple: ids, score, posterior of each assessed function, relative ranks and
        the ranks of ``rank_type`` per side (``rank_head``, ``rank_tail``)
    :ivar triple_sums: one row per test triple: its share of the test assessment's sums
        (:mod:`kgeval.studies.s5.triple_sums`)
    """

    calibrators: pd.DataFrame
    assessment: pd.DataFrame
    summary: pd.DataFrame
    positives: pd.DataFrame = field(repr=False)
    triple_sums: pd.DataFrame = field(repr=False)


def score_triples(model: torch.nn.Module, triples: np.ndarray, batch_size: int = 2**16) -> np.ndarray:
    """Scores of individual triples with PyKEEN's ``predict_hrt`` (one score each, no candidates).

    :param triples: shape: (n, 3)
    :return: shape: (n,) float64
    """
    import torch

    device = next(iter(model.parameters())).device if any(True for _ in model.parameters()) else "cpu"
    out = []
    with torch.no_grad():
        for start in range(0, len(triples), batch_size):
            batch = torch.as_tensor(triples[start : start + batch_size], dtype=torch.long, device=device)
            out.append(model.predict_hrt(batch).reshape(-1).float().cpu().numpy())
    return np.concatenate(out).astype(np.float64) if out else np.zeros(0)


def stream_calibration_data(
    scorer: Scorer,
    negatives: NegativeSet,
    positive_scores: np.ndarray,
    batch_size: int,
    num_bins: int = 2**16,
    strategy: str = "lcwa",
    timer: PhaseTimer | None = None,
) -> CalibrationData:
    """Score every negative batch by batch and fold it into calibration statistics; no batch is kept.

    :param scorer: the model's scorer
    :param negatives: the negatives of the fitting split (validation, filtered by train + valid)
    :param positive_scores: shape: (n,) scores of the fitting split's positives
    :param batch_size: queries per batch
    :param num_bins: histogram bins for Platt scaling
    :param strategy: the negative strategy (the paper fits on LCWA)
    :param timer: if given, each step's time is charged to ``t_score`` (forming a batch's negatives, scoring them,
        selecting the filtered ones) or to ``t_stats`` (folding them into the statistics), from its last checkpoint
    """
    timer = timer if timer is not None else PhaseTimer()
    data = CalibrationData(positive_scores, num_bins=num_bins)
    timer.lap("t_stats")
    masks = negatives.masks(strategy)
    for batch in negatives.batches(batch_size):
        scores = scorer.score_array(batch.side, batch.anchors, batch.relations)
        mask = batch.negatives(masks)
        counts = None if negatives.union else np.repeat(batch.multiplicity, mask.sum(axis=1))
        selected = scores[mask]
        timer.lap("t_score")
        data.add_negatives(selected, counts)
        timer.lap("t_stats")
    timer.lap("t_score")  # the generator's end
    return data


def assess_negatives(
    scorer: Scorer,
    negatives: NegativeSet,
    calibrators: Sequence[Calibrator],
    strategies: Sequence[str],
    batch_size: int,
    per_triple: TripleSums | None = None,
    rows_of: Sequence[slice] | None = None,
) -> dict[tuple[str, str], CalibrationSums]:
    """Stream all negatives once and accumulate the assessment sums of every (calibrator, strategy).

    Per batch, every strategy's selection times the queries' multiplicities is one row of a weight matrix ``W``
    (strategies x negatives); every calibrator's posteriors ``p``, ``p^2`` and ``[p < threshold]`` are summed with
    those weights block by block (:func:`~kgeval.studies.s5.measures.negative_feature_totals`: one small matrix
    product per block and calibrator instead of a masked copy per calibrator and strategy).

    :param per_triple: if given (set up for ``calibrators``, ``strategies`` and ``rows_of``), the sums are kept per
        query in it (:mod:`kgeval.studies.s5.triple_sums`) and the totals are theirs
    :param rows_of: per calibrator the strategies (rows of the weight matrix) it is assessed on (default: all;
        :meth:`~kgeval.studies.s5.assessment_plan.AssessmentPlan.weight_rows`)
    :return: ``{(calibrator name, strategy): sums}`` of the assessed pairs (negatives only; add the positives
        afterwards)
    """
    masks = {strategy: negatives.masks(strategy) for strategy in strategies}
    chosen = list(rows_of) if rows_of is not None else [slice(None)] * len(calibrators)
    assessed = [list(strategies)[sel] for sel in chosen]
    sums = {(c.name, s): CalibrationSums() for c, mine in zip(calibrators, assessed) for s in mine}
    threshold = CalibrationSums().threshold  # every sum above uses the default decision threshold
    for batch in negatives.batches(batch_size):
        # float64 once per batch: every calibrator's predict would convert the float32 scores anyway
        scores = scorer.score_array(batch.side, batch.anchors, batch.relations).astype(np.float64)
        weights = strategy_weights(batch, masks, strategies, scores.shape)
        counts = weights.sum(axis=1)
        if per_triple is None:  # (calibrators, strategies, 3)
            totals = negative_feature_totals(scores, weights, calibrators, threshold, rows_of=chosen)
        else:
            totals = per_triple.add_batch(batch, scores, weights, calibrators, threshold)
        for index, calibrator in enumerate(calibrators):
            for row, strategy in enumerate(strategies):
                if (calibrator.name, strategy) not in sums:
                    continue
                sums[(calibrator.name, strategy)].add_negative_totals(
                    count=counts[row],
                    sq_error=totals[index, row, 1],
                    hits=totals[index, row, 2],
                    posterior=totals[index, row, 0],
                )
    return sums


def relative_ranks(ranks: np.ndarray, num_candidates: np.ndarray) -> np.ndarray:
    """Eq. 19: ``1 - (rank - 1) / |N|`` with ``|N| = num_candidates - 1`` the filtered negatives; NaN if none.

    :param ranks: shape: (n,)
    :param num_candidates: shape: (n,) the true entity plus the filtered candidates
    """
    negatives = np.asarray(num_candidates, dtype=np.float64) - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(negatives > 0, 1.0 - (np.asarray(ranks, dtype=np.float64) - 1.0) / negatives, np.nan)


def rank_posterior_correlation(relative: dict[str, np.ndarray], posteriors: np.ndarray) -> float:
    """Pearson's r (Eq. 18) over the pairs ``(r_s, y)`` and ``(r_o, y)`` of every triple (Eq. 19's duplication).

    Pairs whose relative rank is undefined (no negatives) are left out; NaN when either variable is constant.

    :param relative: per side, shape: (n,) relative ranks
    :param posteriors: shape: (n,)
    """
    x = np.concatenate([relative[side] for side in sorted(relative)])
    y = np.concatenate([posteriors for _ in relative])
    keep = ~np.isnan(x)
    x, y = x[keep], y[keep]
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def _synchronizer(device: torch.device) -> Callable[[], None]:
    """A function that waits for the device's queued work (CUDA), so that a timing covers it; a no-op elsewhere."""
    import torch

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    return sync


def _warm_up(scorer: Scorer, test: np.ndarray, settings: S5Settings) -> None:
    """One-time lazy set-up (kernels, scikit-learn's solvers), so that it is timed in neither protocol."""
    scorer.score_array("tail", test[:1, 0], test[:1, 1])
    warm_up = CalibrationData([1.0, 2.0], num_bins=2)
    warm_up.add_negatives([0.0, 1.5])
    select_calibrator(fit_calibrators(warm_up, platt_inits=settings.platt_inits[:1]), warm_up)


def _assessment_rows(
    calibrators: Sequence[Calibrator],
    best: Calibrator,
    table: pd.DataFrame,
    sums: dict[tuple[str, str], CalibrationSums],
    test_scores: np.ndarray,
    relative: dict[str, np.ndarray],
    positives: pd.DataFrame,
    strategies: Sequence[str],
) -> pd.DataFrame:
    """The test assessment of every assessed calibrator and strategy (the negatives' ``sums`` plus the positives),
    and Pearson's r on LCWA; adds the posteriors of the best function of each method (``posterior_<method>``) and
    of each Platt procedure (``posterior_platt_<procedure>``) to ``positives``. ``best_of_method`` marks the best
    isotonic function and the best Platt function of each procedure (by validation ``R2_w``)."""
    rows = []
    best_of = {"isotonic": best_of_method(calibrators, table, "isotonic")}
    best_of["platt"] = best_of_method(calibrators, table, "platt")
    procedures = sorted(set(table.loc[table["method"] == "platt", "procedure"]))
    best_of_procedure = {p: best_of_method(calibrators, table, "platt", p) for p in procedures}
    marked = {id(c) for c in (best_of["isotonic"], *best_of_procedure.values()) if c is not None}
    for calibrator in calibrators_to_assess(calibrators):
        posteriors = calibrator.predict(test_scores)
        if calibrator is best_of[calibrator.method]:
            positives[f"posterior_{calibrator.method}"] = posteriors
        if calibrator.method == "platt" and calibrator is best_of_procedure.get(calibrator.procedure):
            positives[f"posterior_platt_{calibrator.procedure}"] = posteriors
        head = (calibrator.name, calibrator.method, calibrator.procedure, calibrator is best, id(calibrator) in marked)
        for strategy in strategies:
            if (calibrator.name, strategy) not in sums:  # a strategy the plan leaves out for this function
                continue
            s = sums[(calibrator.name, strategy)]
            s.add_positives(posteriors)
            for metric, value in s.metrics().items():
                rows.append((*head, strategy, metric, value))
            if strategy == "lcwa":
                rows.append((*head, strategy, "pearson_r", rank_posterior_correlation(relative, posteriors)))
    columns = ["calibrator", "method", "procedure", "selected", "best_of_method", "strategy", "metric", "value"]
    return pd.DataFrame(rows, columns=columns)


def _holdout_sums(
    model: torch.nn.Module,
    scorer: Scorer,
    data: LPData,
    split: tuple[np.ndarray, np.ndarray],
    plan: AssessmentPlan,
    settings: S5Settings,
) -> dict[str, CalibrationSums] | None:
    """The LCWA sums of the plan's best functions (``plan.best``) on the held-out validation triples (``split``: the
    fitted and the held-out triples) and their negatives (filtered by train + the whole validation split, as the
    fit's), none of them a negative of the fitted triples; None when nothing is held out. Untimed."""
    fitted, held = split
    if not len(held):
        return None
    train, valid = (as_triples_array(f.mapped_triples) for f in (data.training, data.validation))
    shape = (data.num_entities, data.num_relations, settings.union_negatives)
    negatives = NegativeSet(held, [train, valid], *shape, exclude=NegativeSet(fitted, [train, valid], *shape))
    batch_size = max(1, queries_per_batch(data.num_entities, settings.memory_budget_mb) // 4)
    chosen = [c for c in plan.distinct if c.name in plan.every_strategy]
    passed = assess_negatives(scorer, negatives, chosen, ["lcwa"], batch_size)
    scores = score_triples(model, held)
    sums = {}
    for name in sorted(plan.best):
        sums[name] = copy.deepcopy(passed[(plan.same_as.get(name, name), "lcwa")])
        sums[name].add_positives(plan.calibrator(name).predict(scores))
    return sums


def _validation_pass(
    model: torch.nn.Module,
    scorer: Scorer,
    data: LPData,
    fitted: np.ndarray,
    known: Sequence[np.ndarray],
    settings: S5Settings,
    timer: PhaseTimer,
    times: dict[str, float],
) -> CalibrationData:
    """The statistics of the fitted validation triples and their LCWA negatives (filtered by ``known``: train + the
    whole validation split); adds ``t_score``, ``t_stats`` and their wall time together, ``t_validation_pass``, to
    ``times``."""
    start = time.perf_counter()
    timer.start()
    negatives = NegativeSet(fitted, list(known), data.num_entities, data.num_relations, settings.union_negatives)
    scores = score_triples(model, fitted)
    timer.lap("t_score")
    batch_size = queries_per_batch(data.num_entities, settings.memory_budget_mb)
    result = stream_calibration_data(scorer, negatives, scores, batch_size, settings.histogram_bins, timer=timer)
    times.update(timer.times)
    times["t_validation_pass"] = time.perf_counter() - start
    return result


def _positives_frame(
    test: np.ndarray, scores: np.ndarray, ranks: Mapping[str, Any], rank_column: str
) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """``positives.parquet`` without the posteriors: per test triple its ids, score, relative rank (Eq. 19) and rank
    of ``rank_column`` per side; and the relative ranks per side."""
    relative = {side: relative_ranks(getattr(ranks[side], rank_column), ranks[side].num_candidates) for side in ranks}
    frame = pd.DataFrame(
        {"head": test[:, 0], "relation": test[:, 1], "tail": test[:, 2], "score": scores}
        | {f"relative_rank_{side}": relative[side] for side in sorted(relative)}
        | {f"rank_{side}": np.asarray(getattr(ranks[side], rank_column), dtype=np.float64) for side in sorted(ranks)}
    )
    return frame, relative


def _test_pass(
    scorer: Scorer, negatives: NegativeSet, plan: AssessmentPlan, strategies: Sequence[str], batch_size: int
) -> tuple[dict[tuple[str, str], CalibrationSums], TripleSums]:
    """The test pass of the plan's distinct functions on their strategies, kept per test triple; the sums and the
    per-triple columns of the functions left out of the pass copied from the one they agree with."""
    rows_of = plan.weight_rows(strategies)
    per_triple = TripleSums(negatives, plan.distinct, strategies, rows_of)
    sums = assess_negatives(scorer, negatives, plan.distinct, strategies, batch_size, per_triple, rows_of)
    for name, representative in plan.same_as.items():
        per_triple.alias(name, representative, plan.strategies_of(name, strategies))
    return expand_sums(sums, plan, strategies), per_triple


def run_s5(model: torch.nn.Module, data: LPData, settings: S5Settings) -> S5Result:
    """Fit, time and assess calibration functions for one trained model (module docstring).

    :param model: a trained PyKEEN model
    :param data: its dataset
    """
    import torch

    from kgeval.lp.ranking import rank_lp
    from kgeval.lp.scoring import make_scorer, resolve_device

    # what the calibration functions import on first use (kgeval.studies.s5.calibration), imported before any timing,
    # as they were when this module imported them at the top
    import scipy.special  # noqa: F401
    import sklearn.isotonic  # noqa: F401
    import sklearn.linear_model  # noqa: F401

    device = resolve_device(settings.device)
    scorer = make_scorer(model, device=device)
    num_entities, num_relations = data.num_entities, data.num_relations
    train, valid, test = (as_triples_array(f.mapped_triples) for f in (data.training, data.validation, data.testing))
    batch_size = queries_per_batch(num_entities, settings.memory_budget_mb)
    _warm_up(scorer, test, settings)
    sync = _synchronizer(device)

    start = time.perf_counter()
    with torch.no_grad():
        ranks = rank_lp(
            scorer,
            torch.as_tensor(test),
            filter_triples=[train, valid, test],
            memory_budget_mb=settings.memory_budget_mb,
            device=device,
        )
    sync()
    times = {"t_lp": time.perf_counter() - start}

    # the fitted share of validation; negatives filtered by train + the whole validation split (kgeval.studies.s5.fitting)
    fit_rows, held_rows = split_holdout(len(valid), settings.holdout_fraction, settings.seed)
    timer = PhaseTimer(sync)
    data_valid = _validation_pass(model, scorer, data, valid[fit_rows], [train, valid], settings, timer, times)

    calibrators, best, table, fit_times = fit_candidates(data_valid, settings)
    times.update(fit_times)

    start = time.perf_counter()
    test_scores = score_triples(model, test)
    best.predict(test_scores)
    sync()
    times["t_posteriors"] = time.perf_counter() - start
    logger.info(
        "t_LP %(t_lp).3fs; t_score %(t_score).3fs, t_stats %(t_stats).3fs, t_fit %(t_fit_all).3fs, "
        "t_posteriors %(t_posteriors).3fs",
        times,
    )
    logger.info("%d validation negatives; best: %s", data_valid.num_negatives, best.name)

    # assessment on test (untimed): negatives filtered by the whole graph
    assessed = calibrators_to_assess(calibrators)
    plan = plan_assessment(assessed, table)
    split = (valid[fit_rows], valid[held_rows])
    table = holdout_columns(table, assessed, _holdout_sums(model, scorer, data, split, plan, settings))
    table = budget_columns(table, data_valid, settings)
    table["assessed_with"] = [plan.same_as.get(n, n) if n in plan.names else None for n in table["calibrator"]]
    test_negatives = NegativeSet(
        test, [train, valid, test], num_entities, num_relations, union=settings.union_negatives
    )
    # a quarter of the batch: the assessment holds a float64 posterior matrix and a mask per strategy per batch
    sums, per_triple = _test_pass(scorer, test_negatives, plan, settings.strategies, max(1, batch_size // 4))
    positives, relative = _positives_frame(test, test_scores, ranks, RANK_COLUMNS[settings.rank_type])
    assessment = _assessment_rows(calibrators, best, table, sums, test_scores, relative, positives, settings.strategies)
    per_triple.add_positives({c.name: c.predict(test_scores) for c in assessed})
    all_ranks = positives[[f"rank_{side}" for side in sorted(ranks)]].to_numpy().reshape(-1)
    counts = run_counts(data, len(valid), len(test), data_valid, test_negatives, settings.strategies, batch_size)
    summary = summary_table(times, counts, float(all_ranks.mean()))
    return S5Result(table, assessment, summary, positives, per_triple.frame())


def assess_calibration(
    model_path: str | os.PathLike,
    dataset_key: str,
    dataset_spec: dict[str, Any],
    data_dir: str | None,
    outputs: Mapping[str, str | os.PathLike],
    settings: S5Settings,
) -> S5Result:
    """Load a trained model and its dataset, :func:`run_s5`, and write its five tables.

    :param outputs: the path of each table: ``calibrators``, ``assessment``, ``summary`` (TSV), ``positives`` and
        ``triple_sums`` (parquet)
    :param settings: the study settings (:meth:`S5Settings.from_config`); its device also loads the model
    """
    from kgeval.lp.datasets import load_dataset
    from kgeval.lp.ranks import load_model

    data = load_dataset(dataset_key, dataset_spec, data_dir)
    model = load_model(str(model_path), settings.device)
    result = run_s5(model, data, settings)
    write_tsv(result.calibrators, outputs["calibrators"], sort_by=["calibrator"])
    write_tsv(result.assessment, outputs["assessment"], sort_by=["calibrator", "strategy", "metric"])
    write_tsv(result.summary, outputs["summary"], sort_by=["metric"])
    write_parquet(result.positives, outputs["positives"])
    write_parquet(result.triple_sums, outputs["triple_sums"])
    return result
