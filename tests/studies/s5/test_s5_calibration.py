"""Calibration functions from streamed scores: exactness of the isotonic reduction, Platt's bound and descent."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from kgeval.studies.s5.calibration import PLATT_INITS, fit_isotonic, fit_platt
from kgeval.studies.s5.measures import in_sample_sums
from kgeval.studies.s5.statistics import CalibrationData
from s5_samples import dense_points, score_sample, streamed, weighted_metrics


@pytest.mark.parametrize("seed", range(5))
def test_streamed_isotonic_equals_all_at_once(seed):
    pos, neg, counts = score_sample(seed)
    data = streamed(pos, neg, counts, seed=seed)
    x, y, w = dense_points(pos, neg, counts)
    assert data.num_negatives == int(counts.sum())
    full = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(x, y, sample_weight=w)
    fitted = fit_isotonic(data)
    grid = np.concatenate([np.linspace(x.min() - 1, x.max() + 1, 5001), x, np.nextafter(x, np.inf)])
    np.testing.assert_allclose(fitted.predict(grid), full.predict(grid), rtol=0, atol=1e-12)
    # the reduced data set is O(#positives)
    assert len(data.isotonic_points()[0]) <= 3 * len(np.unique(pos)) + 2
    # in-sample measures from the reduction equal those from every point
    expected = weighted_metrics(y, full.predict(x), w)
    found = in_sample_sums(fitted, data).metrics()
    for key in ("bs_w", "r2_w", "tpr", "tnr", "ba"):
        assert found[key] == pytest.approx(expected[key], abs=1e-12)


def test_isotonic_predict_equals_sklearn_predict():
    pos, neg, counts = score_sample(9)
    calibrator = fit_isotonic(streamed(pos, neg, counts))
    grid = np.linspace(-8, 8, 1000).reshape(10, -1)
    # the same bits as scikit-learn's predict (numpy.interp), through the lookup grid
    assert np.array_equal(calibrator.predict(grid), calibrator.estimator.predict(grid.ravel()).reshape(grid.shape))


def test_predict_into_out_gives_the_same_bits():
    pos, neg, counts = score_sample(4)
    data = streamed(pos, neg, counts)
    scores = np.random.default_rng(0).normal(0, 3, 50_000)
    for calibrator in (fit_isotonic(data), fit_platt(data, PLATT_INITS[0])):
        out = np.full_like(scores, np.nan)
        assert calibrator.predict(scores, out=out) is out
        assert np.array_equal(out.view(np.uint64), calibrator.predict(scores).view(np.uint64)), calibrator.name
    a, b = calibrator.parameters()
    np.testing.assert_allclose(out, 1 / (1 + np.exp(-(a * scores + b))), rtol=1e-14, atol=0)


def _logistic_objective(a, b, x, y, w):
    z = a * x + b
    return float(w @ (np.logaddexp(0, z) - y * z))


def test_platt_within_stated_bound_of_all_at_once_fit():
    pos, neg, counts = score_sample(3)
    data = streamed(pos, neg, counts, num_bins=256)
    x, y, w = dense_points(pos, neg, counts)
    exact = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10000).fit(x.reshape(-1, 1), y, sample_weight=w)
    a_star, b_star = float(exact.coef_[0, 0]), float(exact.intercept_[0])
    a, b = fit_platt(data).parameters()
    h = data.histogram.width
    eps = max(abs(a), abs(a_star)) * h / 2  # objective bound per unit of negative weight (module docstring)
    gap = _logistic_objective(a, b, x, y, w) - _logistic_objective(a_star, b_star, x, y, w)
    assert -1e-9 <= gap <= 2 * eps + 1e-9
    assert a == pytest.approx(a_star, rel=0.05) and b == pytest.approx(b_star, rel=0.05, abs=0.05)


def test_platt_initialisation_enters_the_optimiser():
    pos, neg, counts = score_sample(4)
    data = streamed(pos, neg, counts)
    converged = [fit_platt(data, init=init).parameters() for init in PLATT_INITS]
    # convex objective: all six starts reach the same optimum
    np.testing.assert_allclose(converged, np.repeat(converged[:1], 6, axis=0), rtol=1e-4, atol=1e-6)
    # ... but the start is really used: one solver step from different starts ends in different places
    for solver in ("newton-cholesky", "lbfgs"):
        one_step = [fit_platt(data, init=init, max_iter=1, solver=solver).parameters() for init in PLATT_INITS]
        assert len({(round(a, 6), round(b, 6)) for a, b in one_step}) == len(PLATT_INITS)
        assert not fit_platt(data, init=(1.0, 0.0), max_iter=1, solver=solver).converged
    lbfgs = fit_platt(data, init=(-1.0, 1.0), solver="lbfgs").parameters()
    np.testing.assert_allclose(lbfgs, converged[0], rtol=1e-4, atol=1e-6)


def test_paper_procedure_six_fits_differ_and_converged_ones_agree():
    """The paper procedure (mini-batch descent on raw scores, epoch budget) leaves the six initialisations apart;
    the converged procedure brings them to one optimum."""
    from kgeval.studies.s5.calibration import fit_platt_sgd

    pos, neg, counts = score_sample(3)
    data = streamed(pos, neg, counts)
    paper = np.array([fit_platt_sgd(data, init, 0.01, 64, 2, seed=0).parameters() for init in PLATT_INITS])
    assert np.ptp(paper, axis=0).max() > 1e-2
    converged = np.array([fit_platt(data, init=init).parameters() for init in PLATT_INITS])
    assert np.ptp(converged, axis=0).max() < 1e-4
    # a long budget approaches the optimum
    long = fit_platt_sgd(data, PLATT_INITS[0], 0.05, 64, 300, seed=0).parameters()
    assert np.allclose(long, converged[0], atol=0.05)


def test_paper_procedure_is_deterministic_by_seed():
    from kgeval.studies.s5.calibration import fit_platt_sgd

    pos, neg, counts = score_sample(4)
    data = streamed(pos, neg, counts)
    first = fit_platt_sgd(data, (1.0, 0.0), 0.01, 32, 3, seed=[7, 1])
    again = fit_platt_sgd(data, (1.0, 0.0), 0.01, 32, 3, seed=[7, 1])
    other = fit_platt_sgd(data, (1.0, 0.0), 0.01, 32, 3, seed=[8, 1])
    assert first.parameters() == again.parameters() and first.parameters() != other.parameters()
    assert first.procedure == "paper" and first.describe()["procedure"] == "paper"


def test_paper_procedure_divergence_names_the_learning_rate():
    """A step far too large for the raw scores' scale overflows: a clear error names the config key to lower."""
    from kgeval.studies.s5.calibration import fit_platt_sgd

    pos, neg, counts = score_sample(5)
    data = streamed(pos * 1e150, neg * 1e150, counts)
    with pytest.raises(ValueError, match="studies.s5.platt.learning_rate"):
        fit_platt_sgd(data, (1.0, 0.0), 1e160, 32, 3, seed=0)


