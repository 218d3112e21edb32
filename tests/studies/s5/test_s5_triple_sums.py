"""S5's per-test-triple sums (:mod:`kgeval.studies.s5.triple_sums`): the per-query sums add up to the streamed totals
(1e-12), each triple gets its own negatives, and the bootstrap over test triples equals a brute-force resample of
the rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.lp.filtering import as_triples_array
from kgeval.lp.scoring import make_scorer
from kgeval.studies.s5.assessment import assess_negatives, rank_posterior_correlation, score_triples
from kgeval.studies.s5.calibration import fit_isotonic, fit_platt, fit_platt_sgd
from kgeval.studies.s5.measures import SUM_FIELDS, negative_feature_totals, weighted_measures
from kgeval.studies.s5.negatives import STRATEGIES, NegativeSet
from kgeval.studies.s5.statistics import CalibrationData
from kgeval.studies.s5.triple_sums import (
    TripleSums,
    calibrator_replicates,
    column,
    correlation_replicates,
    measure_intervals,
    measure_replicates,
    negative_feature_rows,
    run_stream_seed,
    sums_matrix,
)
from kgeval.uncertainty.resampling import BootstrapSettings, percentile_interval, resample_indices
from s5_samples import nations_complex, score_sample, streamed

BOOT = BootstrapSettings(resamples=40, permutations=10, level=0.9, seed=3)
RUN = ("nations", "complex", "0")


def _calibrators():
    pos, neg, counts = score_sample(0)
    data = streamed(pos, neg, counts)
    return [fit_isotonic(data), fit_platt(data, (1.0, 0.0))]


@pytest.mark.parametrize("entities, block", [(7, 2**14), (7, 10), (50, 16), (50, 2**14)])
def test_feature_rows_add_up_to_the_feature_totals(entities, block):
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(9, entities))
    weights = (rng.uniform(size=(3, scores.size)) < 0.6) * rng.integers(1, 4, size=(3, 1))
    calibrators = _calibrators()
    rows = negative_feature_rows(scores, weights.astype(float), calibrators, 0.5, block=block)
    assert rows.shape == (2, 3, 9, 3)
    totals = negative_feature_totals(scores.reshape(-1), weights.astype(float), calibrators, 0.5)
    np.testing.assert_allclose(rows.sum(axis=2), totals, rtol=1e-12)
    # row by row: the plain weighted sums of that query's posteriors
    p = calibrators[1].predict(scores[4])
    w = weights[2].reshape(9, entities)[4]
    np.testing.assert_allclose(rows[1, 2, 4], [w @ p, w @ p**2, w @ (p < 0.5)], rtol=1e-12)


@pytest.fixture(scope="module")
def nations():
    data, model = nations_complex()
    train, valid, test = (as_triples_array(f.mapped_triples) for f in (data.training, data.validation, data.testing))
    fit_data = CalibrationData(score_triples(model, valid))
    fit_data.add_negatives(score_triples(model, NegativeSet(valid, [train, valid], 14, 55).enumerate("lcwa")))
    calibrators = [fit_isotonic(fit_data), fit_platt_sgd(fit_data, (1.0, 0.0), 0.01, 64, 2, seed=0)]
    return data, model, (train, valid, test), calibrators


@pytest.mark.parametrize("union", [True, False])
def test_per_triple_sums_add_up_to_the_streamed_totals(nations, union):
    data, model, (train, valid, test), calibrators = nations
    negatives = NegativeSet(test, [train, valid, test], data.num_entities, data.num_relations, union=union)
    scorer = make_scorer(model)
    plain = assess_negatives(scorer, negatives, calibrators, STRATEGIES, batch_size=6)
    per_triple = TripleSums(negatives, calibrators, STRATEGIES)
    kept = assess_negatives(scorer, negatives, calibrators, STRATEGIES, batch_size=6, per_triple=per_triple)
    posteriors = {c.name: c.predict(score_triples(model, test)) for c in calibrators}
    per_triple.add_positives(posteriors)
    frame = per_triple.frame()
    assert len(frame) == len(test) and (frame[["head", "relation", "tail"]].to_numpy() == test).all()
    for c in calibrators:
        for strategy in STRATEGIES:
            for field in ("num_neg", "neg_sq_error", "neg_hits", "neg_posterior"):
                a, b = getattr(kept[(c.name, strategy)], field), getattr(plain[(c.name, strategy)], field)
                assert a == pytest.approx(b, rel=1e-12, abs=1e-12), (c.name, strategy, field)
            # the point values of assessment.tsv are the per-triple sums' totals
            sums = kept[(c.name, strategy)]
            sums.add_positives(posteriors[c.name])
            expected = sums.metrics()
            found = weighted_measures(*sums_matrix(frame, c.name, strategy).sum(axis=0))
            for metric, value in expected.items():
                if np.isnan(value):
                    assert np.isnan(found[metric]), (c.name, strategy, metric)
                else:
                    assert float(found[metric]) == pytest.approx(value, rel=1e-12, abs=1e-15), (c.name, strategy, metric)
    # each triple's share: with union False its own negatives on both sides (rank evaluation's |N^s(t)| + |N^o(t)|)
    if not union:
        per_query = negatives.count_per_query("lcwa")
        own = np.zeros(len(test))
        for side, anchor in (("tail", 0), ("head", 2)):
            queries = negatives.queries[side]
            keys = {(a, r): i for i, (a, r) in enumerate(zip(queries.anchors, queries.relations))}
            own += [per_query[side][keys[(t[anchor], t[1])]] for t in test]
        np.testing.assert_allclose(frame[column("num_neg", "lcwa")], own, rtol=1e-12)


def _sums_frame(n: int = 80, seed: int = 0) -> pd.DataFrame:
    """Synthetic per-triple sums of two calibrators and two strategies (one sometimes empty)."""
    rng = np.random.default_rng(seed)
    frame = {"head": np.arange(n), "relation": np.zeros(n, int), "tail": np.arange(n)}
    for strategy, rate in (("lcwa", 30.0), ("gb", 0.05)):
        frame[column("num_neg", strategy)] = rng.poisson(rate, n).astype(float)
    for name in ("isotonic", "platt(1,0)"):
        frame[column("pos_posterior", name)] = rng.beta(5, 2, n)
        for strategy in ("lcwa", "gb"):
            count = frame[column("num_neg", strategy)]
            p = rng.beta(1, 6, n)
            frame[column("neg_posterior", name, strategy)] = count * p
            frame[column("neg_sq_error", name, strategy)] = count * p**2 * 1.2
            frame[column("neg_hits", name, strategy)] = np.floor(count * 0.9)
    return pd.DataFrame(frame)


def _brute_force(frame: pd.DataFrame, calibrator: str, strategy: str, idx: np.ndarray) -> dict:
    """A measure recomputed on the rows resampled by index, from the sums' definitions."""
    part = frame.iloc[idx]
    p = part[column("pos_posterior", calibrator)].to_numpy()
    sums = {
        "num_pos": float(len(p)),
        "pos_sq_error": float(np.sum((1 - p) ** 2)),
        "pos_hits": float(np.sum(p >= 0.5)),
        "pos_posterior": float(np.sum(p)),
        "num_neg": float(part[column("num_neg", strategy)].sum()),
        "neg_sq_error": float(part[column("neg_sq_error", calibrator, strategy)].sum()),
        "neg_hits": float(part[column("neg_hits", calibrator, strategy)].sum()),
        "neg_posterior": float(part[column("neg_posterior", calibrator, strategy)].sum()),
    }
    return weighted_measures(*(sums[f] for f in SUM_FIELDS))


