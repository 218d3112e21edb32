"""Fig. 8's claims on the released mean p-values: the gap between micro and macro read on its size, per metric."""

from __future__ import annotations

import pandas as pd

from kgeval.studies.s4.discrimination_claims import discrimination_claims

GAP = "s4.fig8_gap_shrinks_on_complete_labels"


def _summary(sc: dict[tuple[str, str], float]) -> pd.DataFrame:
    rows = [
        ("FB-Test-O", "micro", "mrr", 0.05), ("FB-Test-O", "macro", "mrr", 0.03),
        ("FB-Test-O", "micro", "hits@10", 0.06), ("FB-Test-O", "macro", "hits@10", 0.07),
        ("FB-Test-O", "macro", "map@20", 0.01), ("FB-Test-O", "macro", "ndcg@20", 0.015),
    ]
    rows += [("FB-Test-S-C", family, metric, value) for (family, metric), value in sc.items()]
    return pd.DataFrame(rows, columns=["test_set", "family", "metric", "mean_pvalue"])


def _evaluation() -> pd.DataFrame:
    rows = [(t, f"s{i}", "micro", "mr", v) for t, v in (("WN18RR", 3000.0), ("FB-Test-O", 200.0),
                                                         ("FB-Test-S-C", 200.0)) for i in range(3)]
    return pd.DataFrame(rows, columns=["test_set", "system", "family", "metric", "value"])


def _gap(sc) -> object:
    return {c.claim: c for c in discrimination_claims(_summary(sc), _evaluation())}[GAP]


def test_the_gap_holds_only_where_its_size_shrinks_for_both_metrics():
    # O: MRR gap +0.02, Hits@10 -0.01
    shrinks = {("micro", "mrr"): 0.04, ("macro", "mrr"): 0.03, ("micro", "hits@10"): 0.05, ("macro", "hits@10"): 0.055}
    assert _gap(shrinks).verdict == "holds"
    # the MRR gap turns from +0.02 to -0.02: the same size, not smaller
    flipped = {**shrinks, ("micro", "mrr"): 0.03, ("macro", "mrr"): 0.05}
    claim = _gap(flipped)
    assert claim.verdict == "differs" and "grows on FB-Test-S-C for mrr" in claim.reason
    # the Hits@10 gap doubles while MRR's shrinks a little (the release's pattern)
    doubled = {**shrinks, ("micro", "hits@10"): 0.05, ("macro", "hits@10"): 0.07}
    claim = _gap(doubled)
    assert claim.verdict == "differs" and "hits@10" in claim.reason
    assert "signed" in claim.kgeval and "|micro - macro|" in claim.kgeval
