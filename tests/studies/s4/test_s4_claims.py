"""S4's claims on this tier's systems: tau tables built from metrics whose rankings are known."""

from __future__ import annotations

import pandas as pd

from kgeval.claims import DIFFERS, HOLDS, NOT_CHECKABLE
from kgeval.studies.s4.analysis import tau_by_depth
from kgeval.studies.s4.claims import trained_claims

SYSTEMS = ("a", "b", "c", "d")


def _metrics(micro_orders: dict[str, tuple[str, ...]], macro_orders: dict[str, tuple[str, ...]]) -> pd.DataFrame:
    """A long metrics table: at each level, systems get values by their position in the given order (best first)."""
    rows = []
    for family, orders in (("micro", micro_orders), ("macro", macro_orders)):
        for level, order in orders.items():
            for metric in ("mrr", "hits@10"):
                for position, system in enumerate(order):
                    rows.append({"level": level, "system": system, "family": family, "metric": metric,
                                 "value": 1.0 - 0.1 * position})
    return pd.DataFrame(rows)


def _claims(metrics):
    return {c.claim: c for c in trained_claims({"fb_0": tau_by_depth(metrics)})}


def test_paper_like_tables_hold():
    micro = {"sparse": SYSTEMS, "depth1": ("b", "a", "c", "d"), "depth2": ("d", "c", "b", "a")}
    macro = {"sparse": SYSTEMS, "depth1": SYSTEMS, "depth2": ("b", "a", "c", "d")}
    claims = _claims(_metrics(micro, macro))
    assert claims["s4.fb_0.fig3_sparsity_changes_rankings"].verdict == HOLDS
    assert "tau -1.0000 at pooling depth 2" in claims["s4.fb_0.fig3_sparsity_changes_rankings"].kgeval
    assert claims["s4.fb_0.fig5_macro_more_stable_than_micro"].verdict == HOLDS
    # macro tau 0.6667, micro -1 at depth 2: the gap is 1.6667
    assert "+1.6667" in claims["s4.fb_0.fig5_macro_more_stable_than_micro"].kgeval
    assert claims["s4.fb_0.fig5_tau_falls_with_depth"].verdict == HOLDS


def test_macro_moving_more_differs():
    micro = {"sparse": SYSTEMS, "depth1": SYSTEMS, "depth2": SYSTEMS}
    macro = {"sparse": SYSTEMS, "depth1": SYSTEMS, "depth2": ("d", "c", "b", "a")}
    claims = _claims(_metrics(micro, macro))
    assert claims["s4.fb_0.fig3_sparsity_changes_rankings"].verdict == DIFFERS
    assert claims["s4.fb_0.fig5_macro_more_stable_than_micro"].verdict == DIFFERS


def test_no_pooled_level_is_not_checkable():
    claims = _claims(_metrics({"sparse": SYSTEMS}, {"sparse": SYSTEMS}))
    assert [c.verdict for c in claims.values()] == [NOT_CHECKABLE]
