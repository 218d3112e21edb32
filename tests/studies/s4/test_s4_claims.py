"""S4's claims on this tier's systems: per-question values whose rankings and noise are known, resampled."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kgeval.claims import DIFFERS, HOLDS, INCONCLUSIVE, MEASURED, NOT_CHECKABLE
from kgeval.studies.s4.analysis import tau_by_depth
from kgeval.studies.s4.claims import CLAIM_METRICS, SIMULATED_POOLING, trained_claims
from kgeval.studies.s4.stability import UnitValues
from kgeval.studies.s4.tau_bootstrap import tau_replicates

SYSTEMS = ("a", "b", "c", "d")
FIG3, GAP, FALLS = (f"s4.fb_0.{c}" for c in ("fig3_sparsity_changes_rankings", "fig5_macro_above_micro_at_every_depth",
                                              "fig4_tau_falls_with_depth"))


def _units(orders: dict[str, dict[str, tuple[str, ...]]], questions: int, noise: float, seed: int = 0):
    """Per-question values: at each level a system's mean is set by its position in the family's order (best first,
    0.1 apart), plus Gaussian noise per question."""
    rng = np.random.default_rng(seed)
    keys = pd.DataFrame({"side": "head", "relation": "r", "anchor": [f"e{i:03d}" for i in range(questions)]})
    units = {}
    for level in orders["micro"]:
        means = np.array(
            [[1.0 - 0.1 * orders[family][level].index(s) for family, _ in CLAIM_METRICS] for s in SYSTEMS]
        )
        numerators = means[None, :, :] + noise * rng.normal(size=(questions, len(SYSTEMS), len(CLAIM_METRICS)))
        units[level] = UnitValues(numerators, np.ones((questions, len(CLAIM_METRICS))), list(SYSTEMS),
                                  list(CLAIM_METRICS), keys)
    return units


def _claims(units, simulated=("fb_0",)):
    rows = [
        {"level": level, "system": s, "family": f, "metric": m, "value": float(v)}
        for level, u in units.items()
        for i, s in enumerate(u.systems)
        for (f, m), v in zip(u.metrics, u.full()[i], strict=True)
    ]
    tau = tau_by_depth(pd.DataFrame(rows))
    boot = tau_replicates(units, resamples=300, seed=11)
    return {c.claim: c for c in trained_claims({"fb_0": tau}, {"fb_0": boot}, simulated=simulated)}


def test_paper_like_values_hold():
    micro = {"sparse": SYSTEMS, "depth1": ("b", "a", "c", "d"), "depth2": ("d", "c", "b", "a")}
    macro = {"sparse": SYSTEMS, "depth1": SYSTEMS, "depth2": ("b", "a", "c", "d")}
    claims = _claims(_units({"micro": micro, "macro": macro}, questions=400, noise=0.1))
    assert claims[FIG3].verdict == HOLDS
    assert "tau -1.0000 at pooling depth 2" in claims[FIG3].kgeval
    assert "400 questions" in claims[FIG3].interval
    assert claims[FIG3].basis == SIMULATED_POOLING
    assert claims[GAP].verdict == HOLDS
    assert "+1.6667" in claims[GAP].kgeval  # macro tau 0.6667, micro -1 at depth 2
    assert claims[FALLS].verdict == HOLDS


def test_unchanged_micro_and_moving_macro_differ():
    micro = {"sparse": SYSTEMS, "depth1": ("d", "c", "b", "a"), "depth2": SYSTEMS}
    macro = {"sparse": SYSTEMS, "depth1": SYSTEMS, "depth2": ("d", "c", "b", "a")}
    claims = _claims(_units({"micro": micro, "macro": macro}, questions=400, noise=0.1), simulated=())
    assert claims[FIG3].verdict == DIFFERS  # tau is 1 in every resample: the interval [1, 1] is not < 1
    assert claims[FIG3].interval.startswith("[1.0000, 1.0000]")
    assert claims[FIG3].basis == MEASURED
    assert claims[GAP].verdict == DIFFERS
    assert claims[FALLS].verdict == DIFFERS  # micro tau rises from -1 to 1


def test_noisy_few_questions_are_inconclusive():
    micro = {"sparse": SYSTEMS, "depth1": SYSTEMS, "depth2": ("b", "a", "c", "d")}
    macro = {"sparse": SYSTEMS, "depth1": SYSTEMS, "depth2": ("a", "b", "d", "c")}
    claims = _claims(_units({"micro": micro, "macro": macro}, questions=12, noise=0.3, seed=4))
    for name in (FIG3, GAP, FALLS):
        assert claims[name].verdict == INCONCLUSIVE, (name, claims[name])
        assert "straddles" in claims[name].reason


def test_no_pooled_level_is_not_checkable():
    units = _units({"micro": {"sparse": SYSTEMS}, "macro": {"sparse": SYSTEMS}}, questions=10, noise=0.1)
    claims = _claims(units)
    assert [c.verdict for c in claims.values()] == [NOT_CHECKABLE]


def test_an_unchanged_ranking_never_holds():
    # every level ranks the systems alike in both families: tau 1, gap 0, no fall
    same = {"sparse": SYSTEMS, "depth1": SYSTEMS, "depth2": SYSTEMS}
    claims = _claims(_units({"micro": same, "macro": same}, questions=400, noise=0.05))
    for name in (FIG3, GAP, FALLS):
        assert claims[name].verdict != HOLDS, (name, claims[name])
    assert claims[FIG3].verdict == DIFFERS  # tau 1 is not below the 0.9 bar


def test_one_swapped_pair_of_four_systems_is_below_the_same_ranking_bar():
    # one adjacent swap among 4 systems: tau 4/6 = 0.667 < 0.9, changed; the bar is IR's, named in the tolerance
    swapped = {"sparse": SYSTEMS, "depth1": SYSTEMS, "depth2": ("b", "a", "c", "d")}
    claims = _claims(_units({"micro": swapped, "macro": swapped}, questions=400, noise=0.05))
    assert claims[FIG3].verdict == HOLDS and "Voorhees" in claims[FIG3].tolerance
