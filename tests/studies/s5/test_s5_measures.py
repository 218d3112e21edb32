"""The weighted measures (Eq. 7-9, 11, 16, 17) and the selection of the best calibration function."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, brier_score_loss, r2_score

from kgeval.studies.s5.calibration import fit_calibrators
from kgeval.studies.s5.measures import CalibrationSums, negative_feature_totals, select_calibrator
from s5_samples import score_sample, streamed, weighted_metrics


def test_hand_computed_weighted_measures():
    """The reference measures the streamed sums are checked against (``s5_samples.weighted_metrics``): by hand and
    by scikit-learn."""
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
    pos, neg, counts = score_sample(6)
    data = streamed(pos, neg, counts)
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


def test_r2_w_readings_of_y_bar_match_explicit_formulas():
    """Eq. 8's other readings: y_bar the plain mean of all posteriors, and Eq. 10's mean of the positives."""
    from kgeval.studies.s5.measures import CalibrationSums

    pos, neg = np.array([0.9, 0.6, 0.8]), np.array([0.1, 0.3, 0.2, 0.05, 0.4])
    sums = CalibrationSums()
    sums.add_positives(pos)
    sums.add_negatives(neg)
    m = sums.metrics()
    y = np.r_[np.ones(3), np.zeros(5)]
    p = np.r_[pos, neg]
    w = np.r_[np.full(3, 1 / 3), np.full(5, 1 / 5)]
    for key, y_bar in (("r2_w_unweighted_mean", p.mean()), ("r2_w_positive_mean", pos.mean())):
        expected = 1 - (w @ (p - y) ** 2) / (w @ (y_bar - y) ** 2)
        assert m[key] == pytest.approx(expected)


@pytest.mark.parametrize("block", [7, 1000, 2**14])
def test_negative_feature_totals_equal_plain_sums(block):
    """Block by block, the weighted sums of p, p^2 and hits of every calibrator equal the plain sums (hits exactly)."""
    pos, neg, counts = score_sample(5)
    calibrators = fit_calibrators(streamed(pos, neg, counts))
    rng = np.random.default_rng(1)
    scores = rng.normal(-1, 2, 3001)
    weights = rng.integers(0, 3, (4, scores.size)) * (rng.random((4, scores.size)) < 0.6)
    totals = negative_feature_totals(scores, weights.astype(float), calibrators, 0.5, block=block)
    assert totals.shape == (len(calibrators), 4, 3)
    for index, calibrator in enumerate(calibrators):
        p = calibrator.predict(scores)
        for row in range(4):
            w = weights[row]
            assert totals[index, row, 0] == pytest.approx(float(np.sum(w * p)), rel=1e-13)
            assert totals[index, row, 1] == pytest.approx(float(np.sum(w * p * p)), rel=1e-13)
            assert totals[index, row, 2] == int(np.sum(w * (p < 0.5)))
