"""S5's candidate calibration functions on validation (paper 004, Sec. 3, 6.1, 6.2): the fit of
isotonic regression and of the six Platt functions under each configured procedure, the in-sample selection, and
the out-of-sample check on a held-out share of the validation split.

**Procedures** (``studies.s5.platt.procedure``, :mod:`kgeval.studies.s5.calibration`): ``converged`` fits each
initialisation to the optimum (``platt_converged(a,b)``; the six coincide), ``paper`` runs the paper's mini-batch
gradient descent from each (``platt_paper(a,b)``; the budget leaves them apart), ``both`` runs both. Every function
is a candidate of the validation selection by ``R2_w`` (Sec. 6.2); ``calibrators.tsv`` has a ``procedure`` column.
Whether the paper procedure's six fits differ is decided by its budget (learning rate, batch size, epochs; the paper
gives none), so :func:`budget_columns` also records them after 10 and 100 times the epochs (untimed, not candidates).

**Held-out share** (``studies.s5.holdout_fraction``): :func:`split_holdout` draws that share of the validation triples
(seeded; at least one triple stays in the fit). The functions are fitted on the rest, with the LCWA negatives of the
fitted triples filtered by train + the *whole* validation split (Eq. 12 as without a held-out share: a held-out triple
is a known positive, never a negative). The held-out triples' negatives are formed the same way (their LCWA corruptions
filtered by train + the whole validation split) less every negative of the fitted triples (``exclude`` of
:class:`~kgeval.studies.s5.negatives.NegativeSet`: triples that share a query with a fitted triple, or that a fitted
triple's query of the other side reaches), so that no negative is both fitted and assessed; they are scored with the
weights of Eq. 11 and give the ``holdout_*`` columns of ``calibrators.tsv`` (:func:`holdout_columns`).
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

__all__ = [
    "HOLDOUT_METRICS",
    "BUDGET_MULTIPLES",
    "split_holdout",
    "fit_platt_procedure",
    "fit_candidates",
    "holdout_columns",
    "platt_paper_budgets",
    "budget_columns",
]

#: the measures of the held-out share copied into ``calibrators.tsv`` (as ``holdout_<metric>``)
HOLDOUT_METRICS: tuple[str, ...] = ("r2_w", "bs_w", "ba", "num_positives", "num_negatives")
#: the multiples of the paper procedure's epoch budget at which its six fits are read (1: the fits themselves)
BUDGET_MULTIPLES: tuple[int, ...] = (1, 10, 100)


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
    calibrator's sums on the held-out share (negatives and positives added); NaN when nothing is held out, and for
    a calibrator without sums.

    :param sums: calibrator name -> its sums on the held-out share, or None
    """
    table = table.copy()
    for metric in HOLDOUT_METRICS:
        table[f"holdout_{metric}"] = np.nan
    if sums:
        for calibrator in calibrators:
            if calibrator.name not in sums:
                continue
            measures = sums[calibrator.name].metrics()
            row = table["calibrator"] == calibrator.name
            for metric in HOLDOUT_METRICS:
                table.loc[row, f"holdout_{metric}"] = measures[metric]
    return table


def platt_paper_budgets(
    data: CalibrationData, settings: S5Settings, multiples: Sequence[int] = BUDGET_MULTIPLES
) -> np.ndarray:
    """``(a, b)`` of the paper procedure from every initialisation after each multiple of its epoch budget.

    The descent of :func:`~kgeval.studies.s5.calibration.fit_platt_sgd` from all initialisations side by side, each
    in its own visiting order (seeded by ``[settings.seed, index]``, as :func:`fit_platt_procedure`), run once to the
    largest multiple and read at every one: a multiple of one gives the paper procedure's fits (to the rounding of
    the batch sums). Learning rate and batch size stay as configured; only the epochs grow.

    :return: shape: (initialisations, multiples, 2); NaN where a descent has left the finite numbers
    """
    from scipy.special import expit

    p = settings.platt
    x, y, weight = data.platt_points()
    weight = weight / weight.sum()
    inits = np.asarray(settings.platt_inits, dtype=np.float64).reshape(-1, 2)
    a, b = inits[:, 0].copy(), inits[:, 1].copy()
    rngs = [np.random.default_rng([settings.seed, index]) for index in range(len(inits))]
    read_at = {int(m) * p.epochs: j for j, m in enumerate(multiples)}
    out = np.full((len(inits), len(read_at), 2), np.nan)
    n, size = len(x), int(p.batch_size)
    with np.errstate(over="ignore", invalid="ignore"):
        for epoch in range(1, max(read_at, default=0) + 1):
            order = np.stack([rng.permutation(n) for rng in rngs])
            xs, ys, ws = x[order], y[order], weight[order]  # shape: (initialisations, n), each in its order
            for start in range(0, n, size):
                xb, cut = xs[:, start : start + size], slice(start, start + size)
                # each row as one mini-batch step of fit_platt_sgd: the batch's gradient scaled by n / |batch|
                residual = ws[:, cut] * (expit(a[:, None] * xb + b[:, None]) - ys[:, cut]) * (n / xb.shape[1])
                a = a - p.learning_rate * np.einsum("ij,ij->i", residual, xb)
                b = b - p.learning_rate * residual.sum(axis=1)
            if epoch in read_at:
                out[:, read_at[epoch], 0], out[:, read_at[epoch], 1] = a, b
    out[~np.isfinite(out)] = np.nan
    return out


def budget_columns(table: pd.DataFrame, data: CalibrationData, settings: S5Settings) -> pd.DataFrame:
    """``table`` (one row per calibrator) with the paper procedure's budget: ``learning_rate``, ``batch_size``,
    ``epochs`` and, per multiple ``m`` of :data:`BUDGET_MULTIPLES` above one, ``a_epochs_x<m>`` and
    ``b_epochs_x<m>`` (:func:`platt_paper_budgets`); NaN in the other rows and when the procedure is not run."""
    table = table.copy()
    multiples = [m for m in BUDGET_MULTIPLES if m != 1]
    for column in ("learning_rate", "batch_size", "epochs", *(f"{v}_epochs_x{m}" for m in multiples for v in "ab")):
        table[column] = np.nan
    if "paper" not in settings.platt.procedures:
        return table
    values = platt_paper_budgets(data, settings, multiples)
    p = settings.platt
    for index, (a0, b0) in enumerate(settings.platt_inits):
        row = table["calibrator"] == f"platt_paper({a0:g},{b0:g})"
        table.loc[row, ["learning_rate", "batch_size", "epochs"]] = (p.learning_rate, p.batch_size, p.epochs)
        for j, m in enumerate(multiples):
            table.loc[row, [f"a_epochs_x{m}", f"b_epochs_x{m}"]] = values[index, j]
    return table
