"""S5's Fig. 1 level claims (:mod:`kgeval.studies.s5.claims_levels`) on built tables: every link-prediction method's
mean over its runs is judged with the bootstrap interval of that mean (holds, differs, inconclusive), the share of
runs is context, only the selected function's LCWA values count, and the runs' replicates come from their per-triple
sums and positives on one stream per run."""

import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s5.claims_levels import LEVELS, level_claims, level_values, run_replicates
from kgeval.studies.s5.triple_sums import column, correlation_replicates, measure_replicates, run_stream_seed
from kgeval.uncertainty.resampling import BootstrapSettings, percentile_interval

COLUMNS = ["dataset", "model", "model_class", "seed", "calibrator", "method", "selected", "strategy", "metric", "value"]
#: values that meet every level
GOOD = {"r2_w": 0.8, "bs_w": 0.05, "ba": 0.95, "pearson_r": 0.7}
#: values that meet none, for the rows that must not count
BAD = {"r2_w": -1.0, "bs_w": 1.0, "ba": 0.0, "pearson_r": 0.0}
CLAIM = {level.metric: level.claim for level in LEVELS}
RUNS = [(dataset, method) for dataset in ("d1", "d2") for method in ("ComplEx", "TransE")]


def _tables(changed=None, spread=0.004, resamples=400):
    """The assessment rows and each run's replicates: every run GOOD but ``changed[(dataset, method)]``; replicates
    normal around each run's value with ``spread``; distractors (TC rows, a non-selected Platt function) BAD."""
    rows, replicates = [], {}
    rng = np.random.default_rng(0)
    for dataset, method in RUNS:
        run = (dataset, method.lower(), "0")
        values = {**GOOD, **(changed or {}).get((dataset, method), {})}
        head = (dataset, method.lower(), method, "0")
        for metric, value in values.items():
            rows.append((*head, "isotonic", "isotonic", True, "lcwa", metric, value))
            rows.append((*head, "isotonic", "isotonic", True, "tc", metric, BAD[metric]))
            rows.append((*head, "platt(1,0)", "platt", False, "lcwa", metric, BAD[metric]))
        replicates[run] = {m: v + spread * rng.standard_normal(resamples) for m, v in values.items()}
    return pd.DataFrame(rows, columns=COLUMNS), replicates


def _claims(changed=None, **kwargs):
    assessment, replicates = _tables(changed, **kwargs)
    return {c.claim: c for c in level_claims(assessment, replicates, 0.95)}


def test_level_values_take_the_selected_function_on_lcwa_with_its_method():
    assessment, _ = _tables({("d1", "TransE"): {"r2_w": np.nan}})
    found = level_values(assessment, "r2_w")
    assert len(found) == 3 and (found["value"] == 0.8).all()
    assert sorted(found["method"]) == ["ComplEx", "ComplEx", "TransE"]


def test_every_method_meeting_every_level_holds():
    claims = _claims()
    assert set(claims) == {level.claim for level in LEVELS}
    for level in LEVELS:
        claim = claims[level.claim]
        assert claim.verdict == "holds", (claim.claim, claim.reason)
        assert "ComplEx 0.8" in claim.kgeval or level.metric != "r2_w"
        assert "in 4 of 4 runs (share 1.00)" in claim.kgeval and "(2 runs)" in claim.kgeval
        assert "percentile bootstrap of each method's mean" in claim.interval and "TransE [" in claim.interval
        assert "every method's mean" in claim.tolerance and "Sec. 6.2: '" in claim.paper
    assert "0.55 < r_xy" in claims["s5.posteriors_correlate_with_ranks"].tolerance


@pytest.mark.parametrize(
    "metric, value",
    [("r2_w", 0.95), ("r2_w", 0.6), ("bs_w", 0.15), ("ba", 0.85), ("pearson_r", 0.5)],
)
def test_one_method_outside_the_level_differs(metric, value):
    claim = _claims({("d1", "TransE"): {metric: value}, ("d2", "TransE"): {metric: value}})[CLAIM[metric]]
    assert claim.verdict == "differs" and "TransE's mean" in claim.reason and "ComplEx" not in claim.reason
    assert "in 2 of 4 runs (share 0.50)" in claim.kgeval


def test_the_mean_is_judged_not_each_run():
    # one TransE run outside the band, the other inside: the mean 0.75 lies inside
    claim = _claims({("d1", "TransE"): {"r2_w": 0.65}, ("d2", "TransE"): {"r2_w": 0.85}})[CLAIM["r2_w"]]
    assert claim.verdict == "holds" and "in 3 of 4 runs" in claim.kgeval and "TransE 0.750" in claim.kgeval