def test_replicates_and_intervals_equal_a_brute_force_resample_of_the_rows():
    frame = _sums_frame()
    seed = run_stream_seed(BOOT, RUN)
    idx = np.concatenate(list(resample_indices(len(frame), BOOT.resamples, seed)))
    reps = measure_replicates(frame, "platt(1,0)", "lcwa", BOOT.resamples, seed)
    for b in (0, 17, 39):
        expected = _brute_force(frame, "platt(1,0)", "lcwa", idx[b])
        for metric in ("bs_w", "r2_w", "ba", "y_bar", "tpr", "tnr"):
            assert reps[metric][b] == pytest.approx(float(expected[metric]), rel=1e-12), (b, metric)
    relative = pd.DataFrame({"relative_rank_head": np.random.default_rng(2).uniform(size=len(frame)),
                             "relative_rank_tail": np.random.default_rng(3).uniform(size=len(frame))})
    intervals = measure_intervals(frame, BOOT, RUN, relative).set_index(["calibrator", "strategy", "metric"]).sort_index()
    assert len(intervals.loc[("isotonic", "gb")]) == len(intervals.loc[("isotonic", "lcwa")]) - 1  # r_xy on LCWA only
    for calibrator in ("isotonic", "platt(1,0)"):
        for strategy in ("lcwa", "gb"):
            brute = [_brute_force(frame, calibrator, strategy, row) for row in idx]
            point = _brute_force(frame, calibrator, strategy, np.arange(len(frame)))
            for metric in ("bs_w", "r2_w", "ba", "y_bar"):
                row = intervals.loc[(calibrator, strategy, metric)]
                low, high = percentile_interval(np.array([float(x[metric]) for x in brute]), BOOT.level)
                assert row["value"] == pytest.approx(float(point[metric]), rel=1e-12)
                assert (row["low"], row["high"]) == pytest.approx((low, high), rel=1e-12, nan_ok=True)
        # r_xy: the pairs of the resampled rows, both sides of a triple together
        posteriors = frame[column("pos_posterior", calibrator)].to_numpy()
        brute = [
            rank_posterior_correlation({s: relative[f"relative_rank_{s}"].to_numpy()[row] for s in ("head", "tail")},
                                       posteriors[row])
            for row in idx
        ]
        row = intervals.loc[(calibrator, "lcwa", "pearson_r")]
        assert (row["low"], row["high"]) == pytest.approx(percentile_interval(np.array(brute), BOOT.level), rel=1e-9)
        positives = relative.assign(posterior_x=posteriors)
        reps = correlation_replicates(positives, "x", BOOT.resamples, run_stream_seed(BOOT, RUN))
        np.testing.assert_allclose(reps, brute, rtol=1e-9)


