"""Calibration from streamed scores: exactness of the isotonic reduction, Platt's bound, the weighted measures."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score, brier_score_loss, r2_score

from kgeval.studies.s5.calibration import (
    PLATT_INITS,
    CalibrationData,
    CalibrationSums,
    StreamingHistogram,
    _GapLocator,
    fit_calibrators,
    fit_isotonic,
    fit_platt,
    fit_platt_gd,
    in_sample_sums,
    select_calibrator,
    weighted_metrics,
)


def _scores(seed: int, num_pos: int = 60, num_neg: int = 4000):
    """Positives higher than negatives on average, with exact ties (rounding) and multiplicities."""
    rng = np.random.default_rng(seed)
    pos = np.round(rng.normal(1.0, 1.0, num_pos), 2)
    neg = np.round(rng.normal(-1.0, 1.5, num_neg), 2)
    neg[:20] = pos[:20]  # negatives tied with positives
    counts = rng.integers(0, 4, num_neg)  # multiplicities, zeros included
    return pos, neg, counts


def _stream(pos, neg, counts, num_bins=2**10, chunks=7, seed=0):
    data = CalibrationData(pos, num_bins=num_bins)
    order = np.random.default_rng(seed).permutation(len(neg))
    for part in np.array_split(order, chunks):
        data.add_negatives(neg[part], counts[part])
    return data


def _dense(pos, neg, counts):
    """All points at once with the weights of Eq. 11 (negatives repeated by their counts)."""
    neg_all = np.repeat(neg, counts)
    x = np.concatenate([pos, neg_all])
    y = np.concatenate([np.ones(len(pos)), np.zeros(len(neg_all))])
    w = np.concatenate([np.full(len(pos), 1 / len(pos)), np.full(len(neg_all), 1 / len(neg_all))])
    return x, y, w


@pytest.mark.parametrize("seed", range(5))
def test_streamed_isotonic_equals_all_at_once(seed):
    pos, neg, counts = _scores(seed)
    data = _stream(pos, neg, counts, seed=seed)
    x, y, w = _dense(pos, neg, counts)
    assert data.num_negatives == int(counts.sum())
    full = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(x, y, sample_weight=w)
    streamed = fit_isotonic(data)
    grid = np.concatenate([np.linspace(x.min() - 1, x.max() + 1, 5001), x, np.nextafter(x, np.inf)])
    np.testing.assert_allclose(streamed.predict(grid), full.predict(grid), rtol=0, atol=1e-12)
    # the reduced data set is O(#positives)
    assert len(data.isotonic_points()[0]) <= 3 * len(np.unique(pos)) + 2
    # in-sample measures from the reduction equal those from every point
    expected = weighted_metrics(y, full.predict(x), w)
    found = in_sample_sums(streamed, data).metrics()
    for key in ("bs_w", "r2_w", "tpr", "tnr", "ba"):
        assert found[key] == pytest.approx(expected[key], abs=1e-12)


def test_isotonic_predict_equals_sklearn_predict():
    pos, neg, counts = _scores(9)
    calibrator = fit_isotonic(_stream(pos, neg, counts))
    grid = np.linspace(-8, 8, 1000).reshape(10, -1)
    np.testing.assert_allclose(
        calibrator.predict(grid), calibrator.estimator.predict(grid.ravel()).reshape(grid.shape), atol=1e-15
    )


def test_gap_locator_matches_binary_search():
    rng = np.random.default_rng(1)
    values = np.unique(np.round(rng.normal(size=300), 3))
    probes = np.concatenate(
        [values, np.nextafter(values, -np.inf), np.nextafter(values, np.inf), rng.normal(0, 3, 20000), [-1e9, 1e9]]
    )
    index, tied = _GapLocator(values).locate(probes)
    tied = np.isin(np.arange(len(probes)), tied)
    np.testing.assert_array_equal(index, np.searchsorted(values, probes, side="left"))
    np.testing.assert_array_equal(tied, np.isin(probes, values))
    # a single distinct positive score
    index, tied = _GapLocator(np.array([2.0])).locate(np.array([1.0, 2.0, 3.0]))
    tied = np.isin(np.arange(3), tied)
    np.testing.assert_array_equal(index, [0, 0, 1])
    np.testing.assert_array_equal(tied, [False, True, False])


def test_streaming_histogram_counts_and_bound():
    rng = np.random.default_rng(2)
    histogram = StreamingHistogram(num_bins=64)
    chunks = [rng.uniform(0, 1, 500), rng.uniform(-30, -29, 500), rng.uniform(100, 101, 500), rng.normal(0, 5, 500)]
    counts = [rng.integers(1, 3, 500) for _ in chunks]
    for values, c in zip(chunks, counts):
        histogram.add(values, c)
    values, c = np.concatenate(chunks), np.concatenate(counts)
    assert histogram.counts.sum() == c.sum()
    bins = np.floor((values - histogram.lo) / histogram.width).astype(int)
    assert bins.min() >= 0 and bins.max() < histogram.num_bins
    np.testing.assert_array_equal(np.bincount(bins, weights=c, minlength=64), histogram.counts)
    assert np.abs(values - histogram.centres[bins]).max() <= histogram.error_bound * (1 + 1e-9)
    # width after doubling is at most twice what the final range needs
    assert histogram.width <= 2 * (values.max() - values.min()) / 64 * (1 + 1e-6)


def _logistic_objective(a, b, x, y, w):
    z = a * x + b
    return float(w @ (np.logaddexp(0, z) - y * z))


def test_platt_within_stated_bound_of_all_at_once_fit():
    pos, neg, counts = _scores(3)
    data = _stream(pos, neg, counts, num_bins=256)
    x, y, w = _dense(pos, neg, counts)
    exact = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10000).fit(x.reshape(-1, 1), y, sample_weight=w)
    a_star, b_star = float(exact.coef_[0, 0]), float(exact.intercept_[0])
    a, b = fit_platt(data).parameters()
    h = data.histogram.width
    eps = max(abs(a), abs(a_star)) * h / 2  # objective bound per unit of negative weight (module docstring)
    gap = _logistic_objective(a, b, x, y, w) - _logistic_objective(a_star, b_star, x, y, w)
    assert -1e-9 <= gap <= 2 * eps + 1e-9
    assert a == pytest.approx(a_star, rel=0.05) and b == pytest.approx(b_star, rel=0.05, abs=0.05)


def test_platt_initialisation_enters_the_optimiser():
    pos, neg, counts = _scores(4)
    data = _stream(pos, neg, counts)
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


def test_hand_computed_weighted_measures():
    y = np.array([1, 1, 0, 0, 0])
    p = np.array([0.9, 0.4, 0.2, 0.6, 0.0])
    w = np.array([1 / 2, 1 / 2, 1 / 3, 1 / 3, 1 / 3])  # Eq. 11
    m = weighted_metrics(y, p, w)
    # squared errors 0.01, 0.36 | 0.04, 0.36, 0; weighted sum 0.37/2 + 0.40/3; total weight 2
    assert m["bs_w"] == pytest.approx((0.37 / 2 + 0.40 / 3) / 2)
    # extension, y_bar = weighted mean label = 1/2, sum w (y_bar - y)^2 = 2 * 0.25
    assert m["r2_w_label_mean"] == pytest.approx(1 - (0.37 / 2 + 0.40 / 3) / 0.5)
    # Eq. 8: y_bar = weighted mean posterior = (1.3/2 + 0.8/3) / 2, sum w (y_bar - y)^2 = (1 - y_bar)^2 + y_bar^2
    y_bar = (1.3 / 2 + 0.8 / 3) / 2
    assert m["r2_w"] == pytest.approx(1 - (0.37 / 2 + 0.40 / 3) / ((1 - y_bar) ** 2 + y_bar**2))
    assert m["tpr"] == pytest.approx(1 / 2) and m["tnr"] == pytest.approx(2 / 3)
    assert m["ba"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    unweighted = weighted_metrics(y, p)
    assert unweighted["bs_w"] == pytest.approx(0.77 / 5)
    assert unweighted["r2_w_label_mean"] == pytest.approx(1 - 0.77 / (2 * 0.6**2 + 3 * 0.4**2))
    assert unweighted["r2_w"] == pytest.approx(1 - 0.77 / (2 * (1 - 0.42) ** 2 + 3 * 0.42**2))
    # scikit-learn agrees (its R^2 centres on the label mean: our extension column)
    assert m["bs_w"] == pytest.approx(brier_score_loss(y, p, sample_weight=w))
    assert m["r2_w_label_mean"] == pytest.approx(r2_score(y, p, sample_weight=w))
    assert m["ba"] == pytest.approx(balanced_accuracy_score(y, p >= 0.5))


def test_calibration_sums_equal_explicit_weights():
    rng = np.random.default_rng(5)
    p_pos, p_neg = rng.uniform(size=13), rng.uniform(size=(4, 9))
    mask, counts = rng.uniform(size=(4, 9)) < 0.6, np.array([1, 2, 0, 3])
    sums = CalibrationSums()
    sums.add_positives(p_pos[:6])
    sums.add_positives(p_pos[6:])
    sums.add_negative_matrix(p_neg, mask, counts)
    flat = np.repeat(p_neg, counts, axis=0)[np.repeat(mask, counts, axis=0)]
    y = np.concatenate([np.ones(13), np.zeros(len(flat))])
    w = np.concatenate([np.full(13, 1 / 13), np.full(len(flat), 1 / len(flat))])
    expected = weighted_metrics(y, np.concatenate([p_pos, flat]), w)
    found = sums.metrics()
    for key in expected:
        assert found[key] == pytest.approx(expected[key])
    assert found["r2_w_label_mean"] == pytest.approx(1 - 4 * found["bs_w"])
    assert found["r2_w"] >= found["r2_w_label_mean"]
    assert found["mean_posterior"] == pytest.approx(p_pos.mean())
    # one class missing: measures that need both are NaN
    only = CalibrationSums()
    only.add_positives(p_pos)
    assert np.isnan(only.metrics()["bs_w"]) and np.isnan(only.metrics()["tnr"]) and only.metrics()["tpr"] >= 0


def test_select_calibrator_takes_best_r2():
    pos, neg, counts = _scores(6)
    data = _stream(pos, neg, counts)
    calibrators = fit_calibrators(data)
    assert [c.name for c in calibrators][0] == "isotonic" and len(calibrators) == 7
    best, table = select_calibrator(calibrators, data)
    assert table.loc[table["selected"], "r2_w"].item() == table["r2_w"].max()
    assert best.name == table.loc[table["r2_w"].idxmax(), "calibrator"]
    # isotonic regression minimises the in-sample Brier score among monotone functions, Platt included: it is best
    # by construction only under the label-mean extension (1 - 4 BS_w); Eq. 8's R2_w may pick either
    iso = table[table["method"] == "isotonic"]
    assert iso["r2_w_label_mean"].item() == pytest.approx(table["r2_w_label_mean"].max())
    assert iso["bs_w"].item() == pytest.approx(table["bs_w"].min())


def test_r2_w_eq8_on_a_hand_example():
    """3 positives and 9 negatives with Eq. 11 weights: Eq. 8 computed directly vs the streamed sums.

    Both readings of y_bar are asserted: the weighted label mean (1/2) gives 1 - 4 BS_w = 7/18 = 0.3889; the weighted
    posterior mean of Eq. 8 (here 11/30) gives 1 - 2 BS_w / ((19/30)^2 + (11/30)^2) = 0.4295 (the issue's pair).
    """
    p_pos = np.array([0.5, 0.5, 0.5])
    # negatives chosen so that BS_w = 11/72 and the weighted mean posterior is 11/30: sum 2.1, sum of squares 0.5
    c = 0.7 / 3
    # equal +/- spread keeps the mean; rescale the spread so that the sum of squares is exactly 0.5
    d = np.sqrt((0.5 - 9 * c**2) / 6)
    p_neg = np.concatenate([np.full(3, c - d), np.full(3, c + d), np.full(3, c)])
    assert p_neg.sum() == pytest.approx(2.1) and (p_neg**2).sum() == pytest.approx(0.5)
    y = np.concatenate([np.ones(3), np.zeros(9)])
    p = np.concatenate([p_pos, p_neg])
    w = np.concatenate([np.full(3, 1 / 3), np.full(9, 1 / 9)])
    # Eq. 8 directly
    y_bar = (w @ p) / w.sum()
    assert y_bar == pytest.approx(11 / 30)
    direct = 1 - (w @ (p - y) ** 2) / (w @ (y_bar - y) ** 2)
    label_mean = 1 - (w @ (p - y) ** 2) / (w @ (0.5 - y) ** 2)
    assert direct == pytest.approx(0.4295, abs=5e-5)
    assert label_mean == pytest.approx(7 / 18) and label_mean == pytest.approx(0.3889, abs=5e-5)
    m = weighted_metrics(y, p, w)
    assert m["r2_w"] == pytest.approx(direct) and m["r2_w_label_mean"] == pytest.approx(label_mean)
    sums = CalibrationSums()
    sums.add_positives(p_pos)
    sums.add_negatives(p_neg[:4])
    sums.add_negative_matrix(p_neg[4:].reshape(1, -1), np.ones((1, 5), dtype=bool), np.array([1]))
    found = sums.metrics()
    assert found["r2_w"] == pytest.approx(direct) and found["r2_w_label_mean"] == pytest.approx(label_mean)
    assert found["y_bar"] == pytest.approx(11 / 30) and found["bs_w"] == pytest.approx(11 / 72)


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="at least one positive"):
        CalibrationData([])
    data = CalibrationData([0.5, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        data.add_negatives([0.1, np.nan])
    with pytest.raises(ValueError, match="no negatives"):
        fit_isotonic(data)
    with pytest.raises(ValueError, match="even"):
        StreamingHistogram(3)


def test_chunked_add_equals_single_add():
    pos, neg, counts = _scores(8)
    whole = CalibrationData(pos)
    whole.add_negatives(neg, counts)
    pieces = CalibrationData(pos)
    pieces.max_chunk = 97  # many internal chunks
    pieces.add_negatives(neg, counts)
    for name in ("tie_counts", "gap_counts", "gap_min", "gap_max"):
        np.testing.assert_array_equal(getattr(whole, name), getattr(pieces, name))
    np.testing.assert_array_equal(whole.histogram.counts.sum(), pieces.histogram.counts.sum())


def test_platt_gradient_descent_from_six_starts():
    """Small step budget: the six Platt functions differ (Fig. 3); large budget: all reach the exact optimum."""
    rng = np.random.default_rng(11)
    data = CalibrationData(rng.normal(2.0, 1.0, 60), num_bins=256)
    data.add_negatives(rng.normal(-1.0, 1.5, 3000))
    exact = np.array(fit_platt(data).parameters())
    few = [fit_platt_gd(data, init=init, steps=5) for init in PLATT_INITS]
    params = np.array([c.parameters() for c in few])
    assert len({(round(a, 4), round(b, 4)) for a, b in params}) == len(PLATT_INITS)
    assert not any(c.converged for c in few)
    assert np.abs(params - exact).max() > 0.1
    many = [fit_platt_gd(data, init=init, steps=3000) for init in PLATT_INITS]
    for calibrator in many:
        np.testing.assert_allclose(calibrator.parameters(), exact, rtol=1e-4, atol=1e-4)
        assert calibrator.converged and calibrator.describe()["n_iter"] == 3000
    # the same function as sigmoid(a x + b) in the scores' own units
    a, b = many[0].parameters()
    np.testing.assert_allclose(many[0].predict([0.5, -2.0]), 1 / (1 + np.exp(-(a * np.array([0.5, -2.0]) + b))))
