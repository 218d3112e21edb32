"""S5's Platt claims on built tables: each holds, differs and is inconclusive or not checkable, or is by construction."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.claims import BY_CONSTRUCTION, DIFFERS, HOLDS, INCONCLUSIVE, NOT_CHECKABLE
from kgeval.studies.s5.claims_platt import (
    platt_claims,
    platt_mean_intervals,
    platt_replicates,
    r2_difference_intervals,
)
from kgeval.studies.s5.measures import CalibrationSums
from kgeval.studies.s5.triple_sums import column, measure_replicates
from kgeval.uncertainty.resampling import percentile_interval, stream_seed

N_POS, N_NEG = 300, 3000


#: the paper procedure's budget in the built tables
BUDGET = {"learning_rate": 0.01, "batch_size": 1024, "epochs": 10}


def _triple_sums(posteriors: dict, neg: np.ndarray) -> pd.DataFrame:
    """A run's per-triple sums: negative ``i`` belongs to test triple ``i mod N_POS``; every calibrator gives the
    negatives the posteriors ``neg``."""
    owner = np.arange(len(neg)) % N_POS
    threshold = CalibrationSums().threshold
    frame = {"head": np.arange(N_POS), "relation": 0, "tail": np.arange(N_POS),
             column("num_neg", "lcwa"): np.bincount(owner, minlength=N_POS).astype(float)}
    for name, p in posteriors.items():
        frame[column("pos_posterior", name)] = p
        frame[column("neg_posterior", name, "lcwa")] = np.bincount(owner, neg, N_POS)
        frame[column("neg_sq_error", name, "lcwa")] = np.bincount(owner, neg**2, N_POS)
        frame[column("neg_hits", name, "lcwa")] = np.bincount(owner, (neg < threshold).astype(float), N_POS)
    return pd.DataFrame(frame)


def _run(model, shifts, spread, rng, noise=0.0, paper_converged=False):
    """One run's assessment rows (best functions and six Platt per procedure), calibrators and per-triple sums.

    :param shifts: posterior shift of ``isotonic`` and of each Platt procedure against a common base
    :param spread: per procedure, then per multiple of the paper budget (``paper_x10``, ``paper_x100``), the step
        between the six fits' (a, b)
    """
    key = {"dataset": "d", "model": model, "seed": "0", "model_class": model}
    neg = rng.uniform(0, 0.3, N_NEG)
    base = rng.uniform(0.5, 0.9, N_POS)
    z = noise * rng.standard_normal(N_POS)  # opposite per-triple errors: a difference of mean zero
    posts = {"isotonic": np.clip(base + shifts["isotonic"] + z, 0, 1)}
    a_rows, c_rows, by_calibrator = [], [], {}
    for procedure in ("converged", "paper"):
        posts[f"platt_{procedure}"] = np.clip(base + shifts[procedure] - z, 0, 1)
    for name, p in posts.items():
        method, procedure = ("isotonic", "pava") if name == "isotonic" else ("platt", name.split("_")[1])
        for k in range(1 if method == "isotonic" else 6):
            s = CalibrationSums()
            s.add_positives(p)
            s.add_negatives(neg)
            calibrator = name if method == "isotonic" else f"{name}({k})"
            by_calibrator[calibrator] = p
            for metric, value in s.metrics().items():
                a_rows.append({**key, "calibrator": calibrator, "method": method, "procedure": procedure,
                               "selected": method == "isotonic", "best_of_method": k == 0, "strategy": "lcwa",
                               "metric": metric, "value": value})
            step = spread[procedure] if method == "platt" else 0.0
            row = {**key, "calibrator": calibrator, "method": method, "procedure": procedure,
                   "converged": procedure != "paper" or paper_converged, "a": 1.0 + step * k, "b": -0.5 - step * k,
                   "r2_w": s.metrics()["r2_w"] - 0.01 * k, "holdout_r2_w": s.metrics()["r2_w"]}
            if procedure == "paper":
                row.update(BUDGET)
                for m in (10, 100):
                    longer = spread.get(f"paper_x{m}", 0.0)
                    row.update({f"a_epochs_x{m}": 2.0 + longer * k, f"b_epochs_x{m}": 5.0 - 10 * longer * k})
            c_rows.append(row)
    return a_rows, c_rows, _triple_sums(by_calibrator, neg)


def _tables(models=("HolE", "TransE"), iso_shift=0.0, platt_shift=-0.3, spread=None, seed=0, noise=0.0,
            paper_shift=None, paper_converged=False):
    spread = spread or {"converged": 0.0, "paper": 0.05, "paper_x10": 0.01, "paper_x100": 0.0}
    shifts = {"isotonic": iso_shift, "converged": platt_shift,
              "paper": platt_shift if paper_shift is None else paper_shift}
    rng = np.random.default_rng(seed)
    assessment, calibrators, sums = [], [], {}
    for model in models:
        a, c, t = _run(model, shifts, spread, rng, noise, paper_converged)
        assessment += a
        calibrators += c
        sums[("d", model, "0")] = t
    return pd.DataFrame(calibrators), pd.DataFrame(assessment), sums


def _claims(resamples=200, **kwargs):
    calibrators, assessment, sums = _tables(**kwargs)
    replicates = platt_replicates(assessment, sums, resamples, 0)
    claims = {c.claim: c for c in platt_claims(calibrators, assessment, replicates, 0.95)}
    return claims, r2_difference_intervals(assessment, replicates, 0.95)


OUT = "s5.isotonic_beats_platt_out_of_sample"


def test_out_of_sample_claim_holds_differs_inconclusive_and_not_checkable():
    claims, intervals = _claims(platt_shift=-0.3)
    assert claims[OUT].verdict == HOLDS and claims[OUT].basis == "measured"
    assert (intervals["low"] > 0).all() and len(intervals) == 4
    claims, _ = _claims(iso_shift=-0.3, platt_shift=0.0)
    assert claims[OUT].verdict == DIFFERS
    claims, _ = _claims(platt_shift=0.0, noise=0.05)
    assert claims[OUT].verdict == INCONCLUSIVE
    # no per-triple sums to resample: point values only
    calibrators, assessment, _ = _tables()
    claims = {c.claim: c for c in platt_claims(calibrators, assessment, {}, 0.95)}
    assert claims[OUT].verdict == NOT_CHECKABLE
    # the other readings of Eq. 8's y_bar are named
    assert "unweighted mean" in claims[OUT].reason


def test_out_of_sample_claim_judges_the_converged_procedure_and_the_paper_one_on_its_own_row():
    # the paper procedure's functions far below isotonic, the converged ones above: each row judges its own
    claims, _ = _claims(iso_shift=-0.3, platt_shift=0.0, paper_shift=-0.5)
    assert claims[OUT].verdict == DIFFERS and "(paper)" not in claims[OUT].statement
    paper = claims[f"{OUT}@paper"]
    # the paper fits stopped short of the optimum: the under-fitting decides the row
    assert paper.verdict == BY_CONSTRUCTION and paper.reason.startswith("computed: holds")
    assert paper.basis.startswith("by construction: decided by the budget: learning_rate 0.01, batch_size 1024, epochs 10")
    assert "12 of 12 paper fits stopped short" in paper.reason
    # paper fits that reached the optimum: a measured comparison
    claims, _ = _claims(iso_shift=-0.3, platt_shift=0.0, paper_shift=-0.5, paper_converged=True)
    assert claims[f"{OUT}@paper"].verdict == HOLDS and claims[f"{OUT}@paper"].basis == "measured"
    # without the converged procedure the claim is not checkable
    calibrators, assessment, sums = _tables()
    without = assessment[~assessment["calibrator"].str.startswith("platt_converged")]
    replicates = platt_replicates(without, sums, 50, 0)
    claims = {c.claim: c for c in platt_claims(calibrators, without, replicates, 0.95)}
    assert claims[OUT].verdict == NOT_CHECKABLE and claims[f"{OUT}@paper"].verdict == BY_CONSTRUCTION


def test_differences_and_means_are_paired_resamples_of_each_run_s_triples_with_their_negatives():
    """Every function of a run on the run's stream; the difference's interval is that of the paired replicates."""
    _, assessment, sums = _tables(noise=0.05)
    replicates = platt_replicates(assessment, sums, 60, 7)
    run = ("d", "HolE", "0")
    seed = stream_seed(7, *run, "s5")
    for name in ("isotonic", "platt_converged(0)", "platt_paper(3)"):
        expected = measure_replicates(sums[run], name, "lcwa", 60, seed)["r2_w"]
        # one matrix product for all functions against one per function: equal to rounding
        np.testing.assert_allclose(replicates[run][name], expected, rtol=1e-12)
    intervals = r2_difference_intervals(assessment, replicates, 0.95).set_index(["model", "procedure"])
    low, high = percentile_interval(replicates[run]["isotonic"] - replicates[run]["platt_converged(0)"], 0.95)
    assert intervals.loc[("HolE", "converged"), "low"] == low and intervals.loc[("HolE", "converged"), "high"] == high
    # the point difference is the assessed one
    r2 = assessment[(assessment["metric"] == "r2_w") & (assessment["model"] == "HolE")].set_index("calibrator")["value"]
    assert intervals.loc[("HolE", "converged"), "difference"] == pytest.approx(r2["isotonic"] - r2["platt_converged(0)"])
    # the six functions' mean per method: the point is the assessed mean, the interval that of the mean replicate
    means = platt_mean_intervals(assessment, replicates, 0.95).set_index(["model_class", "procedure"])
    six = [f"platt_paper({k})" for k in range(6)]
    assert means.loc[("HolE", "paper"), "mean"] == pytest.approx(r2[six].mean())
    assert means.loc[("HolE", "paper"), "num_functions"] == 6
    expected = percentile_interval(np.mean([replicates[run][n] for n in six], axis=0), 0.95)
    assert (means.loc[("HolE", "paper"), "low"], means.loc[("HolE", "paper"), "high"]) == expected


def test_spread_claim_is_by_construction_for_both_procedures_and_names_the_paper_budget():
    claims, _ = _claims()
    paper = claims["s5.platt_initialisations_differ@paper"]
    assert paper.verdict == BY_CONSTRUCTION
    assert paper.basis.startswith("by construction: decided by the budget: learning_rate 0.01, batch_size 1024, epochs 10")
    assert paper.paper.startswith("implied, not stated") and "varied parameter initialization" in paper.paper
    # the spread after 1, 10 and 100 times the epochs: apart at 1x and 10x (b: range 0.5, median 4.75), together at 100x
    assert paper.reason.startswith("computed: holds (relative spread at 1x the epochs: ")
    assert "at 10x the epochs: 0.105 to 0.105, above tolerance in 2 of 2 runs" in paper.reason
    assert "at 100x the epochs: 0 to 0, above tolerance in 0 of 2 runs" in paper.reason
    converged = claims["s5.platt_initialisations_differ@converged"]
    # a convex loss: the six fits meet whatever the scores, so the row is reported, never a differs
    assert converged.verdict == BY_CONSTRUCTION and converged.basis.startswith("by construction: ")
    assert converged.reason.startswith("computed: differs (") and "convex" in converged.reason
    # six paper fits that coincide: computed differs, still decided by the budget
    claims, _ = _claims(spread={"converged": 0.0, "paper": 0.0})
    paper = claims["s5.platt_initialisations_differ@paper"]
    assert paper.verdict == BY_CONSTRUCTION and paper.reason.startswith("computed: differs (")
    # tables without the longer budgets or the budget columns
    calibrators, assessment, sums = _tables()
    calibrators = calibrators.drop(columns=[c for c in calibrators if "_epochs_x" in c or c in BUDGET])
    replicates = platt_replicates(assessment, sums, 50, 0)
    claims = {c.claim: c for c in platt_claims(calibrators, assessment, replicates, 0.95)}
    paper = claims["s5.platt_initialisations_differ@paper"]
    assert "at 100x the epochs: not run" in paper.reason and "configured studies.s5.platt" in paper.basis
    only = calibrators[calibrators["procedure"] != "paper"]
    claims = {c.claim: c for c in platt_claims(only, assessment, replicates, 0.95)}
    assert claims["s5.platt_initialisations_differ@paper"].verdict == NOT_CHECKABLE


BELOW, NEGATIVE = "s5.appendix_b_platt_below_isotonic", "s5.appendix_b_platt_negative_mean_r2w"


def test_appendix_b_parts_are_rows_of_their_own_with_the_procedure_s_basis():
    # Platt below isotonic everywhere, its R2_w still positive (about 0.11)
    claims, _ = _claims(platt_shift=-0.45)
    assert claims[f"{BELOW}@converged"].verdict == HOLDS and claims[f"{BELOW}@converged"].basis == "measured"
    assert claims[f"{NEGATIVE}@converged"].verdict == DIFFERS
    # Platt's positives pushed under its negatives: the six functions' R2_w negative for HolE and TransE
    claims, _ = _claims(platt_shift=-0.7)
    negative = claims[f"{NEGATIVE}@converged"]
    assert negative.verdict == HOLDS and negative.basis == "measured" and "HolE [" in negative.interval
    # without per-triple sums: point values only, at most inconclusive
    calibrators, assessment, _ = _tables(platt_shift=-0.7)
    negative = {c.claim: c for c in platt_claims(calibrators, assessment, {}, 0.95)}[f"{NEGATIVE}@converged"]
    assert negative.verdict == INCONCLUSIVE and "holds side" in negative.reason
    # the paper procedure's under-fitted functions decide both parts: the budget is in their basis
    for claim in (f"{BELOW}@paper", f"{NEGATIVE}@paper"):
        assert claims[claim].verdict == BY_CONSTRUCTION and "decided by the budget" in claims[claim].basis
    claims, _ = _claims(platt_shift=-0.7, paper_converged=True)
    assert claims[f"{BELOW}@paper"].verdict == HOLDS and claims[f"{NEGATIVE}@paper"].verdict == HOLDS
    claims, _ = _claims(iso_shift=-0.3, platt_shift=0.0)
    assert claims[f"{BELOW}@converged"].verdict == DIFFERS
    assert claims[f"{NEGATIVE}@converged"].verdict == DIFFERS
    claims, _ = _claims(platt_shift=0.0, noise=0.05)
    assert claims[f"{BELOW}@converged"].verdict == INCONCLUSIVE
    claims, _ = _claims(models=("ComplEx",))
    assert "HolE and TransE not studied" in claims[f"{NEGATIVE}@paper"].kgeval
    assert claims[f"{NEGATIVE}@paper"].verdict == NOT_CHECKABLE
    assert not any(c.startswith("s5.appendix_b_platt_not_well_calibrated") for c in claims)