def test_calibrator_replicates_resample_every_pair_on_the_same_triples():
    frame = _sums_frame()
    seed = run_stream_seed(BOOT, RUN)
    idx = np.concatenate(list(resample_indices(len(frame), BOOT.resamples, seed)))
    pairs = [("isotonic", "lcwa"), ("platt(1,0)", "gb"), ("platt(1,0)", "lcwa")]
    reps = calibrator_replicates(frame, pairs, BOOT.resamples, seed)
    for b in (0, 21):
        for calibrator, strategy in pairs:
            expected = _brute_force(frame, calibrator, strategy, idx[b])
            assert reps[(calibrator, strategy)]["r2_w"][b] == pytest.approx(float(expected["r2_w"]), rel=1e-12)


def test_a_class_left_empty_by_a_resample_gives_nan_replicates():
    frame = _sums_frame(n=30)
    frame[column("num_neg", "gb")] = 0.0
    frame.loc[4, column("num_neg", "gb")] = 1.0
    for name in ("isotonic", "platt(1,0)"):
        for field in ("neg_posterior", "neg_sq_error", "neg_hits"):
            frame[column(field, name, "gb")] = np.where(frame[column("num_neg", "gb")] > 0, 0.1, 0.0)
    reps = measure_replicates(frame, "isotonic", "gb", 200, 0)
    idx = np.concatenate(list(resample_indices(30, 200, 0)))
    empty = (idx == 4).sum(axis=1) == 0  # the one triple with a GB negative left out
    assert empty.any() and (~empty).any()
    assert np.isnan(reps["bs_w"][empty]).all() and np.isfinite(reps["bs_w"][~empty]).all()
