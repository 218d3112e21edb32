"""Calibration functions fitted from streamed scores (S5, paper 004, Sec. 2.2, 3, 4): isotonic regression and
Platt scaling, on the statistics of :mod:`kgeval.studies.s5.statistics` (which explains both reductions).

A calibration function ``f`` maps a link-prediction score ``x`` to a posterior ``f(x)``: the probability that the
triple is a positive. It is fitted on the validation positives and *all* their LCWA negatives with the weights of
Eq. 11, ``w+ = 1/|G_VA|`` per positive and ``w- = 1/|N|`` per negative, so both classes weigh one in total.

**Platt initialisations (exact fit).** The paper fits six Platt functions with the initial ``(a, b)`` among the ordered pairs
of distinct values of ``{-1, 0, 1}`` (:data:`PLATT_INITS`). Here each initial pair is set as ``coef_`` and
``intercept_`` of a :class:`sklearn.linear_model.LogisticRegression` with ``warm_start=True`` (no penalty), which
is where scikit-learn starts its optimiser (Newton-Cholesky by default; L-BFGS, a gradient method closer to the
paper's "gradient descent", gives the same optimum, more slowly). The unpenalised weighted logistic loss
is convex, so every initialisation converges to the same optimum up to the solver tolerance unless the iteration
limit stops it first; we record iterations and convergence. Platt's own target smoothing (``(N+ + 1)/(N+ + 2)``)
is not used: the paper does not mention it. The pipeline fits it from each initialisation as the ``converged``
procedure (:mod:`kgeval.studies.s5.fitting`).

**The paper's procedure (``studies.s5.platt.procedure: paper``).** The paper learns Platt scaling by gradient
descent from each of the six initialisations, and Fig. 3 shows the spread of the six functions: with a finite
budget the starting point matters. It gives no learning rate, batch size or
stopping rule. :func:`fit_platt_sgd` reads "gradient descent ... batches of scores can be provided" (Sec. 3) as plain
mini-batch gradient descent on the *raw* scores (no standardisation), from each initialisation, for a fixed number
of epochs: every epoch visits the Platt points (positives and the negatives' histogram bins, Eq. 11 weights
normalised to sum one) in a seeded random order, and each mini-batch steps by ``learning_rate`` times its share
of the gradient scaled to the whole loss (an unbiased estimate). Deterministic for a given seed. The
``converged`` procedure is :func:`fit_platt` from each initialisation: the six coincide up to the solver
tolerance."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kgeval.studies.s5.interpolation import GridInterpolation
from kgeval.studies.s5.statistics import CalibrationData

# scikit-learn and SciPy are imported by the functions that fit and predict, not here.
if TYPE_CHECKING:
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

__all__ = [
    "PLATT_INITS",
    "Calibrator",
    "fit_isotonic",
    "fit_platt",
    "fit_platt_sgd",
    "PlattGD",
    "fit_calibrators",
    "predict_all",
]

#: the six initial (a, b) of the paper's Platt functions: ordered pairs of distinct values of {-1, 0, 1}
PLATT_INITS: tuple[tuple[float, float], ...] = (
    (-1.0, 0.0),
    (-1.0, 1.0),
    (0.0, -1.0),
    (0.0, 1.0),
    (1.0, -1.0),
    (1.0, 0.0),
)


@dataclass
class Calibrator:
    """A fitted calibration function.

    :ivar name: ``isotonic`` or ``platt(a0,b0)`` with the initial parameters
    :ivar method: ``isotonic`` or ``platt``
    :ivar estimator: the fitted scikit-learn estimator
    :ivar init: Platt's initial ``(a, b)``; None for isotonic regression
    :ivar converged: whether the optimiser converged (always True for isotonic regression)
    :ivar procedure: how it was learnt: ``pava`` (isotonic), ``converged``, ``paper`` or ``gd`` (Platt)
    """

    name: str
    method: str
    estimator: IsotonicRegression | LogisticRegression
    init: tuple[float, float] | None = None
    converged: bool = True
    procedure: str = "pava"
    _interpolation: GridInterpolation | None = field(default=None, init=False, repr=False, compare=False)

    def predict(self, scores: Any, out: np.ndarray | None = None) -> np.ndarray:
        """Posterior probabilities of scores of any shape (same shape, float64).

        Isotonic regression: linear interpolation between the fitted thresholds, clipped to the fitted range (what
        :meth:`IsotonicRegression.predict` computes, via :func:`numpy.interp`; here the same bits through a lookup
        grid, :class:`~kgeval.studies.s5.interpolation.GridInterpolation`). Platt: ``sigmoid(a x + b)``, computed
        as ``1 / (1 + exp(-(a x + b)))`` with NumPy's vectorised ``exp`` (within a few units in the last place of
        :func:`scipy.special.expit`; ``exp`` overflows to infinity where the posterior is 0, as it should).

        :param out: float64 array of the scores' shape to write the posteriors into (no temporaries for Platt);
            the values are the same bits either way
        """
        if hasattr(scores, "detach"):
            scores = scores.detach().cpu().numpy()
        scores = np.asarray(scores, dtype=np.float64)
        if self.method == "isotonic":
            if self._interpolation is None:
                est = self.estimator
                self._interpolation = GridInterpolation(est.X_thresholds_, est.y_thresholds_)
            return self._interpolation(scores, out=out)
        a, b = self.parameters()
        if out is None:
            out = np.empty(scores.shape, dtype=np.float64)
        # -(a x + b) = (-a) x - b exactly (negation is exact), then 1 / (1 + exp(.)), each in place
        np.multiply(scores, -a, out=out)
        out -= b
        with np.errstate(over="ignore"):
            np.exp(out, out=out)
        out += 1.0
        return np.reciprocal(out, out=out)

    def parameters(self) -> tuple[float, float]:
        """Platt's fitted ``(a, b)``."""
        if self.method == "isotonic":
            raise ValueError("only Platt scaling has parameters (a, b)")
        return float(self.estimator.coef_[0, 0]), float(self.estimator.intercept_[0])

    def describe(self) -> dict[str, Any]:
        """Parameters for tables: a, b, initial values, iterations, convergence, number of thresholds."""
        info: dict[str, Any] = {
            "calibrator": self.name,
            "method": self.method,
            "procedure": self.procedure,
            "converged": self.converged,
        }
        if self.method != "isotonic":
            a, b = self.parameters()
            info.update(
                a=a,
                b=b,
                a0=self.init[0],
                b0=self.init[1],
                n_iter=int(np.max(self.estimator.n_iter_)),
                num_thresholds=np.nan,
            )
        else:
            info.update(
                a=np.nan,
                b=np.nan,
                a0=np.nan,
                b0=np.nan,
                n_iter=np.nan,
                num_thresholds=len(self.estimator.X_thresholds_),
            )
        return info


