"""S5 claims from synthetic collated tables: verdicts follow the fixed criteria and the interval rule, the
by-construction claims say so, empty GB is visible, r_xy's bootstrap agrees with a brute-force resample and judges
every method's mean r_xy against the paper's 0.55."""

import numpy as np
import pandas as pd
import pytest

from kgeval.claims import read_claims
from kgeval.studies.s5.assessment import rank_posterior_correlation
from kgeval.studies.s5.claims import s5_claims, write_s5_claims
from kgeval.studies.s5.claims_levels import run_replicates
from kgeval.studies.s5.triple_sums import correlation_replicates
from kgeval.uncertainty.resampling import BootstrapSettings
from kgeval.uncertainty.resampling import resample_indices

RUNS = [("nations", "transe", "0"), ("nations", "rotate", "0")]
BOOT = BootstrapSettings(resamples=200, permutations=10, level=0.95, seed=0)


def _positives(correlation: float, n: int = 400, seed: int = 0) -> pd.DataFrame:
    """Relative ranks and posteriors whose Pearson r is about ``correlation``."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, 2))
    noise = rng.normal(size=n)
    mean = x.mean(axis=1)
    y = correlation * (mean - mean.mean()) / mean.std() + np.sqrt(max(1 - correlation**2, 0)) * noise
    return pd.DataFrame({"relative_rank_head": x[:, 0], "relative_rank_tail": x[:, 1], "posterior_isotonic": y})


def _tables(platt_selected=False, pct=-90.0, overlap=1.0, gb_empty=True, tc_easier=False):
    calibrators, assessment = [], []
    for i, (d, m, s) in enumerate(RUNS):
        platt = platt_selected and i == 0
        calibrators += [
            (d, m, s, "isotonic", "isotonic", not platt),
            (d, m, s, "platt(1,0)", "platt", platt),
        ]
        for strategy, n in (("lcwa", 100), ("gb", 0 if gb_empty else 5), ("tc", 40), ("gb+lc", 30)):
            bs, ba = (0.05, 0.95) if strategy == "gb+lc" else (0.2, 0.7)
            if tc_easier and strategy == "tc":
                bs, ba = 0.01, 0.99
            for metric, value in (("bs_w", bs), ("ba", ba), ("num_negatives", n), ("pearson_r", 0.6)):
                assessment.append((d, m, s, "isotonic", "isotonic", True, strategy, metric, value))
    timing = pd.DataFrame(
        [(d, m, s, 10.0, 0.1, pct, 1.0, pct + 5) for d, m, s in RUNS],
        columns=["dataset", "model", "seed", "t_lp", "t_a", "pct_delta_t", "t_a_end_to_end", "pct_delta_t_end_to_end"],
    )
    overlap_table = pd.DataFrame(
        [("nations", 0, 2, 1, int(overlap), overlap)],
        columns=["dataset", "seed", "num_models", "num_pairs", "num_shared", "overlap"],
    )
    return (
        pd.DataFrame(calibrators, columns=["dataset", "model", "seed", "calibrator", "method", "selected"]),
        pd.DataFrame(
            assessment,
            columns=["dataset", "model", "seed", "calibrator", "method", "selected", "strategy", "metric", "value"],
        ),
        timing,
        overlap_table,
    )


def _claims(correlation=0.9, n=400, **kwargs):
    calibrators, assessment, timing, overlap = _tables(**kwargs)
    positives = {run: _positives(correlation, n, seed=i) for i, run in enumerate(RUNS)}
    # the collated assessment holds each run's point r_xy
    for run, frame in positives.items():
        r = rank_posterior_correlation(
            {s: frame[f"relative_rank_{s}"].to_numpy() for s in ("head", "tail")}, frame["posterior_isotonic"].to_numpy()
        )
        rows = (assessment[["dataset", "model", "seed"]].astype(str).apply(tuple, axis=1) == run) & (
            assessment["metric"] == "pearson_r"
        )
        assessment.loc[rows, "value"] = r
    replicates = run_replicates(assessment, {}, positives, BOOT)
    return {c.claim: c for c in s5_claims(calibrators, assessment, timing, overlap, replicates, BOOT.level)}


def test_correlation_bootstrap_equals_brute_force_resamples():
    frame = _positives(0.5, n=60)
    frame.loc[3, "relative_rank_tail"] = np.nan  # an undefined relative rank is left out, as in the assessment
    reps = correlation_replicates(frame, "isotonic", resamples=5, seed=7)
    idx = next(resample_indices(len(frame), 5, 7))
    for b in range(5):
        part = frame.iloc[idx[b]]
        expected = rank_posterior_correlation(
            {s: part[f"relative_rank_{s}"].to_numpy() for s in ("head", "tail")}, part["posterior_isotonic"].to_numpy()
        )
        assert reps[b] == pytest.approx(expected, rel=1e-9)


def test_correlation_claim_holds_differs_and_is_inconclusive():
    holds = _claims(correlation=0.9)["s5.posteriors_correlate_with_ranks"]
    assert holds.verdict == "holds" and "every method's mean over its runs: 0.55 < r_xy" in holds.tolerance
    differs = _claims(correlation=0.3)["s5.posteriors_correlate_with_ranks"]
    assert differs.verdict == "differs" and "lies outside 0.55 < rotate's mean r_xy" in differs.reason
    unsure = _claims(correlation=0.78, n=60)["s5.posteriors_correlate_with_ranks"]
    assert unsure.verdict == "inconclusive" and "straddles" in unsure.reason
    assert "percentile bootstrap of each method's mean" in unsure.interval


def test_by_construction_claims_say_so_and_never_count_as_measured():
    claims = _claims()
    for name in ("s5.isotonic_beats_platt_r2w", "s5.t_a_end_to_end_fraction_of_t_lp"):
        assert claims[name].basis.startswith("by construction: "), name
        assert claims[name].verdict == "by construction", name
        assert "true whatever the data: " in claims[name].reason, name
    # the paper's reading includes the statistics pass over every validation negative: measured, and the reason says why
    sec63 = claims["s5.t_a_fraction_of_t_lp"]
    assert sec63.basis.startswith("measured: ") and "compiled ranking engine" in sec63.basis
    assert "not by construction" in sec63.reason and sec63.verdict == "holds"
    # what the in-sample count gave stays in the reason, never in the verdict
    assert claims["s5.isotonic_beats_platt_r2w"].reason.startswith("computed: holds (")
    platt = _claims(platt_selected=True)["s5.isotonic_beats_platt_r2w"]
    assert platt.verdict == "by construction" and platt.reason.startswith("computed: differs (")
    assert "#" not in platt.reason and "s5.isotonic_beats_platt_out_of_sample" in platt.reason
    assert _claims(pct=-50.0)["s5.t_a_fraction_of_t_lp"].verdict == "differs"


def test_timing_claims_exclude_runs_under_the_noise_floor():
    calibrators, assessment, timing, overlap = _tables()

    def timing_claims(table):
        claims = s5_claims(calibrators, assessment, table, overlap, {}, BOOT.level)
        return {c.claim: c for c in claims if c.claim.startswith("s5.t_a")}

    # one run too short to time (t_LP 0.05 s < 0.1 s) and failing: excluded, the other holds
    short = timing.assign(t_lp=[0.05, 10.0], pct_delta_t=[-10.0, -90.0])
    claims = timing_claims(short)
    assert claims["s5.t_a_fraction_of_t_lp"].verdict == "holds"
    assert "1 of 2 runs excluded as noise" in claims["s5.t_a_fraction_of_t_lp"].reason
    # a coarse timer: 100 resolutions of 0.2 s is 20 s, above every t_LP: all excluded, not checkable with the reason
    coarse = timing.assign(timer_resolution=0.2)
    for claim in timing_claims(coarse).values():
        assert claim.verdict == "not checkable" and "2 of 2 runs excluded as noise" in claim.reason, claim.claim
        assert claim.basis == "measured", claim.claim  # nothing computed: not a by-construction row
    assert timing_claims(timing.assign(timer_resolution=1e-9))["s5.t_a_fraction_of_t_lp"].verdict == "holds"
    # fewer than half the runs above the floor: the few left (the slowest scorers) do not speak for every run
    many = pd.concat([timing] * 3, ignore_index=True).assign(
        t_lp=[10.0, 0.05, 0.05, 0.05, 0.05, 10.0], pct_delta_t=-90.0
    )
    for claim in timing_claims(many).values():
        assert claim.verdict == "not checkable" and "only 2 of 6 runs lie above the noise floor" in claim.reason


def test_claims_without_interval_are_at_most_inconclusive_and_name_the_side():
    claims = _claims()
    for name in ("s5.table2_overlap_ge_78", "s5.strategies_nonsensical_easier"):
        assert claims[name].verdict == "inconclusive" and "holds side" in claims[name].reason, name
    failing = _claims(overlap=0.0, tc_easier=True)
    for name in ("s5.table2_overlap_ge_78", "s5.strategies_nonsensical_easier"):
        assert failing[name].verdict == "inconclusive" and "differs side" in failing[name].reason, name
    assert "GB empty in 2 runs" in claims["s5.strategies_nonsensical_easier"].kgeval


def test_claims_file_is_valid(tmp_path):
    paths = {}
    for name, table in zip(("calibrators", "assessment", "timing", "overlap"), _tables(), strict=True):
        paths[name] = tmp_path / f"{name}.tsv"
        table.to_csv(paths[name], sep="\t", index=False)
    positives = []
    for i, (d, m, s) in enumerate(RUNS):
        path = tmp_path / "s5" / d / m / s / "positives.parquet"
        path.parent.mkdir(parents=True)
        _positives(0.9, seed=i).to_parquet(path)
        positives.append(path)
    write_s5_claims(paths, {"positives": positives}, BOOT, tmp_path / "s5.tsv")
    table = read_claims(tmp_path / "s5.tsv")
    assert list(table["claim"]) == sorted(table["claim"]) and len(table) == 9
    assert table.set_index("claim").loc["s5.posteriors_correlate_with_ranks", "verdict"] == "holds"


def _strategy_replicates(tc_shift: float, spread: float, n: int = 400) -> dict:
    """Per run, resampled BS_w and BA of both strategies around the built tables' points (GB+LC 0.05 and 0.95; TC
    0.2 and 0.7, moved by ``tc_shift`` towards GB+LC)."""
    rng = np.random.default_rng(3)
    out = {}
    for run in RUNS:
        noise = spread * rng.standard_normal((4, n))
        out[run] = {
            "bs_w|gb+lc": 0.05 + noise[0], "ba|gb+lc": 0.95 + noise[1],
            "bs_w|tc": 0.2 - tc_shift + noise[2], "ba|tc": 0.7 + tc_shift + noise[3],
        }
    return out


def _with_replicates(replicates, **kwargs):
    calibrators, assessment, timing, overlap = _tables(**kwargs)
    return {c.claim: c for c in s5_claims(calibrators, assessment, timing, overlap, replicates, BOOT.level)}


def test_strategy_claim_is_judged_on_paired_resamples_of_each_run():
    claim = _with_replicates(_strategy_replicates(0.0, 0.01))["s5.strategies_nonsensical_easier"]
    assert claim.verdict == "holds" and "paired percentile bootstrap" in claim.interval
    assert "nations/transe/0 BS_w(TC) - BS_w(GB+LC) [" in claim.interval
    # TC as easy as GB+LC in the resamples: the differences straddle zero
    claim = _with_replicates(_strategy_replicates(0.15, 0.05))["s5.strategies_nonsensical_easier"]
    assert claim.verdict == "inconclusive" and "straddles" in claim.reason
    # TC easier than GB+LC by far (points and resamples)
    claim = _with_replicates(_strategy_replicates(0.3, 0.01), tc_easier=True)["s5.strategies_nonsensical_easier"]
    assert claim.verdict == "differs"


def test_overlap_claim_is_judged_on_the_overlap_interval():
    calibrators, assessment, timing, overlap = _tables()
    for (low, high), verdict in (((0.8, 1.0), "holds"), ((0.5, 1.0), "inconclusive"), ((0.0, 0.5), "differs")):
        table = overlap.assign(overlap=(low + high) / 2, overlap_low=low, overlap_high=high)
        claim = {c.claim: c for c in s5_claims(calibrators, assessment, timing, table, {}, BOOT.level)}[
            "s5.table2_overlap_ge_78"
        ]
        assert claim.verdict == verdict and "test triples, the same triples for every model" in claim.interval


def test_timing_claim_names_the_cost_per_unit_of_both_protocols():
    calibrators, assessment, timing, overlap = _tables()
    timing = timing.assign(ns_per_valid_negative=12.0, ns_per_valid_negative_end_to_end=40.0, ns_per_lp_candidate=3.0)
    claim = {c.claim: c for c in s5_claims(calibrators, assessment, timing, overlap, {}, BOOT.level)}[
        "s5.t_a_fraction_of_t_lp"
    ]
    assert "statistics pass per validation negative median 12 ns" in claim.kgeval
    assert "rank evaluation per candidate median 3 ns" in claim.kgeval