def test_platt_predict_is_the_logistic_sigmoid_to_rounding_with_its_limits():
    from scipy.special import expit
    from sklearn.linear_model import LogisticRegression

    from kgeval.studies.s5.calibration import Calibrator

    estimator = LogisticRegression()
    estimator.coef_, estimator.intercept_ = np.array([[0.7]]), np.array([-1.5])
    platt = Calibrator("platt(0,1)", "platt", estimator, init=(0.0, 1.0))
    scores = np.concatenate([np.linspace(-50, 50, 1001), [-1e6, 1e6]])
    got = platt.predict(scores)
    np.testing.assert_allclose(got, expit(0.7 * scores - 1.5), rtol=1e-14, atol=0.0)
    assert got[-2] == 0.0 and got[-1] == 1.0  # exp overflows to infinity: the posterior's limits, no NaN
    out = np.empty_like(scores)
    assert platt.predict(scores, out=out) is out and np.array_equal(out, got)


def test_predict_all_equals_each_calibrators_predict():
    from kgeval.studies.s5.calibration import fit_calibrators, predict_all
    from kgeval.studies.s5.statistics import CalibrationData

    rng = np.random.default_rng(3)
    data = CalibrationData(rng.normal(2.0, 1.0, 100), num_bins=32)
    data.add_negatives(rng.normal(0.0, 1.0, 2000))
    calibrators = fit_calibrators(data)
    assert {c.method for c in calibrators} == {"isotonic", "platt"}
    scores = np.concatenate([rng.normal(0.0, 3.0, 500), [-1e6, 1e6]])
    for order in (calibrators, calibrators[::-1], calibrators[1:2]):
        got = predict_all(order, scores, out=np.empty((len(order), len(scores))))
        for row, calibrator in zip(got, order):
            np.testing.assert_allclose(row, calibrator.predict(scores), rtol=1e-15, atol=0.0)