def fit_isotonic(data: CalibrationData) -> Calibrator:
    """Exact isotonic regression (increasing, clipped to [0, 1]) on all scores, via the reduction (module docstring)."""
    from sklearn.isotonic import IsotonicRegression

    x, y, weight = data.isotonic_points()
    estimator = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
    estimator.fit(x, y, sample_weight=weight)
    return Calibrator(name="isotonic", method="isotonic", estimator=estimator)


def fit_platt(
    data: CalibrationData,
    init: tuple[float, float] = (0.0, 0.0),
    max_iter: int = 1000,
    tol: float = 1e-8,
    solver: str = "newton-cholesky",
) -> Calibrator:
    """Platt scaling ``sigmoid(a x + b)``: an unpenalised weighted logistic regression started at ``init``.

    :param data: the statistics (positives exact, negatives at histogram bin centres; bound in module docstring)
    :param init: initial ``(a, b)``, set as the estimator's ``coef_``/``intercept_`` with ``warm_start=True``
    :param max_iter: iteration limit of the solver
    :param tol: the solver's stopping tolerance
    :param solver: a scikit-learn solver that honours ``warm_start`` (``newton-cholesky``: a few Newton steps on
        two parameters, faster here than ``lbfgs``, which reaches the same optimum)
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    x, y, weight = data.platt_points()
    # normalise the weights to mean one: same minimiser, and the solver's tolerance becomes scale-free
    weight = weight * (len(weight) / weight.sum())
    estimator = LogisticRegression(C=np.inf, solver=solver, max_iter=max_iter, tol=tol, warm_start=True)
    estimator.coef_ = np.array([[float(init[0])]])
    estimator.intercept_ = np.array([float(init[1])])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        estimator.fit(x.reshape(-1, 1), y, sample_weight=weight)
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    name = f"platt({init[0]:g},{init[1]:g})"
    return Calibrator(
        name=name,
        method="platt",
        estimator=estimator,
        init=(float(init[0]), float(init[1])),
        converged=converged,
        procedure="converged",
    )


@dataclass
class PlattGD:
    """Parameters of a Platt function learnt by gradient descent, shaped like scikit-learn's fitted attributes.

    :ivar coef_: shape (1, 1): ``a``
    :ivar intercept_: shape (1,): ``b``
    :ivar n_iter_: shape (1,): steps taken
    :ivar loss_: final weighted mean log-loss
    :ivar grad_norm_: final gradient norm of the full loss
    """

    coef_: np.ndarray
    intercept_: np.ndarray
    n_iter_: np.ndarray
    loss_: float
    grad_norm_: float


def fit_platt_sgd(
    data: CalibrationData,
    init: tuple[float, float],
    learning_rate: float,
    batch_size: int,
    epochs: int,
    seed: int | Sequence[int],
) -> Calibrator:
    """Platt scaling learnt by the paper's procedure as kgeval reads it (module docstring): mini-batch gradient
    descent on the raw scores from ``init``, ``epochs`` passes in a seeded order, no stopping rule.

    :param data: the statistics (the same points as :func:`fit_platt`)
    :param init: initial ``(a, b)``
    :param learning_rate: step size (raw score units)
    :param batch_size: points per mini-batch
    :param epochs: epoch budget
    :param seed: seed of the visiting order, an int or a sequence of ints (the same seed gives the same function)
    :raises ValueError: when the descent diverges (a, b or the loss not finite), naming the learning rate
    """
    from scipy.special import expit

    x, y, weight = data.platt_points()
    weight = weight / weight.sum()
    rng = np.random.default_rng(seed)
    a, b = float(init[0]), float(init[1])
    n = len(x)
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(int(epochs)):
            order = rng.permutation(n)
            for start in range(0, n, int(batch_size)):
                batch = order[start : start + int(batch_size)]
                # the batch's share of the full gradient, scaled up by n / |batch| (an unbiased estimate)
                residual = weight[batch] * (expit(a * x[batch] + b) - y[batch]) * (n / len(batch))
                a -= learning_rate * float(residual @ x[batch])
                b -= learning_rate * float(residual.sum())
        t = a * x + b
        loss = float(weight @ (np.logaddexp(0.0, t) - y * t))
        residual = weight * (expit(t) - y)
    grad_norm = float(np.hypot(residual @ x, residual.sum()))
    if not np.isfinite([a, b, loss]).all():
        raise ValueError(
            f"Platt scaling by the paper procedure diverged from {tuple(init)} (a={a}, b={b}, loss={loss}) with "
            f"learning_rate {learning_rate} on scores in [{x.min():.3g}, {x.max():.3g}]; lower "
            "studies.s5.platt.learning_rate in the config"
        )
    estimator = PlattGD(
        coef_=np.array([[a]]),
        intercept_=np.array([b]),
        n_iter_=np.array([int(epochs) * -(-n // int(batch_size))]),
        loss_=loss,
        grad_norm_=grad_norm,
    )
    return Calibrator(
        name=f"platt_paper({init[0]:g},{init[1]:g})",
        method="platt",
        estimator=estimator,  # type: ignore[arg-type]
        init=(float(init[0]), float(init[1])),
        converged=bool(grad_norm < 1e-6),
        procedure="paper",
    )


def fit_calibrators(
    data: CalibrationData, platt_inits: Sequence[Sequence[float]] = PLATT_INITS, isotonic: bool = True
) -> list[Calibrator]:
    """Isotonic regression and one Platt function per initialisation, all on the same statistics."""
    calibrators = [fit_isotonic(data)] if isotonic else []
    calibrators.extend(fit_platt(data, init=(float(a), float(b))) for a, b in platt_inits)
    return calibrators


def predict_all(calibrators: Sequence[Calibrator], scores: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Every calibrator's posteriors of one array of scores: ``out[i] = calibrators[i].predict(scores)``.

    Consecutive Platt functions are applied together (one broadcast pass of each operation of
    :meth:`Calibrator.predict` for all of them), the others one by one; each value is computed by the same
    operations as :meth:`Calibrator.predict`.

    :param scores: shape: (n,) float64
    :param out: shape: (len(calibrators), n) float64
    """
    index = 0
    while index < len(calibrators):
        stop = index
        while stop < len(calibrators) and calibrators[stop].method == "platt":
            stop += 1
        if stop - index < 2:
            calibrators[index].predict(scores, out=out[index])
            index += 1
            continue
        params = np.array([c.parameters() for c in calibrators[index:stop]])
        run = out[index:stop]
        np.multiply(scores[None, :], -params[:, :1], out=run)
        run -= params[:, 1:]
        with np.errstate(over="ignore"):
            np.exp(run, out=run)
        run += 1.0
        np.reciprocal(run, out=run)
        index = stop
    return out
