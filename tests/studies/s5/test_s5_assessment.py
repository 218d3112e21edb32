"""S5 end to end on a small real model: streamed scores, the test assessment, timing and the per-model tables."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import pearsonr
from sklearn.isotonic import IsotonicRegression

from kgeval.lp.filtering import as_triples_array
from kgeval.lp.scoring import make_scorer
from kgeval.studies.s5.assessment import (
    assess_negatives,
    rank_posterior_correlation,
    relative_ranks,
    run_s5,
    score_triples,
    stream_calibration_data,
)
from kgeval.studies.s5.calibration import fit_isotonic, fit_platt_sgd
from kgeval.studies.s5.measures import CalibrationSums
from kgeval.studies.s5.negatives import STRATEGIES, NegativeSet
from kgeval.studies.s5.settings import S5Settings
from kgeval.studies.s5.statistics import CalibrationData
from kgeval.studies.s5.triple_sums import measure_intervals
from kgeval.uncertainty.resampling import BootstrapSettings
from s5_samples import nations_complex, s5_section, weighted_metrics


@pytest.fixture(scope="module")
def nations():
    return nations_complex()


def _splits(data):
    return [as_triples_array(f.mapped_triples) for f in (data.training, data.validation, data.testing)]


@pytest.mark.parametrize("union", [True, False])
def test_streamed_scores_are_the_scores_of_the_enumerated_negatives(nations, union):
    data, model = nations
    train, valid, _ = _splits(data)
    negatives = NegativeSet(valid, [train, valid], data.num_entities, data.num_relations, union=union)
    positive_scores = score_triples(model, valid)
    streamed = stream_calibration_data(make_scorer(model), negatives, positive_scores, batch_size=7)
    # brute force: enumerate every negative triple, score it on its own, fit isotonic regression on everything
    triples = negatives.enumerate("lcwa")
    assert streamed.num_negatives == len(triples) == negatives.count("lcwa")
    negative_scores = score_triples(model, triples)
    x = np.concatenate([positive_scores, negative_scores])
    y = np.concatenate([np.ones(len(valid)), np.zeros(len(triples))])
    w = np.concatenate([np.full(len(valid), 1 / len(valid)), np.full(len(triples), 1 / len(triples))])
    full = IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1).fit(x, y, sample_weight=w)
    grid = np.linspace(x.min() - 1, x.max() + 1, 2001)
    # the matrix scorer and predict_hrt agree to float32 rounding, so compare the fitted functions, not thresholds
    reference = CalibrationData(positive_scores)
    reference.add_negatives(negative_scores)
    np.testing.assert_allclose(fit_isotonic(reference).predict(grid), full.predict(grid), atol=1e-12)
    np.testing.assert_allclose(fit_isotonic(streamed).predict(grid), full.predict(grid), atol=2e-3)


@pytest.mark.parametrize("union", [True, False])
def test_assessment_product_equals_masked_sums(nations, union):
    """The matrix-product sums equal the plain masked sums per (calibrator, strategy), with multiplicities."""
    data, model = nations
    train, valid, test = _splits(data)
    fit_data = CalibrationData(score_triples(model, valid))
    fit_data.add_negatives(score_triples(model, NegativeSet(valid, [train, valid], 14, 55).enumerate("lcwa")))
    calibrators = [fit_isotonic(fit_data), fit_platt_sgd(fit_data, (1.0, 0.0), 0.01, 64, 2, seed=0)]
    negatives = NegativeSet(test, [train, valid, test], data.num_entities, data.num_relations, union=union)
    scorer = make_scorer(model)
    found = assess_negatives(scorer, negatives, calibrators, STRATEGIES, batch_size=6)
    expected = {(c.name, s): CalibrationSums() for c in calibrators for s in STRATEGIES}
    masks = {s: negatives.masks(s) for s in STRATEGIES}
    multiplicities = set()
    for batch in negatives.batches(6):
        scores = scorer.score(batch.side, torch.as_tensor(batch.anchors), torch.as_tensor(batch.relations)).numpy()
        multiplicities.update(batch.multiplicity.tolist())
        for c in calibrators:
            p = c.predict(scores)
            for s in STRATEGIES:
                selected = batch.negatives(masks[s])
                for row in range(len(p)):
                    expected[(c.name, s)].add_negatives(p[row][selected[row]], np.full(selected[row].sum(), batch.multiplicity[row]))
    assert (max(multiplicities) > 1) == (not union)
    for key, sums in expected.items():
        for field in ("num_neg", "neg_sq_error", "neg_hits", "neg_posterior"):
            assert getattr(found[key], field) == pytest.approx(getattr(sums, field), rel=1e-12, abs=1e-9), (key, field)


def test_assessment_matches_brute_force(nations):
    data, model = nations
    train, valid, test = _splits(data)
    fit_data = CalibrationData(score_triples(model, valid))
    fit_data.add_negatives(score_triples(model, NegativeSet(valid, [train, valid], 14, 55).enumerate("lcwa")))
    calibrator = fit_isotonic(fit_data)
    negatives = NegativeSet(test, [train, valid, test], data.num_entities, data.num_relations)
    sums = assess_negatives(make_scorer(model), negatives, [calibrator], STRATEGIES, batch_size=5)
    positives = calibrator.predict(score_triples(model, test))
    for strategy in STRATEGIES:
        triples = negatives.enumerate(strategy)
        s = sums[(calibrator.name, strategy)]
        s.add_positives(positives)
        found = s.metrics()
        assert found["num_negatives"] == len(triples)
        if not len(triples):
            assert np.isnan(found["bs_w"]) and np.isnan(found["tnr"])
            continue
        p = np.concatenate([positives, calibrator.predict(score_triples(model, triples))])
        y = np.concatenate([np.ones(len(test)), np.zeros(len(triples))])
        w = np.concatenate([np.full(len(test), 1 / len(test)), np.full(len(triples), 1 / len(triples))])
        expected = weighted_metrics(y, p, w)
        for key in ("bs_w", "r2_w", "tpr", "tnr", "ba"):
            # scores of the matrix scorer and of predict_hrt differ in the last float32 bits
            assert found[key] == pytest.approx(expected[key], abs=5e-3), (strategy, key)


def test_run_s5_on_a_trained_model(nations):
    data, model = nations
    section = {**s5_section(), "holdout_fraction": 0.2}
    result = run_s5(model, data, S5Settings.from_config(section, memory_budget_mb=1, device="cpu"))
    summary = dict(zip(result.summary["metric"], result.summary["value"]))
    train, valid, test = _splits(data)
    # the fit uses the validation triples outside the held-out share; negatives filtered by the whole validation split
    from kgeval.studies.s5.fitting import split_holdout

    fit_rows, held_rows = split_holdout(len(valid), 0.2, 0)
    assert len(held_rows) == round(0.2 * len(valid))
    assert summary["num_valid_negatives"] == NegativeSet(valid[fit_rows], [train, valid], 14, 55).count("lcwa")
    # the test negatives of every strategy are counted, so that an empty strategy shows in the tables
    test_negatives = NegativeSet(test, [train, valid, test], 14, 55)
    for strategy in STRATEGIES:
        assert summary[f"num_test_negatives_{strategy}"] == test_negatives.count(strategy)
    # three separate timings: t_LP, t_A (Sec. 6.3: statistics + selected fit + test posteriors), end to end (+ scoring)
    for key in ("t_lp", "t_a", "t_a_end_to_end", "pct_delta_t", "pct_delta_t_end_to_end", "t_score", "t_stats"):
        assert key in summary and np.isfinite(summary[key])
    # the run's own ranks per triple (Table 2's overlap resamples them): their mean is the summary's MR
    both = result.positives[["rank_head", "rank_tail"]].to_numpy()
    assert both.mean() == pytest.approx(summary["mr"], rel=1e-12)
    assert summary["ns_per_valid_negative"] == pytest.approx(1e9 * summary["t_stats"] / summary["num_valid_negatives"])
    assert summary["ns_per_lp_candidate"] == pytest.approx(1e9 * summary["t_lp"] / (2 * len(test) * 14))
    assert summary["t_score"] > 0 and summary["t_stats"] > 0
    assert summary["t_a"] == pytest.approx(summary["t_stats"] + summary["t_fit_selected"] + summary["t_posteriors"])
    assert summary["t_a_end_to_end"] == pytest.approx(
        summary["t_score"] + summary["t_stats"] + summary["t_fit_selected"] + summary["t_posteriors"]
    )
    assert summary["t_a_all_fits"] == pytest.approx(summary["t_stats"] + summary["t_fit_all"] + summary["t_posteriors"])
    # scoring and the statistics pass, timed apart inside one streamed loop, add up to the loop's wall time
    assert summary["t_score"] + summary["t_stats"] == pytest.approx(summary["t_validation_pass"], rel=0.05)
    assert summary["timer_resolution"] > 0
    # t_A excludes the non-selected fits: the selected fit is one of the seven, all seven plus selection are more
    assert summary["t_fit_isotonic"] + summary["t_fit_platt"] <= summary["t_fit_all"]
    assert summary["t_fit_selected"] < summary["t_fit_isotonic"] + summary["t_fit_platt"]
    selected = result.calibrators.loc[result.calibrators["selected"], "method"].item()
    if selected == "isotonic":
        assert summary["t_fit_selected"] == summary["t_fit_isotonic"]
    else:
        assert summary["t_fit_selected"] < summary["t_fit_platt"]
    assert summary["t_a"] < summary["t_a_all_fits"]
    assert summary["pct_delta_t"] == pytest.approx(100 * (summary["t_a"] - summary["t_lp"]) / summary["t_lp"])
    assert summary["pct_delta_t_end_to_end"] == pytest.approx(
        100 * (summary["t_a_end_to_end"] - summary["t_lp"]) / summary["t_lp"]
    )
    # one isotonic and six Platt functions per procedure (default both: converged and paper), all candidates
    c = result.calibrators
    assert len(c) == 13 and c["selected"].sum() == 1
    assert (c["method"] == "platt").sum() == 12
    assert c.loc[c["method"] == "platt", "procedure"].value_counts().to_dict() == {"converged": 6, "paper": 6}
    assert {"t_fit_platt_converged", "t_fit_platt_paper"} <= set(summary)
    # the held-out share of validation: the best function of each method and procedure assessed on it (LCWA, out
    # of sample), the others not
    best = set()
    for (method, procedure), rows in c.groupby(["method", "procedure"]):
        best.add(rows.loc[rows["r2_w"].idxmax(), "calibrator"])
    held_out = c.set_index("calibrator")["holdout_r2_w"]
    assert held_out[sorted(best)].notna().all() and held_out.drop(sorted(best)).isna().all()
    c_best = c[c["calibrator"].isin(best)]
    assert (c_best["holdout_num_positives"] == len(held_rows)).all()
    # its negatives are disjoint from the fit's: the held-out triples' LCWA negatives less every fitted negative
    fit_set = NegativeSet(valid[fit_rows], [train, valid], 14, 55)
    held_set = NegativeSet(valid[held_rows], [train, valid], 14, 55, exclude=fit_set)
    fitted = {tuple(t) for t in fit_set.enumerate("lcwa").tolist()}
    held = {tuple(t) for t in held_set.enumerate("lcwa").tolist()}
    every = {tuple(t) for t in NegativeSet(valid[held_rows], [train, valid], 14, 55).enumerate("lcwa").tolist()}
    assert held and not held & fitted and held == every - fitted and every & fitted
    assert len(held) == held_set.count("lcwa") and (c_best["holdout_num_negatives"] == len(held)).all()
    # the paper procedure's budget and its six fits at 10 and 100 times the epochs, in its rows only
    paper = c[c["procedure"] == "paper"]
    assert (paper["epochs"] == 10).all() and paper[["a_epochs_x10", "b_epochs_x100"]].notna().to_numpy().all()
    assert c.loc[c["procedure"] != "paper", "a_epochs_x100"].isna().all()
    # every Platt function is assessed on test (Fig. 3 shows the six of each procedure)
    assert result.assessment.loc[result.assessment["method"] == "platt", "calibrator"].nunique() == 12
    best = result.assessment[result.assessment["best_of_method"].astype(bool)]
    assert best.groupby(["method", "procedure"])["calibrator"].nunique().to_dict() == {
        ("isotonic", "pava"): 1, ("platt", "converged"): 1, ("platt", "paper"): 1
    }
    assert {"posterior_platt_converged", "posterior_platt_paper"} <= set(result.positives)
    a = result.assessment
    assert set(a["strategy"]) == set(STRATEGIES)
    assert set(a["method"]) == {"isotonic", "platt"}
    lcwa = a[(a["strategy"] == "lcwa") & (a["metric"] == "num_negatives")]["value"]
    assert (lcwa == NegativeSet(test, [train, valid, test], 14, 55).count("lcwa")).all()
    # the per-triple sums add up to every value of the assessment (1e-12), r_xy from them and the relative ranks too
    sums = result.triple_sums
    assert len(sums) == len(test) and (sums[["head", "relation", "tail"]].to_numpy() == test).all()
    intervals = measure_intervals(sums, BootstrapSettings(5, 1, 0.95, 0), ("nations", "complex", "0"), result.positives)
    merged = a.merge(intervals, on=["calibrator", "strategy", "metric"], suffixes=("", "_sums"), validate="1:1")
    assert len(merged) == len(a) and set(a["calibrator"]) == set(c["calibrator"])
    finite = merged["value"].notna()
    assert (merged.loc[~finite, "value_sums"].isna()).all()
    # atol for the measures 1 - x near 0; r_xy from the pairs' sums (x^2 / n - mean^2) against numpy's centred
    # corrcoef: rounding differs more
    for pearson, rtol in ((False, 1e-12), (True, 1e-8)):
        rows = merged[finite & ((merged["metric"] == "pearson_r") == pearson)]
        np.testing.assert_allclose(rows["value_sums"], rows["value"], rtol=rtol, atol=1e-14)
    # the correlation is that of the posteriors and the relative ranks stored per test triple
    pos = result.positives
    for method in ("isotonic", "platt"):
        # the positives table keeps the posteriors of the best function of each method (by validation R2_w)
        c_m = c[c["method"] == method]
        best_name = c_m.loc[c_m["r2_w"].idxmax(), "calibrator"]
        r = a[(a["calibrator"] == best_name) & (a["metric"] == "pearson_r")]["value"].item()
        x = np.concatenate([pos["relative_rank_head"], pos["relative_rank_tail"]])
        y = np.concatenate([pos[f"posterior_{method}"]] * 2)
        assert r == pytest.approx(pearsonr(x[~np.isnan(x)], y[~np.isnan(x)]).statistic)


def test_relative_ranks_and_correlation():
    # Eq. 19 by hand: rank 1 of 10 negatives -> 1; rank 11 -> 0; rank 6 -> 0.5; no negatives -> undefined
    np.testing.assert_allclose(relative_ranks([1, 11, 6, 1], [11, 11, 11, 1]), [1.0, 0.0, 0.5, np.nan])
    relative = {"head": np.array([1.0, 0.5, np.nan]), "tail": np.array([0.9, 0.1, 0.2])}
    posteriors = np.array([0.8, 0.3, 0.4])
    expected = pearsonr([1.0, 0.5, 0.9, 0.1, 0.2], [0.8, 0.3, 0.8, 0.3, 0.4]).statistic
    assert rank_posterior_correlation(relative, posteriors) == pytest.approx(expected)
    assert np.isnan(rank_posterior_correlation(relative, np.full(3, 0.5)))
