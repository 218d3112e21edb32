"""S5's Platt claims on built tables: each holds, differs and is inconclusive or not checkable, or is by construction."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.claims import BY_CONSTRUCTION, DIFFERS, HOLDS, INCONCLUSIVE, NOT_CHECKABLE
from kgeval.studies.s5.claims_platt import platt_claims, r2_difference_intervals
from kgeval.studies.s5.measures import CalibrationSums

N_POS, N_NEG = 300, 3000


def _run(model, iso_shift, platt_shift, spread, rng, noise=0.0):
    """One run's assessment rows (best functions and six Platt per procedure), calibrators and positives."""
    key = {"dataset": "d", "model": model, "seed": "0", "model_class": model}
    neg = rng.uniform(0, 0.3, N_NEG)
    base = rng.uniform(0.5, 0.9, N_POS)
    z = noise * rng.standard_normal(N_POS)  # opposite per-triple errors: a difference of mean zero
    posts = {"isotonic": np.clip(base + iso_shift + z, 0, 1)}
    a_rows, c_rows = [], []
    for procedure in ("converged", "paper"):
        posts[f"platt_{procedure}"] = np.clip(base + platt_shift - z, 0, 1)
    for name, p in posts.items():
        method, procedure = ("isotonic", "pava") if name == "isotonic" else ("platt", name.split("_")[1])
        for k in range(1 if method == "isotonic" else 6):
            s = CalibrationSums()
            s.add_positives(p)
            s.add_negatives(neg)
            calibrator = name if method == "isotonic" else f"{name}({k})"
            for metric, value in s.metrics().items():
                a_rows.append({**key, "calibrator": calibrator, "method": method, "procedure": procedure,
                               "selected": method == "isotonic", "best_of_method": k == 0, "strategy": "lcwa",
                               "metric": metric, "value": value})
            step = spread[procedure] if method == "platt" else 0.0
            c_rows.append({**key, "calibrator": calibrator, "method": method, "procedure": procedure,
                           "a": 1.0 + step * k, "b": -0.5 - step * k, "r2_w": s.metrics()["r2_w"] - 0.01 * k,
                           "holdout_r2_w": s.metrics()["r2_w"]})
    positives = pd.DataFrame({f"posterior_{n}": p for n, p in posts.items()})
    return a_rows, c_rows, positives


def _tables(models=("HolE", "TransE"), iso_shift=0.0, platt_shift=-0.3, spread=None, seed=0, noise=0.0):
    spread = spread or {"converged": 0.0, "paper": 0.05}
    rng = np.random.default_rng(seed)
    assessment, calibrators, positives = [], [], {}
    for model in models:
        a, c, p = _run(model, iso_shift, platt_shift, spread, rng, noise)
        assessment += a
        calibrators += c
        positives[("d", model, "0")] = p
    return pd.DataFrame(calibrators), pd.DataFrame(assessment), positives


def _claims(resamples=200, **kwargs):
    calibrators, assessment, positives = _tables(**kwargs)
    intervals = r2_difference_intervals(assessment, positives, resamples, 0, 0.95)
    return {c.claim: c for c in platt_claims(calibrators, assessment, intervals, 0.95)}, intervals


def test_out_of_sample_claim_holds_differs_inconclusive_and_not_checkable():
    claims, intervals = _claims(platt_shift=-0.3)
    assert claims["s5.isotonic_beats_platt_out_of_sample"].verdict == HOLDS
    assert (intervals["low"] > 0).all() and len(intervals) == 4
    claims, _ = _claims(iso_shift=-0.3, platt_shift=0.0)
    assert claims["s5.isotonic_beats_platt_out_of_sample"].verdict == DIFFERS
    claims, _ = _claims(platt_shift=0.0, noise=0.05)
    assert claims["s5.isotonic_beats_platt_out_of_sample"].verdict == INCONCLUSIVE
    # no positives to resample: point values only
    calibrators, assessment, _ = _tables()
    intervals = r2_difference_intervals(assessment, {}, 0, 0, 0.95)
    claims = {c.claim: c for c in platt_claims(calibrators, assessment, intervals, 0.95)}
    assert claims["s5.isotonic_beats_platt_out_of_sample"].verdict == NOT_CHECKABLE
    # the other readings of Eq. 8's y_bar are named
    assert "unweighted mean" in claims["s5.isotonic_beats_platt_out_of_sample"].reason


def test_difference_interval_is_a_bootstrap_of_the_exact_point():
    """Without resampling weights (all counts one) the replicate equals the assessed difference."""
    from kgeval.studies.s5.claims_platt import _best_lcwa, _r2_replicates

    _, assessment, positives = _tables()
    best = _best_lcwa(assessment)
    row = best[(best["model"] == "HolE") & (best["method"] == "isotonic")].iloc[0]
    p = positives[("d", "HolE", "0")]["posterior_isotonic"].to_numpy()
    assert _r2_replicates(p, row, np.ones((1, len(p))))[0] == pytest.approx(row["r2_w"])


def test_spread_claim_holds_for_the_paper_procedure_and_is_by_construction_for_the_converged_one():
    claims, _ = _claims()
    assert claims["s5.platt_initialisations_differ@paper"].verdict == HOLDS
    assert claims["s5.platt_initialisations_differ@paper"].basis == "measured"
    converged = claims["s5.platt_initialisations_differ@converged"]
    # a convex loss: the six fits meet whatever the scores, so the row is reported, never a differs
    assert converged.verdict == BY_CONSTRUCTION and converged.basis.startswith("by construction: ")
    assert converged.reason.startswith("computed: differs (") and "convex" in converged.reason
    calibrators, assessment, positives = _tables()
    only = calibrators[calibrators["procedure"] != "paper"]
    claims = {c.claim: c for c in platt_claims(only, assessment, r2_difference_intervals(assessment, positives, 50, 0, 0.95), 0.95)}
    assert claims["s5.platt_initialisations_differ@paper"].verdict == NOT_CHECKABLE


def test_appendix_b_claim_verdicts():
    # Platt far below isotonic: lower everywhere; the six functions' R2_w negative for HolE and TransE: no interval
    claims, _ = _claims(platt_shift=-0.45)
    claim = claims["s5.appendix_b_platt_not_well_calibrated@paper"]
    assert claim.verdict == INCONCLUSIVE and "below 0" in claim.reason
    claims, _ = _claims(iso_shift=-0.3, platt_shift=0.0)
    assert claims["s5.appendix_b_platt_not_well_calibrated@converged"].verdict == DIFFERS
    claims, _ = _claims(models=("ComplEx",))
    assert "HolE and TransE not studied" in claims["s5.appendix_b_platt_not_well_calibrated@paper"].kgeval
    assert claims["s5.appendix_b_platt_not_well_calibrated@paper"].verdict == NOT_CHECKABLE