@pytest.mark.parametrize("metric, value", [("r2_w", 0.9), ("bs_w", 0.1), ("ba", 0.9), ("pearson_r", 0.55)])
def test_a_mean_at_the_level_is_inconclusive(metric, value):
    claim = _claims({("d1", "TransE"): {metric: value}, ("d2", "TransE"): {metric: value}}, spread=0.02)
    claim = claim[CLAIM[metric]]
    assert claim.verdict == "inconclusive" and "straddles" in claim.reason and "TransE's mean" in claim.reason


def test_the_interval_is_that_of_the_mean_of_the_runs_replicates():
    assessment, replicates = _tables(spread=0.03)
    claim = {c.claim: c for c in level_claims(assessment, replicates, 0.9)}[CLAIM["ba"]]
    mean = (replicates[("d1", "transe", "0")]["ba"] + replicates[("d2", "transe", "0")]["ba"]) / 2
    low, high = percentile_interval(mean, 0.9)
    assert f"TransE [{low:.3f}, {high:.3f}]" in claim.interval and "90 % percentile" in claim.interval


def test_a_run_without_resamples_or_without_runs_is_not_checkable():
    assessment, replicates = _tables()
    del replicates[("d2", "transe", "0")]
    claims = {c.claim: c for c in level_claims(assessment, replicates, 0.95)}
    for claim in claims.values():
        assert claim.verdict == "not checkable" and "no resamples for d2/transe/0" in claim.reason, claim.claim
    # a differing method still decides the verdict
    assessment, replicates = _tables({("d1", "ComplEx"): {"ba": 0.5}, ("d2", "ComplEx"): {"ba": 0.5}})
    del replicates[("d2", "transe", "0")]
    assert {c.claim: c for c in level_claims(assessment, replicates, 0.95)}[CLAIM["ba"]].verdict == "differs"
    empty, _ = _tables({run: {m: np.nan for m in GOOD} for run in RUNS})
    for claim in level_claims(empty, {}, 0.95) + level_claims(pd.DataFrame(columns=COLUMNS), {}, 0.95):
        assert claim.verdict == "not checkable" and "no run" in claim.reason, claim.claim


def test_run_replicates_resample_each_runs_triples_on_one_stream(tmp_path):
    rng = np.random.default_rng(5)
    n = 50
    assessment, _ = _tables()
    boot = BootstrapSettings(resamples=30, permutations=10, level=0.95, seed=2)
    sums, positives = {}, {}
    for dataset, method in RUNS:
        run = (dataset, method.lower(), "0")
        frame = {column("pos_posterior", name): rng.beta(5, 2, n) for name in ("isotonic", "platt(1,0)")}
        for strategy in ("lcwa", "tc"):
            frame[column("num_neg", strategy)] = rng.poisson(20, n).astype(float)
            for name in ("isotonic", "platt(1,0)"):
                for field in ("neg_posterior", "neg_sq_error", "neg_hits"):
                    frame[column(field, name, strategy)] = frame[column("num_neg", strategy)] * rng.uniform(0, 0.2, n)
        path = tmp_path / f"{dataset}_{method}.parquet"
        pd.DataFrame(frame).to_parquet(path)
        sums[run] = path if dataset == "d1" else pd.DataFrame(frame)  # a path (read by column) or a table
        positives[run] = pd.DataFrame({"relative_rank_head": rng.uniform(size=n), "relative_rank_tail": rng.uniform(size=n),
                                       "posterior_isotonic": frame[column("pos_posterior", "isotonic")]})
    del positives[("d2", "transe", "0")]
    found = run_replicates(assessment, sums, positives, boot)
    assert set(found) == {(d, m.lower(), "0") for d, m in RUNS}
    run = ("d1", "complex", "0")
    seed = run_stream_seed(boot, run)
    for strategy, key in (("lcwa", "{}"), ("tc", "{}|tc")):
        # every strategy of the selected function on the run's stream: paired across strategies
        expected = measure_replicates(pd.read_parquet(sums[run]), "isotonic", strategy, boot.resamples, seed)
        for metric in ("r2_w", "bs_w", "ba"):
            np.testing.assert_allclose(found[run][key.format(metric)], expected[metric], rtol=1e-12)
    np.testing.assert_array_equal(
        found[run]["pearson_r"], correlation_replicates(positives[run], "isotonic", boot.resamples, seed)
    )
    assert "pearson_r" not in found[("d2", "transe", "0")] and "bs_w" in found[("d2", "transe", "0")]
    # runs draw different resamples
    assert not np.array_equal(found[run]["bs_w"], found[("d1", "transe", "0")]["bs_w"])
    claims = {c.claim: c for c in level_claims(assessment[assessment["model"] == "transe"], found, boot.level)}
    assert claims[CLAIM["pearson_r"]].verdict == "not checkable"
    assert "no resamples for d2/transe/0" in claims[CLAIM["pearson_r"]].reason
