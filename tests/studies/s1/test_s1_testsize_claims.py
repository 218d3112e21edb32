"""S1's Fig. 1 claims on sweeps built so that the answer is known: holds, differs, inconclusive, and never holds on
an input without the effect."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.claims import DIFFERS, HOLDS, INCONCLUSIVE, MEASURED, NOT_CHECKABLE
from kgeval.studies.s1.testsize_claims import PAPER_SETUP, sweep_basis, sweep_claims
from kgeval.studies.s1.testsize_replicates import SweepReplicates

SIZES = np.array([1000, 2000, 3000, 4000, 5000])


def _sweep(amr: float, amr_drift: float = 0.0, hits_drop: float = 0.5, mr_power: float = 1.0, spread: float = 1e-4,
           num_train: int = 50, seed: int = 0) -> SweepReplicates:
    """MR = AMR (t + 1) / 2 (to the power ``mr_power`` of its growth), AMR drifting linearly by ``amr_drift`` over the
    range, Hits@1 falling by ``hits_drop``; replicates scattered around the points by ``spread`` (relative)."""
    t = SIZES.astype(float)
    amr_t = amr * (1 + amr_drift * (t - t[0]) / (t[-1] - t[0]))
    mr = amr_t * ((t + 1) / 2) ** mr_power
    points = {
        "mr": mr,
        "amr": amr_t,
        "amri": 1 - (mr - 1) / ((t + 1) / 2 - 1),
        "hits@1": 0.3 * (1 - hits_drop * (t - t[0]) / (t[-1] - t[0])) if num_train else 1 / t,
    }
    rng = np.random.default_rng(seed)
    noise = 1 + spread * rng.standard_normal((400, 1))  # one draw moves every size alike, as a shared resample does
    replicates = {k: v[None, :] * (noise + spread * rng.standard_normal((400, len(t)))) for k, v in points.items()}
    return SweepReplicates(sizes=SIZES, points=points, replicates=replicates, seeds=2)


def _verdicts(sweeps, basis: str = MEASURED) -> dict[str, str]:
    return {c.claim: c.verdict for c in sweep_claims(sweeps, 0.95, basis)}


def _paper_like(**kwargs) -> dict:
    return {("p", k): _sweep(amr, num_train=k, **kwargs) for k, amr in ((0, 1.0), (50, 0.4), (500, 0.05))}


def test_paper_like_sweeps_hold():
    verdicts = _verdicts(_paper_like())
    for claim in ("mr_grows_with_test_size", "mr_grows_almost_linearly", "hits1_falls_with_test_size",
                  "amr_stable_with_test_size", "few_alignments_like_random", "amr_orders_training_sizes"):
        assert verdicts[f"s1.fig1_{claim}"] == HOLDS, claim


def test_drifting_amr_rising_hits_and_curved_mr_differ():
    verdicts = _verdicts(_paper_like(amr_drift=0.5, hits_drop=-0.2, mr_power=2.5))
    assert verdicts["s1.fig1_amr_stable_with_test_size"] == DIFFERS  # AMR moves by 50 %
    assert verdicts["s1.fig1_hits1_falls_with_test_size"] == DIFFERS  # Hits@1 rises
    assert verdicts["s1.fig1_mr_grows_almost_linearly"] == DIFFERS  # MR ~ t^2.5


def test_a_model_on_its_floor_moves_amr_and_the_floor_free_reading_says_so():
    """AMR = 2 / (t + 1) (every rank 1) falls by 80 % over the range; 1 - AMRI = 0 has no drift to speak of."""
    t = SIZES.astype(float)
    points = {"mr": np.ones(5), "amr": 2 / (t + 1), "amri": np.ones(5), "hits@1": np.ones(5)}
    replicates = {k: np.repeat(v[None, :], 50, axis=0) for k, v in points.items()}
    sweep = SweepReplicates(sizes=SIZES, points=points, replicates=replicates, seeds=1)
    claims = {c.claim: c for c in sweep_claims({("p", 50): sweep}, 0.95, MEASURED)}
    assert claims["s1.fig1_amr_stable_with_test_size"].verdict == DIFFERS
    assert "f's share of AMR: p/50 100.0% at t=1000, 100.0% at t=5000" in claims["s1.fig1_amr_stable_with_test_size"].reason
    assert claims["s1.fig1_amr_floor_removed_stable"].verdict == NOT_CHECKABLE  # 0 at the start: no relative change


def test_wide_intervals_are_inconclusive_and_name_the_side():
    claims = {c.claim: c for c in sweep_claims(_paper_like(spread=2.0), 0.95, MEASURED)}
    for name in ("s1.fig1_mr_grows_with_test_size", "s1.fig1_amr_stable_with_test_size",
                 "s1.fig1_amr_orders_training_sizes"):
        assert claims[name].verdict == INCONCLUSIVE, name
        assert "straddles" in claims[name].reason and "holds side" in claims[name].reason, name
        assert "one draw per split seed shared by every test and training size" in claims[name].interval


@pytest.mark.parametrize("amr", [0.4, 1.0])
def test_inputs_without_the_effect_never_hold(amr):
    """Identical models at every training size do not order them; flat MR does not grow; AMR far from 1 below 10
    alignments is not random-like."""
    sweeps = {("p", k): _sweep(amr, num_train=k, mr_power=0.0, spread=1e-6) for k in (0, 5, 50)}
    verdicts = _verdicts(sweeps)
    assert verdicts["s1.fig1_amr_orders_training_sizes"] != HOLDS
    assert verdicts["s1.fig1_mr_grows_with_test_size"] != HOLDS
    assert (verdicts["s1.fig1_few_alignments_like_random"] == HOLDS) == (amr == 1.0)


def test_ordering_reads_the_largest_shared_size_and_is_paired():
    sweeps = _paper_like()
    claim = {c.claim: c for c in sweep_claims(sweeps, 0.95, MEASURED)}["s1.fig1_amr_orders_training_sizes"]
    assert claim.kgeval.startswith("p at t=5000: k=0 1.0000, k=50 0.4000, k=500 0.0500")
    assert claim.interval.startswith("0->50 [") and "(paired" in claim.interval


def test_missing_sweeps_are_not_checkable():
    verdicts = _verdicts({})
    assert set(verdicts.values()) == {NOT_CHECKABLE}
    only_trained = _verdicts({("p", 50): _sweep(0.4)})
    assert only_trained["s1.fig1_few_alignments_like_random"] == NOT_CHECKABLE
    assert only_trained["s1.fig1_amr_orders_training_sizes"] == NOT_CHECKABLE


def test_basis_is_measured_only_for_the_papers_setting():
    paper = {"zh": dict(PAPER_SETUP["dataset"])}
    assert sweep_basis(paper, dict(PAPER_SETUP["model"], lr=1.0), 5) == MEASURED
    basis = sweep_basis({"u": {"source": "pykeen", "subset": None}}, {"embedding_dim": 64, "num_epochs": 200}, 2)
    assert basis.startswith("stand-in: GCN-Align sweep with EA pair u (paper: DBP15k zh-en)")
    for text in ("embedding_dim 64 (paper: 200)", "num_negatives None (paper: 50)", "num_epochs 200 (paper: 2000)",
                 "2 split seeds (paper: 5)"):
        assert text in basis
    claims = sweep_claims(_paper_like(), 0.95, basis)
    assert all(c.basis == basis for c in claims)
