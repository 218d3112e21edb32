"""S5's candidate calibration functions on validation (paper 004, Sec. 3, 6.1, 6.2): the fit of
isotonic regression and of the six Platt functions under each configured procedure, the in-sample selection, and
the out-of-sample check on a held-out share of the validation split.

**Procedures** (``studies.s5.platt.procedure``, :mod:`kgeval.studies.s5.calibration`): ``converged`` fits each
initialisation to the optimum (``platt_converged(a,b)``; the six coincide), ``paper`` runs the paper's mini-batch
gradient descent from each (``platt_paper(a,b)``; the budget leaves them apart), ``both`` runs both. Every function
is a candidate of the validation selection by ``R2_w`` (Sec. 6.2); ``calibrators.tsv`` has a ``procedure`` column.

**Held-out share** (``studies.s5.holdout_fraction``): :func:`split_holdout` draws that share of the validation triples
(seeded; at least one triple stays in the fit). The functions are fitted on the rest, with the LCWA negatives of the
fitted triples filtered by train + the *whole* validation split (Eq. 12 as without a held-out share: a held-out triple
is a known positive, never a negative). The held-out triples' negatives are formed the same way (their LCWA corruptions
filtered by train + the whole validation split), scored with the same weights of Eq. 11, and give the ``holdout_*``
columns of ``calibrators.tsv`` (:func:`holdout_columns`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from kgeval.studies.s5.calibration import Calibrator, fit_isotonic, fit_platt, fit_platt_sgd
from kgeval.studies.s5.measures import CalibrationSums, select_calibrator
from kgeval.studies.s5.settings import S5Settings
from kgeval.studies.s5.statistics import CalibrationData

__all__ = ["HOLDOUT_METRICS", "split_holdout", "fit_platt_procedure", "fit_candidates", "holdout_columns"]

#: the measures of the held-out share copied into ``calibrators.tsv`` (as ``holdout_<metric>``)
HOLDOUT_METRICS: tuple[str, ...] = ("r2_w", "bs_w", "ba", "num_positives", "num_negatives")


def split_holdout(num_triples: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the validation triples kept for the fit and of those held out (both sorted).

    :param num_triples: validation triples
    :param fraction: share held out, ``round(fraction * n)``, at most ``n - 1`` (one triple always stays in the fit)
    :param seed: seed of the draw
    """
    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"holdout_fraction must lie in [0, 1), got {fraction}")
    held = min(int(round(fraction * num_triples)), max(num_triples - 1, 0))
    order = np.random.default_rng([int(seed), 1]).permutation(num_triples)
    return np.sort(order[held:]), np.sort(order[:held])


def fit_platt_procedure(data: CalibrationData, settings: S5Settings, procedure: str, index: int) -> Calibrator:
    """The Platt function of one procedure from initialisation ``settings.platt_inits[index]``, named
    ``platt_<procedure>(a,b)``; the paper procedure's mini-batch order is seeded by ``[settings.seed, index]``."""
    a, b = settings.platt_inits[index]
    if procedure == "converged":
        calibrator = fit_platt(data, init=(a, b))
    elif procedure == "paper":
        p = settings.platt
        calibrator = fit_platt_sgd(data, (a, b), p.learning_rate, p.batch_size, p.epochs, seed=[settings.seed, index])
    else:
        raise ValueError(f"unknown Platt procedure {procedure!r}")
    calibrator.name = f"platt_{procedure}({a:g},{b:g})"
    return calibrator


def fit_candidates(
    data: CalibrationData, settings: S5Settings
) -> tuple[list[Calibrator], Calibrator, pd.DataFrame, dict[str, float]]:
    """``t_fit_all``: isotonic regression and the Platt functions of every procedure, each fit timed, and the
    selection by validation ``R2_w``.

    :return: the candidates, the selected one, their table and the fit timings (``t_fit_all``, ``t_fit_isotonic``,
        ``t_fit_platt`` (all procedures), ``t_fit_platt_<procedure>``, ``t_fit_selected``, ``t_select``)
    """
    fit_times: dict[str, float] = {}
    start_all = time.perf_counter()
    start = time.perf_counter()
    calibrators = [fit_isotonic(data)]
    fit_times["isotonic"] = time.perf_counter() - start
    times = {}
    for procedure in settings.platt.procedures:
        start_procedure = time.perf_counter()
        for index in range(len(settings.platt_inits)):
            start = time.perf_counter()
            calibrator = fit_platt_procedure(data, settings, procedure, index)
            fit_times[calibrator.name] = time.perf_counter() - start
            calibrators.append(calibrator)
        times[f"t_fit_platt_{procedure}"] = time.perf_counter() - start_procedure
    start = time.perf_counter()
    best, table = select_calibrator(calibrators, data)
    times["t_select"] = time.perf_counter() - start
    times["t_fit_all"] = time.perf_counter() - start_all
    times["t_fit_isotonic"] = fit_times["isotonic"]
    times["t_fit_platt"] = sum(v for k, v in fit_times.items() if k != "isotonic")
    times["t_fit_selected"] = fit_times[best.name]
    return calibrators, best, table, times


def holdout_columns(
    table: pd.DataFrame, calibrators: Sequence[Calibrator], sums: Mapping[str, CalibrationSums] | None
) -> pd.DataFrame:
    """``table`` (one row per calibrator) with ``holdout_<metric>`` columns (:data:`HOLDOUT_METRICS`) from each
    calibrator's sums on the held-out share (negatives and positives added); NaN when nothing is held out.

    :param sums: calibrator name -> its sums on the held-out share, or None
    """
    table = table.copy()
    for metric in HOLDOUT_METRICS:
        table[f"holdout_{metric}"] = np.nan
    if sums:
        for calibrator in calibrators:
            measures = sums[calibrator.name].metrics()
            row = table["calibrator"] == calibrator.name
            for metric in HOLDOUT_METRICS:
                table.loc[row, f"holdout_{metric}"] = measures[metric]
    return table
