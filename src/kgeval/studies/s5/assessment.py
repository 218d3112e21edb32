"""S5: posterior probabilities of a calibration function versus ranks (paper 004, Sec. 4-6, Figs. 1-3, Tables 1-2).

Per trained model (:func:`run_s5`), in one process, on one device, with one batch size (``memory_budget_mb``):

1. ``t_LP``: the full filtered rank evaluation of the test split (:func:`kgeval.lp.ranking.rank_lp`).
2. ``t_score``: scores of the validation positives and of all their LCWA negatives (filtered by train + valid, Eq.
   12), streamed into :class:`~kgeval.studies.s5.calibration.CalibrationData`.
3. ``t_fit_all``: isotonic regression and the six Platt functions fitted on those statistics with the weights of
   Eq. 11, each fit timed on its own (``t_fit_isotonic``, ``t_fit_platt`` for all six, ``t_fit_selected`` for the
   selected one), plus ``t_select``: the in-sample assessment that picks the best by ``R2_w`` (Sec. 6.2).
4. ``t_posteriors``: scores of the test positives (one score per triple, no negatives) and their posteriors.

Three timings per model (the issue's fields):

- ``t_lp``: score and rank the test split (the original protocol).
- ``t_a``, as Sec. 6.3 defines it: "the time taken to learn f over G_VA plus the time taken to compute posterior
  probabilities over G_TE" *for the best-performing calibration function*: ``t_a = t_fit_selected + t_posteriors``.
  The fits of the functions that were not selected and the selection itself are left out (reported as
  ``t_a_all_fits = t_fit_all + t_posteriors``, an extension), and so is scoring the validation negatives: the paper
  takes those scores as computed by the training loop's validation step anyway (Sec. 4).
- ``t_a_end_to_end = t_score + t_a``: plus scoring the validation positives and all their negatives, the work that
  learning ``f`` really needs when no validation step kept its scores.

``%Delta t = 100 (t_A - t_LP) / t_LP`` for both (``pct_delta_t``, ``pct_delta_t_end_to_end``). The paper's formula
prints ``100 (t_A + t_LP) / t_LP``, which is always above 100, while its Table 1 holds negative values (reductions);
we use the reading that gives Table 1's signs: negative means the alternative protocol is faster.

Then, untimed, the assessment on the test split: the isotonic function and the best Platt function are applied to
the test positives and to all negatives of every strategy (filtered by the whole graph): ``BS_w``, ``R2_w``, TPR,
TNR, BA (Eq. 7-9, 16-17, weights of Eq. 11 with the strategy's ``|N|``), and the Pearson correlation between
posteriors and relative ranks (Eq. 18-19, both sides, each posterior used twice).

Across models (:func:`table_comparison`): ``MR' = 1 - (MR - min MR) / (max MR - min MR)`` per dataset and seed, the
mean posterior ``y_bar`` of the test positives under the selected function, and the share of the pairwise model
comparisons that both orders agree on (Table 2).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kgeval.studies.s5.calibration import (
    PLATT_INITS,
    CalibrationData,
    CalibrationSums,
    Calibrator,
    fit_calibrators,
    fit_isotonic,
    fit_platt,
    fit_platt_gd,
    in_sample_sums,
    select_calibrator,
)
from kgeval.lp.filtering import as_triples_array
from kgeval.io import atomic_path, read_tsv, write_parquet, write_tsv
from kgeval.studies.s5.negatives import STRATEGIES, NegativeSet, queries_per_batch

# torch, PyKEEN and the ranking engine are imported by the functions that score (run_s5 and its helpers), not here:
# the S5 collation, table and figure jobs import this module for its TSV functions, and each paid ~6 s of CPU for them.
if TYPE_CHECKING:
    import torch

    from kgeval.lp.datasets import LPData
    from kgeval.lp.scoring import Scorer

__all__ = [
    "pct_delta_t",
    "PAPER_MODELS",
    "ABBREVIATIONS",
    "S5Settings",
    "S5Result",
    "score_triples",
    "stream_calibration_data",
    "assess_negatives",
    "relative_ranks",
    "rank_posterior_correlation",
    "run_s5",
    "assess_calibration",
    "collate_s5",
    "table_timing",
    "table_timing_paper",
    "table_overlap_paper",
    "table_timing_figure",
    "plot_s5_timing",
    "TIMING_READINGS",
    "NOT_AVAILABLE",
    "scaled_mr",
    "comparison_overlap",
    "table_comparison",
    "write_table_timing",
    "write_table_comparison",
    "plot_s5_figure",
]

logger = logging.getLogger(__name__)

#: the paper's nine link-prediction methods (HAKE and RotPro have no PyKEEN implementation)
PAPER_MODELS: tuple[str, ...] = ("BoxE", "ComplEx", "HAKE", "HolE", "QuatE", "RotatE", "RotPro", "TorusE", "TransE")
#: the paper's abbreviations (Table 2)
ABBREVIATIONS: dict[str, str] = {
    "BoxE": "Bo",
    "ComplEx": "Co",
    "HAKE": "HA",
    "HolE": "Ho",
    "QuatE": "Qu",
    "RotatE": "Rt",
    "RotPro": "RP",
    "TorusE": "To",
    "TransE": "Tr",
}
_RANK_COLUMNS = {"optimistic": "rank_optimistic", "realistic": "rank_realistic", "pessimistic": "rank_pessimistic"}


@dataclass(frozen=True)
class S5Settings:
    """How S5 fits and assesses calibration functions (the ``studies.s5`` config section).

    :ivar strategies: negative strategies assessed on test (LCWA is always used for fitting)
    :ivar platt_inits: initial ``(a, b)`` of the Platt functions
    :ivar histogram_bins: bins of the negatives' histogram for Platt scaling
    :ivar platt_gd_learning_rate: fixed learning rate of Platt's gradient descent (standardised coordinates)
    :ivar platt_gd_steps: step budget of Platt's gradient descent, per initialisation
    :ivar union_negatives: ``True``: negatives as the set union of Eq. 12; ``False``: per positive and side
    :ivar rank_type: rank used for ``MR`` and for the relative ranks of Eq. 19 (the paper uses fractional ranks)
    :ivar memory_budget_mb: bound on one batch of scores, for the rank evaluation and the calibration alike
    :ivar device: ``cpu``, ``cuda`` or None (GPU if present)
    """

    strategies: tuple[str, ...] = STRATEGIES
    platt_inits: tuple[tuple[float, float], ...] = PLATT_INITS
    histogram_bins: int = 2**16
    platt_gd_learning_rate: float = 1.0
    platt_gd_steps: int = 1000
    union_negatives: bool = True
    rank_type: str = "realistic"
    memory_budget_mb: float = 256.0
    device: str | None = "cpu"

    def __post_init__(self) -> None:
        unknown = [s for s in self.strategies if s not in STRATEGIES]
        if unknown:
            raise ValueError(f"studies.s5.strategies: unknown {unknown}; use some of {list(STRATEGIES)}")
        if self.rank_type not in _RANK_COLUMNS:
            raise ValueError(f"studies.s5.rank_type: {self.rank_type!r}; use one of {list(_RANK_COLUMNS)}")


@dataclass
class S5Result:
    """Everything :func:`run_s5` measures for one model.

    :ivar calibrators: one row per fitted function: parameters and measures on validation, ``selected``
    :ivar assessment: long table ``calibrator, method, selected, strategy, metric, value`` on test
    :ivar summary: long table ``metric, value``: timings, MR, counts
    :ivar positives: one row per test triple: ids, score, posterior of each assessed function, relative ranks
    """

    calibrators: pd.DataFrame
    assessment: pd.DataFrame
    summary: pd.DataFrame
    positives: pd.DataFrame = field(repr=False)


def pct_delta_t(t_a: float, t_lp: float) -> float:
    """Sec. 6.3's time change of the alternative protocol against rank evaluation, ``100 (t_A - t_LP) / t_LP`` (%).

    Negative when the alternative is faster, as the paper's Table 1 prints it (its formula prints the sign flipped).
    """
    return 100.0 * (t_a - t_lp) / t_lp


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


def _score_batch(scorer: Scorer, side: str, anchors: np.ndarray, relations: np.ndarray) -> np.ndarray:
    """Scores of all entities for a batch of queries, as a (b, E) float32 numpy array."""
    import torch

    with torch.no_grad():
        scores = scorer.score(
            side,
            torch.as_tensor(anchors, dtype=torch.long, device=scorer.device),
            torch.as_tensor(relations, dtype=torch.long, device=scorer.device),
        )
    return scores.float().cpu().numpy()


def stream_calibration_data(
    scorer: Scorer,
    negatives: NegativeSet,
    positive_scores: np.ndarray,
    batch_size: int,
    num_bins: int = 2**16,
    strategy: str = "lcwa",
) -> CalibrationData:
    """Score every negative batch by batch and fold it into calibration statistics; no batch is kept.

    :param scorer: the model's scorer
    :param negatives: the negatives of the fitting split (validation, filtered by train + valid)
    :param positive_scores: shape: (n,) scores of the fitting split's positives
    :param batch_size: queries per batch
    :param num_bins: histogram bins for Platt scaling
    :param strategy: the negative strategy (the paper fits on LCWA)
    """
    data = CalibrationData(positive_scores, num_bins=num_bins)
    masks = negatives.masks(strategy)
    for batch in negatives.batches(batch_size):
        scores = _score_batch(scorer, batch.side, batch.anchors, batch.relations)
        mask = batch.negatives(masks)
        counts = None if negatives.union else np.repeat(batch.multiplicity, mask.sum(axis=1))
        data.add_negatives(scores[mask], counts)
    return data


def assess_negatives(
    scorer: Scorer,
    negatives: NegativeSet,
    calibrators: Sequence[Calibrator],
    strategies: Sequence[str],
    batch_size: int,
) -> dict[tuple[str, str], CalibrationSums]:
    """Stream all negatives once and accumulate the assessment sums of every (calibrator, strategy).

    Per batch, every strategy's selection times the queries' multiplicities is one row of a weight matrix ``W``
    (strategies x negatives), and every calibrator's posteriors ``p``, ``p^2`` and ``[p < threshold]`` are the rows
    of a feature matrix ``F``; all the negatives' sums of that calibrator are then the one matrix product
    ``W F^T`` (a BLAS call that reads each matrix once, instead of a masked copy per calibrator and strategy).

    :return: ``{(calibrator name, strategy): sums}`` (negatives only; add the positives afterwards)
    """
    masks = {strategy: negatives.masks(strategy) for strategy in strategies}
    sums = {(c.name, s): CalibrationSums() for c in calibrators for s in strategies}
    threshold = CalibrationSums().threshold  # every sum above uses the default decision threshold
    for batch in negatives.batches(batch_size):
        # float64 once per batch: every calibrator's predict would convert the float32 scores anyway
        scores = _score_batch(scorer, batch.side, batch.anchors, batch.relations).astype(np.float64)
        multiplicity = np.asarray(batch.multiplicity, dtype=np.float64)[:, None]
        weights = np.empty((len(strategies), scores.size), dtype=np.float64)
        for row, strategy in enumerate(strategies):
            np.multiply(batch.negatives(masks[strategy]), multiplicity, out=weights[row].reshape(scores.shape))
        counts = weights.sum(axis=1)
        features = np.empty((3, scores.size), dtype=np.float64)
        for calibrator in calibrators:
            features[0] = calibrator.predict(scores).reshape(-1)
            np.multiply(features[0], features[0], out=features[1])
            np.less(features[0], threshold, out=features[2])
            totals = weights @ features.T  # (strategies, 3): sum of p, of p^2, of hits
            for row, strategy in enumerate(strategies):
                sums[(calibrator.name, strategy)].add_negative_totals(
                    count=counts[row],
                    sq_error=totals[row, 1],
                    hits=totals[row, 2],
                    posterior=totals[row, 0],
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


def _calibrators_to_assess(calibrators: Sequence[Calibrator], table: pd.DataFrame) -> list[Calibrator]:
    """The isotonic function and every Platt function learnt by gradient descent (Fig. 3 shows the six)."""
    return [c for c in calibrators if c.method in ("isotonic", "platt")]


def _best_of_method(calibrators: Sequence[Calibrator], table: pd.DataFrame, method: str) -> Calibrator | None:
    """The calibrator of ``method`` with the best validation ``R2_w`` (None if there is none)."""
    rows = table[table["method"] == method]
    if not len(rows):
        return None
    name = rows.loc[rows["r2_w"].idxmax(), "calibrator"]
    return next(c for c in calibrators if c.name == name)


def run_s5(model: torch.nn.Module, data: LPData, settings: S5Settings = S5Settings()) -> S5Result:
    """Fit, time and assess calibration functions for one trained model (module docstring).

    :param model: a trained PyKEEN model
    :param data: its dataset
    :param settings: the study settings
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
    # warm-up, so that one-time lazy set-up (kernels, scikit-learn's solvers) is timed in neither protocol
    _score_batch(scorer, "tail", test[:1, 0], test[:1, 1])
    warm_up = CalibrationData([1.0, 2.0], num_bins=2)
    warm_up.add_negatives([0.0, 1.5])
    select_calibrator(fit_calibrators(warm_up, platt_inits=settings.platt_inits[:1]), warm_up)

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

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
    t_lp = time.perf_counter() - start

    start = time.perf_counter()
    fit_negatives = NegativeSet(valid, [train, valid], num_entities, num_relations, union=settings.union_negatives)
    valid_scores = score_triples(model, valid)
    data_valid = stream_calibration_data(scorer, fit_negatives, valid_scores, batch_size, settings.histogram_bins)
    sync()
    t_score = time.perf_counter() - start

    fit_times: dict[str, float] = {}
    calibrators = []
    start_all = time.perf_counter()
    for init in (None, *settings.platt_inits):
        start = time.perf_counter()
        if init is None:
            calibrator = fit_isotonic(data_valid)
        else:
            calibrator = fit_platt_gd(
                data_valid,
                init=(float(init[0]), float(init[1])),
                learning_rate=settings.platt_gd_learning_rate,
                steps=settings.platt_gd_steps,
            )
        fit_times[calibrator.name] = time.perf_counter() - start
        calibrators.append(calibrator)
    start = time.perf_counter()
    best, table = select_calibrator(calibrators, data_valid)
    t_select = time.perf_counter() - start
    t_fit = time.perf_counter() - start_all
    # the exact optimum next to the gradient-descent fits (extension; not a candidate, not in t_A)
    start = time.perf_counter()
    exact = fit_platt(data_valid)
    t_fit_platt_exact = time.perf_counter() - start
    exact.name, exact.method = "platt_exact", "platt_exact"
    exact_row = {**exact.describe(), **in_sample_sums(exact, data_valid).metrics(), "selected": False}
    table = pd.concat([table, pd.DataFrame([exact_row])], ignore_index=True)
    table["optimiser"] = np.where(
        table["method"] == "platt", "gd", np.where(table["method"] == "platt_exact", "newton", "pava")
    )
    t_fit_isotonic = fit_times["isotonic"]
    t_fit_platt = sum(v for k, v in fit_times.items() if k != "isotonic")
    t_fit_selected = fit_times[best.name]

    start = time.perf_counter()
    test_scores = score_triples(model, test)
    best.predict(test_scores)
    sync()
    t_posteriors = time.perf_counter() - start
    logger.info(
        "t_LP %.3fs; t_score %.3fs, t_fit %.3fs, t_posteriors %.3fs; %d validation negatives; best: %s",
        t_lp,
        t_score,
        t_fit,
        t_posteriors,
        data_valid.num_negatives,
        best.name,
    )

    # assessment on test (untimed): negatives filtered by the whole graph
    assessed = _calibrators_to_assess(calibrators, table)
    test_negatives = NegativeSet(
        test, [train, valid, test], num_entities, num_relations, union=settings.union_negatives
    )
    # a quarter of the batch: the assessment holds a float64 posterior matrix and a mask per strategy per batch
    sums = assess_negatives(scorer, test_negatives, assessed, settings.strategies, max(1, batch_size // 4))
    rank_column = _RANK_COLUMNS[settings.rank_type]
    relative = {side: relative_ranks(getattr(ranks[side], rank_column), ranks[side].num_candidates) for side in ranks}
    positives = pd.DataFrame(
        {"head": test[:, 0], "relation": test[:, 1], "tail": test[:, 2], "score": test_scores}
        | {f"relative_rank_{side}": relative[side] for side in sorted(relative)}
    )
    rows = []
    best_of = {method: _best_of_method(calibrators, table, method) for method in ("isotonic", "platt")}
    for calibrator in assessed:
        posteriors = calibrator.predict(test_scores)
        if calibrator is best_of[calibrator.method]:
            positives[f"posterior_{calibrator.method}"] = posteriors
        for strategy in settings.strategies:
            s = sums[(calibrator.name, strategy)]
            s.add_positives(posteriors)
            for metric, value in s.metrics().items():
                rows.append((calibrator.name, calibrator.method, calibrator is best, strategy, metric, value))
            if strategy == "lcwa":
                r = rank_posterior_correlation(relative, posteriors)
                rows.append((calibrator.name, calibrator.method, calibrator is best, strategy, "pearson_r", r))
    assessment = pd.DataFrame(rows, columns=["calibrator", "method", "selected", "strategy", "metric", "value"])
    all_ranks = np.concatenate([getattr(ranks[side], rank_column) for side in sorted(ranks)]).astype(np.float64)
    t_a = t_fit_selected + t_posteriors
    t_a_end_to_end = t_score + t_a
    t_a_all_fits = t_fit + t_posteriors
    summary = {
        "t_lp": t_lp,
        "t_score": t_score,
        "t_fit_all": t_fit,
        "t_fit_isotonic": t_fit_isotonic,
        "t_fit_platt": t_fit_platt,
        "t_fit_selected": t_fit_selected,
        "t_select": t_select,
        "t_fit_platt_exact": t_fit_platt_exact,
        "t_posteriors": t_posteriors,
        "t_a": t_a,
        "t_a_end_to_end": t_a_end_to_end,
        "t_a_all_fits": t_a_all_fits,
        "pct_delta_t": pct_delta_t(t_a, t_lp),
        "pct_delta_t_end_to_end": pct_delta_t(t_a_end_to_end, t_lp),
        "pct_delta_t_all_fits": pct_delta_t(t_a_all_fits, t_lp),
        "mr": float(all_ranks.mean()),
        "num_entities": num_entities,
        "num_relations": num_relations,
        "num_valid": len(valid),
        "num_test": len(test),
        "num_valid_negatives": data_valid.num_negatives,
        "num_test_negatives_lcwa": test_negatives.count("lcwa"),
        # per assessed strategy, so that an empty strategy (GB on Nations and Kinships) is visible in every table
        **{
            f"num_test_negatives_{strategy}": test_negatives.count(strategy)
            for strategy in settings.strategies
            if strategy != "lcwa"
        },
        "queries_per_batch": batch_size,
        "platt_histogram_bin_width": data_valid.histogram.width or 0.0,
    }
    summary_frame = pd.DataFrame({"metric": list(summary), "value": [float(v) for v in summary.values()]})
    return S5Result(calibrators=table, assessment=assessment, summary=summary_frame, positives=positives)


def assess_calibration(
    model_path: str | os.PathLike,
    dataset_key: str,
    dataset_spec: dict[str, Any],
    data_dir: str | None,
    calibrators_path: str | os.PathLike,
    assessment_path: str | os.PathLike,
    summary_path: str | os.PathLike,
    positives_path: str | os.PathLike,
    settings: dict[str, Any] | None = None,
    memory_budget_mb: float = 256.0,
    device: str = "cpu",
) -> S5Result:
    """Load a trained model and its dataset, :func:`run_s5`, and write its four tables.

    :param settings: the ``studies.s5`` config section (keys of :class:`S5Settings`; ``enabled``, ``models`` and
        ``datasets`` are ignored here)
    """
    settings = dict(settings or {})
    options = S5Settings(
        strategies=tuple(settings.get("strategies", STRATEGIES)),
        platt_inits=tuple(tuple(float(v) for v in pair) for pair in settings.get("platt_inits", PLATT_INITS)),
        histogram_bins=int(settings.get("histogram_bins", 2**16)),
        platt_gd_learning_rate=float(settings.get("platt_gd_learning_rate", 1.0)),
        platt_gd_steps=int(settings.get("platt_gd_steps", 1000)),
        union_negatives=bool(settings.get("union_negatives", True)),
        rank_type=settings.get("rank_type", "realistic"),
        memory_budget_mb=float(memory_budget_mb),
        device=device,
    )
    from kgeval.lp.datasets import load_dataset
    from kgeval.lp.ranks import load_model

    data = load_dataset(dataset_key, dataset_spec, data_dir)
    model = load_model(str(model_path), device)
    result = run_s5(model, data, options)
    write_tsv(result.calibrators, calibrators_path, sort_by=["calibrator"])
    write_tsv(result.assessment, assessment_path, sort_by=["calibrator", "strategy", "metric"])
    write_tsv(result.summary, summary_path, sort_by=["metric"])
    write_parquet(result.positives, positives_path)
    return result


def _path_keys(path: str) -> dict[str, str]:
    """``dataset, model, seed`` from ``.../{dataset}/{model}/{seed}/<file>``."""
    parts = os.path.normpath(path).split(os.sep)
    return {"dataset": parts[-4], "model": parts[-3], "seed": parts[-2]}


def collate_s5(
    assessment_paths: Sequence[str],
    summary_paths: Sequence[str],
    calibrator_paths: Sequence[str],
    model_names: dict[str, str],
    assessment_out: str | os.PathLike,
    summary_out: str | os.PathLike,
    calibrators_out: str | os.PathLike,
) -> None:
    """Stack the per-model tables into three tables with ``dataset, model, model_class, seed`` columns.

    :param model_names: config model key -> PyKEEN class name (e.g. ``transe`` -> ``TransE``)
    """
    for paths, out in (
        (assessment_paths, assessment_out),
        (summary_paths, summary_out),
        (calibrator_paths, calibrators_out),
    ):
        frames = []
        for path in paths:
            keys = _path_keys(str(path))
            frame = read_tsv(path)
            frame.insert(0, "seed", int(keys["seed"]))
            frame.insert(0, "model_class", model_names.get(keys["model"], keys["model"]))
            frame.insert(0, "model", keys["model"])
            frame.insert(0, "dataset", keys["dataset"])
            frames.append(frame)
        if not frames:
            raise ValueError(f"nothing to collate into {out}: no S5 models configured (check studies.s5.models)")
        table = pd.concat(frames, ignore_index=True)
        sort = [c for c in ("dataset", "model", "seed", "calibrator", "strategy", "metric") if c in table.columns]
        write_tsv(table, out, sort_by=sort)


def table_timing(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 1: per dataset, model and seed, ``t_A``, ``%Delta t`` and their parts (seconds).

    :param summary: the collated summary table (``dataset, model, model_class, seed, metric, value``)
    """
    wide = summary.pivot_table(
        index=["dataset", "model", "model_class", "seed"], columns="metric", values="value", aggfunc="first"
    ).reset_index()
    columns = [
        "dataset",
        "model",
        "model_class",
        "seed",
        "t_lp",
        "t_a",
        "pct_delta_t",
        "t_a_end_to_end",
        "pct_delta_t_end_to_end",
        "t_a_all_fits",
        "pct_delta_t_all_fits",
        "t_score",
        "t_fit_selected",
        "t_fit_all",
        "t_fit_isotonic",
        "t_fit_platt",
        "t_select",
        "t_posteriors",
        "num_entities",
        "num_valid",
        "num_test",
        "num_valid_negatives",
        "num_test_negatives_lcwa",
    ]
    columns += [c for c in _negative_columns(wide) if c not in columns]
    wide.columns.name = None
    return wide[columns]


#: strategies in the order the tables show their negative counts
_STRATEGY_ORDER = ("lcwa", "gb", "tc", "lc", "gb+lc")


def _negative_columns(table: pd.DataFrame) -> list[str]:
    """The ``num_test_negatives_<strategy>`` columns of a table, in :data:`_STRATEGY_ORDER`."""
    return [f"num_test_negatives_{s}" for s in _STRATEGY_ORDER if f"num_test_negatives_{s}" in table.columns]


def _negatives_text(row: pd.Series | dict) -> str:
    """``"lcwa 1,234; gb 0; ..."`` from a row's ``num_test_negatives_<strategy>`` values."""
    parts = []
    for strategy in _STRATEGY_ORDER:
        value = row.get(f"num_test_negatives_{strategy}")
        if value is not None and not pd.isna(value):
            parts.append(f"{strategy} {int(value):,}")
    return "; ".join(parts)


def scaled_mr(mr: pd.Series) -> pd.Series:
    """``MR' = 1 - (MR - min) / (max - min)``: 1 for the best model, 0 for the worst (all 1 if they are equal)."""
    low, high = mr.min(), mr.max()
    if not high > low:
        return pd.Series(1.0, index=mr.index)
    return 1.0 - (mr - low) / (high - low)


def comparison_overlap(first: pd.Series, second: pd.Series) -> tuple[int, int]:
    """How many pairwise comparisons two accuracy measures share (Table 2).

    The comparisons of a measure are the pairs ``(a, b)`` with ``value_a > value_b`` (higher is better); a pair is
    shared if both measures order it the same way. Ties order nothing.

    :param first: accuracy per model (index: models)
    :param second: accuracy per model, same index
    :return: ``(shared comparisons, number of model pairs)``
    """
    models = list(first.index)
    shared = 0
    for a, b in combinations(models, 2):
        d1, d2 = np.sign(first[a] - first[b]), np.sign(second[a] - second[b])
        shared += int(d1 != 0 and d1 == d2)
    return shared, len(models) * (len(models) - 1) // 2


def table_comparison(summary: pd.DataFrame, assessment: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 2: models ordered by ``MR'`` and by ``y_bar`` (selected function), and the overlap of both orders.

    :return: ``(per model: dataset, seed, model, model_class, abbreviation, mr, mr_scaled, mean_posterior,
        calibrator, position_mr, position_posterior; per dataset and seed: num_models, num_pairs, num_shared,
        overlap)``
    """
    mr = summary[summary["metric"] == "mr"][["dataset", "seed", "model", "model_class", "value"]].rename(
        columns={"value": "mr"}
    )
    chosen = assessment[
        (assessment["metric"] == "mean_posterior")
        & assessment["selected"].astype(bool)
        & (assessment["strategy"] == "lcwa")
    ][["dataset", "seed", "model", "calibrator", "value"]].rename(columns={"value": "mean_posterior"})
    table = mr.merge(chosen, on=["dataset", "seed", "model"], how="inner")
    counts = summary[summary["metric"].astype(str).str.startswith("num_test_negatives_")]
    counts = counts.pivot_table(index=["dataset", "seed", "model"], columns="metric", values="value", aggfunc="first")
    counts.columns.name = None
    negative_columns = _negative_columns(counts)
    table = table.merge(counts[negative_columns].reset_index(), on=["dataset", "seed", "model"], how="left")
    rows, overlaps = [], []
    for (dataset, seed), group in table.groupby(["dataset", "seed"], sort=True):
        group = group.set_index("model").copy()
        group["mr_scaled"] = scaled_mr(group["mr"])
        group["position_mr"] = group["mr_scaled"].rank(ascending=False, method="min").astype(int)
        group["position_posterior"] = group["mean_posterior"].rank(ascending=False, method="min").astype(int)
        shared, pairs = comparison_overlap(group["mr_scaled"], group["mean_posterior"])
        overlaps.append(
            {
                "dataset": dataset,
                "seed": seed,
                "num_models": len(group),
                "num_pairs": pairs,
                "num_shared": shared,
                "overlap": shared / pairs if pairs else float("nan"),
            }
        )
        group["abbreviation"] = group["model_class"].map(ABBREVIATIONS).fillna(group["model_class"])
        rows.append(group.reset_index())
    columns = [
        "dataset",
        "seed",
        "model",
        "model_class",
        "abbreviation",
        "mr",
        "mr_scaled",
        "mean_posterior",
        "calibrator",
        "position_mr",
        "position_posterior",
        *negative_columns,
    ]
    per_model = pd.concat(rows, ignore_index=True)[columns] if rows else pd.DataFrame(columns=columns)
    return per_model, pd.DataFrame(
        overlaps, columns=["dataset", "seed", "num_models", "num_pairs", "num_shared", "overlap"]
    )


NOT_AVAILABLE = "not available in PyKEEN"


def table_timing_paper(timing: pd.DataFrame, unavailable: Sequence[str] = ()) -> pd.DataFrame:
    """Table 1 in the paper's layout: one row per method, per dataset the columns ``t_A`` and ``%Delta t``.

    Means over seeds. Both readings of ``t_A`` are given: ``<dataset> t_A`` and ``<dataset> %dt`` (Sec. 6.3's
    definition), ``<dataset> t_A end-to-end`` and ``<dataset> %dt end-to-end`` (validation scoring included).
    The paper's methods that cannot run here (``unavailable``) follow as rows without values whose ``note`` says so.
    A last row, ``method`` = ``test negatives``, gives per dataset the number of test negatives of every strategy
    (in its ``<dataset> t_A`` column; the same for every model), so that an empty strategy is visible.

    :param timing: the output of :func:`table_timing`
    :param unavailable: the paper's methods without an implementation (``studies.s5.unavailable_models``)
    """
    means = timing.groupby(["model_class", "dataset"], sort=True)[
        ["t_a", "pct_delta_t", "t_a_end_to_end", "pct_delta_t_end_to_end"]
    ].mean()
    labels = {
        "t_a": "t_A",
        "pct_delta_t": "%dt",
        "t_a_end_to_end": "t_A end-to-end",
        "pct_delta_t_end_to_end": "%dt end-to-end",
    }
    wide = means.unstack("dataset")
    wide.columns = [f"{dataset} {labels[measure]}" for measure, dataset in wide.columns]
    order = [f"{d} {labels[m]}" for d in sorted(timing["dataset"].unique()) for m in labels]
    wide = wide[order].reset_index().rename(columns={"model_class": "method"})
    wide["note"] = ""
    missing = [name for name in unavailable if name not in set(wide["method"])]
    extra = [{"method": name, "note": NOT_AVAILABLE} for name in missing]
    negatives = {"method": "test negatives", "note": "per strategy, in the t_A column; the same for every model"}
    for dataset, group in timing.groupby("dataset", sort=True):
        negatives[f"{dataset} t_A"] = _negatives_text(group.iloc[0])
    wide = pd.concat([wide, pd.DataFrame(extra, columns=wide.columns)], ignore_index=True)
    wide = wide.astype({c: object for c in wide.columns if c.endswith(" t_A")})
    return pd.concat([wide, pd.DataFrame([negatives], columns=wide.columns)], ignore_index=True)


def table_overlap_paper(
    per_model: pd.DataFrame, overlap: pd.DataFrame, unavailable: Sequence[str] = ()
) -> pd.DataFrame:
    """Table 2 in the paper's layout: per dataset (and seed) two rows, the methods sorted by ``MR'`` and by ``y_bar``.

    ``sorted`` reads like the paper's ``Tr (1.00), Bo (0.96), ...`` (abbreviations of :data:`ABBREVIATIONS`, values
    rounded to two decimals, order from the unrounded values); ``overlap`` (on the ``MR'`` row) is the share of
    shared pairwise comparisons in percent; ``negatives`` the test negatives per strategy. The paper's methods that
    cannot run here (``unavailable``) get a third row per dataset saying so.

    :param per_model: the first output of :func:`table_comparison`
    :param overlap: its second output
    :param unavailable: ``studies.s5.unavailable_models``
    """
    columns = ["dataset", "seed", "sorted_by", "sorted", "overlap", "negatives"]
    rows = []
    overlaps = overlap.set_index(["dataset", "seed"])
    for (dataset, seed), group in per_model.groupby(["dataset", "seed"], sort=True):
        negatives = _negatives_text(group.iloc[0])
        share = overlaps.loc[(dataset, seed), "overlap"] if (dataset, seed) in overlaps.index else float("nan")
        for label, column in (("MR'", "mr_scaled"), ("y_bar", "mean_posterior")):
            ordered = group.sort_values([column, "abbreviation"], ascending=[False, True], kind="mergesort")
            text = ", ".join(f"{a} ({v:.2f})" for a, v in zip(ordered["abbreviation"], ordered[column]))
            rows.append(
                {
                    "dataset": dataset,
                    "seed": seed,
                    "sorted_by": label,
                    "sorted": text,
                    "overlap": f"{100 * share:.0f}%" if label == "MR'" and not pd.isna(share) else "",
                    "negatives": negatives if label == "MR'" else "",
                }
            )
        present = set(group["model_class"])
        missing = [name for name in unavailable if name not in present]
        if missing:
            names = ", ".join(f"{ABBREVIATIONS.get(name, name)} ({name})" for name in missing)
            rows.append(
                {
                    "dataset": dataset,
                    "seed": seed,
                    "sorted_by": "not available",
                    "sorted": f"{names}: {NOT_AVAILABLE}",
                    "overlap": "",
                    "negatives": "",
                }
            )
    return pd.DataFrame(rows, columns=columns)


def write_table_timing(
    summary_path: str | os.PathLike,
    out: str | os.PathLike,
    paper_out: str | os.PathLike | None = None,
    unavailable: Sequence[str] = (),
) -> pd.DataFrame:
    """Read the collated summary and write Table 1 (:func:`table_timing`; :func:`table_timing_paper` if asked)."""
    table = table_timing(read_tsv(summary_path))
    write_tsv(table, out, sort_by=["dataset", "model", "seed"])
    if paper_out is not None:
        # rows in their order: methods, the unavailable ones, the negative counts
        write_tsv(table_timing_paper(table, unavailable), paper_out, sort_by=[])
    return table


def write_table_comparison(
    summary_path: str | os.PathLike,
    assessment_path: str | os.PathLike,
    comparison_out: str | os.PathLike,
    overlap_out: str | os.PathLike,
    paper_out: str | os.PathLike | None = None,
    unavailable: Sequence[str] = (),
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read the collated tables and write both parts of Table 2 (:func:`table_comparison`; the paper's layout,
    :func:`table_overlap_paper`, if asked)."""
    per_model, overlap = table_comparison(read_tsv(summary_path), read_tsv(assessment_path))
    write_tsv(per_model, comparison_out, sort_by=["dataset", "seed", "position_mr", "model"])
    write_tsv(overlap, overlap_out, sort_by=["dataset", "seed"])
    if paper_out is not None:
        write_tsv(table_overlap_paper(per_model, overlap, unavailable), paper_out, sort_by=[])
    return per_model, overlap


_LABELS = {"r2_w": r"$R^2_w$", "bs_w": r"$BS_w$", "ba": "BA", "pearson_r": r"$r_{xy}$", "tpr": "TPR", "tnr": "TNR"}
#: per figure: the metrics (panels) and the groups compared within each model
_FIGURES: dict[str, dict[str, Any]] = {
    "calibration": {
        "metrics": ("r2_w", "bs_w", "ba", "pearson_r"),
        "title": "Best calibration functions, LCWA negatives (test)",
    },
    "strategies": {
        "metrics": ("r2_w", "bs_w", "ba"),
        "title": "Best calibration functions: nonsensical (GB+LC) vs plausible (TC) negatives (test)",
    },
    "platt": {
        "metrics": ("r2_w", "bs_w", "ba", "pearson_r"),
        "title": "Platt scaling vs isotonic regression, LCWA negatives (test)",
    },
}


def _figure_data(figure: str, assessment: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Rows of the assessment table a figure shows, with a ``group`` column; and the groups in order."""
    a = assessment.copy()
    a["selected"] = a["selected"].astype(bool)
    if figure == "calibration":
        rows = a[a["selected"] & (a["strategy"] == "lcwa")].assign(group="selected")
        return rows, ["selected"]
    if figure == "strategies":
        rows = a[a["selected"] & a["strategy"].isin(["gb+lc", "tc"])].copy()
        rows["group"] = rows["strategy"].map({"gb+lc": "GB+LC", "tc": "TC"})
        return rows, ["GB+LC", "TC"]
    if figure == "platt":
        rows = a[a["strategy"] == "lcwa"].copy()
        rows["group"] = rows["method"].map({"isotonic": "isotonic", "platt": "Platt"})
        return rows, ["isotonic", "Platt"]
    raise ValueError(f"unknown S5 figure {figure!r}; use one of {sorted(_FIGURES)}")


def _five_numbers(values: np.ndarray, label: str) -> dict[str, Any]:
    """The paper's five-number summary as matplotlib ``bxp`` stats: min, Q1, mean (the box's line), Q3, max."""
    q1, q3 = np.quantile(values, [0.25, 0.75])
    return {
        "label": label,
        "whislo": values.min(),
        "q1": q1,
        "med": values.mean(),
        "q3": q3,
        "whishi": values.max(),
        "fliers": [],
    }


def plot_s5_figure(
    figure: str, assessment_path: str | os.PathLike, pdf: str | os.PathLike, png: str | os.PathLike
) -> None:
    """Figs. 1-3: five-number summaries per link-prediction method, aggregated over datasets and seeds.

    :param figure: ``calibration`` (Fig. 1), ``strategies`` (Fig. 2) or ``platt`` (Fig. 3)
    :param assessment_path: the collated assessment table
    """
    spec = _FIGURES.get(figure)
    if spec is None:
        raise ValueError(f"unknown S5 figure {figure!r}; use one of {sorted(_FIGURES)}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, groups = _figure_data(figure, read_tsv(assessment_path))
    models = sorted(rows["model_class"].unique())
    colours = plt.get_cmap("tab10")
    metrics = spec["metrics"]
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.6 * len(metrics), 3.8), squeeze=False)
    width = 0.8 / len(groups)
    for ax, metric in zip(axes[0], metrics):
        for g, group in enumerate(groups):
            stats, positions, points = [], [], []
            for m, model in enumerate(models):
                values = rows[(rows["model_class"] == model) & (rows["group"] == group) & (rows["metric"] == metric)][
                    "value"
                ].to_numpy(dtype=float)
                values = values[~np.isnan(values)]
                if not len(values):
                    continue
                position = m + (g - (len(groups) - 1) / 2) * width
                stats.append(_five_numbers(values, model))
                positions.append(position)
                points.append((np.full(len(values), position), values))
            if not stats:
                continue
            colour = colours(g)
            ax.bxp(
                stats,
                positions=positions,
                widths=width * 0.8,
                showfliers=False,
                patch_artist=True,
                boxprops={"facecolor": colour, "alpha": 0.45},
                medianprops={"color": "black"},
            )
            for x, y in points:
                ax.scatter(x, y, s=9, color=colour, edgecolor="black", linewidth=0.3, zorder=3)
            ax.plot([], [], color=colour, linewidth=6, alpha=0.45, label=group)
        ax.set_xticks(range(len(models)))
        ax.set_xticklabels(models, rotation=45, ha="right")
        ax.set_xlim(-0.6, len(models) - 0.4)
        ax.set_xlabel("link-prediction method")
        ax.set_ylabel(_LABELS.get(metric, metric))
        ax.grid(True, axis="y", alpha=0.3)
    if len(groups) > 1:
        axes[0][0].legend(loc="best", fontsize="small")
    fig.suptitle(
        spec["title"] + "\nbox: Q1-Q3, line: mean, whiskers: min-max, dots: datasets x seeds", fontsize="medium"
    )
    fig.tight_layout()
    for path in (pdf, png):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=150, format=os.path.splitext(str(path))[1].lstrip("."))
    plt.close(fig)


#: the two readings of t_A in the timing figure: (label, t_A column, %Delta t column)
TIMING_READINGS: tuple[tuple[str, str, str], ...] = (
    ("Sec. 6.3: fit + test posteriors", "t_a", "pct_delta_t"),
    ("end to end: + scoring validation negatives", "t_a_end_to_end", "pct_delta_t_end_to_end"),
)


def table_timing_figure(timing: pd.DataFrame) -> pd.DataFrame:
    """The table behind the timing figure: per dataset, method and reading, mean ``t_LP``, ``t_A`` and ``%Delta t``.

    Means over seeds; ``%Delta t = 100 (t_A - t_LP) / t_LP`` of the mean times is *not* used: the mean of the
    per-seed ``%Delta t`` is reported, as the bars show it.

    :param timing: the output of :func:`table_timing`
    :return: columns ``dataset, method, reading, t_lp, t_a, pct_delta_t, num_seeds``
    """
    frames = []
    for label, t_column, pct_column in TIMING_READINGS:
        grouped = timing.groupby(["dataset", "model_class"], sort=True)
        frame = grouped.agg(
            t_lp=("t_lp", "mean"),
            t_a=(t_column, "mean"),
            pct_delta_t=(pct_column, "mean"),
            num_seeds=("seed", "nunique"),
        ).reset_index()
        frame.insert(2, "reading", label)
        frames.append(frame)
    columns = ["dataset", "method", "reading", "t_lp", "t_a", "pct_delta_t", "num_seeds"]
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True).rename(columns={"model_class": "method"})[columns]


def plot_s5_timing(
    timing_path: str | os.PathLike,
    table_out: str | os.PathLike,
    pdf: str | os.PathLike,
    png: str | os.PathLike,
) -> pd.DataFrame:
    """%Delta t of both t_A readings per dataset and method (bars on a linear axis; negative: the alternative
    protocol is faster), and the table behind it (:func:`table_timing_figure`).

    :param timing: Table 1 (``s5/tables/table1_timing.tsv``)
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = table_timing_figure(read_tsv(timing_path))
    write_tsv(table, table_out, sort_by=["dataset", "method", "reading"])
    datasets = sorted(table["dataset"].unique())
    methods = sorted(table["method"].unique())
    readings = [label for label, _, _ in TIMING_READINGS]
    colours = plt.get_cmap("tab10")
    fig, axes = plt.subplots(
        1, max(1, len(datasets)), figsize=(0.9 + 0.75 * max(1, len(methods)) * max(1, len(datasets)), 4.2),
        squeeze=False, sharey=True,
    )
    width = 0.8 / len(readings)
    for ax, dataset in zip(axes[0], datasets):
        rows = table[table["dataset"] == dataset]
        for r, reading in enumerate(readings):
            values = rows[rows["reading"] == reading].set_index("method")["pct_delta_t"].reindex(methods)
            x = np.arange(len(methods)) + (r - (len(readings) - 1) / 2) * width
            ax.bar(x, values.to_numpy(dtype=float), width=width * 0.95, color=colours(r), label=reading)
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(methods)))
        ax.set_xticklabels(methods, rotation=45, ha="right")
        ax.set_title(dataset)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0][0].set_ylabel(r"$\%\Delta t = 100\,(t_A - t_{LP})/t_{LP}$")
    axes[0][0].legend(loc="best", fontsize="small")
    fig.suptitle("S5: time of the alternative protocol against rank evaluation (mean over seeds)", fontsize="medium")
    fig.tight_layout()
    for path in (pdf, png):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=150, format=os.path.splitext(str(path))[1].lstrip("."))
    plt.close(fig)
    return table
