"""S3 claims: every verdict on small synthetic Tables 2-3 and their bootstrap replicates, in a holding, a failing and
an inconclusive case."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kgeval.studies.s3.claims import S3Evidence
from kgeval.studies.s3.claims import s3_claims as _s3_claims
from kgeval.studies.s3.replicates import REPLICATED


def _replicates(table: pd.DataFrame, spread: float) -> dict:
    """Replicates scattered around each setting's table values (``spread``: their standard deviation)."""
    rng = np.random.default_rng(0)
    out = {}
    for row in table.to_dict("records"):
        key = (row["dataset"], row["bias"], float(row["train_ratio"]), row["model"])
        out[key] = {c: row.get(c, np.nan) + spread * rng.standard_normal(400) for c in REPLICATED}
    return out


def s3_claims(table, ideal, industrial, models, spread=1e-4):
    return _s3_claims(S3Evidence(table, _replicates(table, spread)), ideal, industrial, models)

MODELS = ["bootea", "rdgcn", "multike", "name_similarity"]
IDEAL = {"bias": "none", "train_ratio": 0.2}
INDUSTRIAL = {"bias": "both", "train_ratio": 0.02}


def _row(model, bias, ratio, h1, same, close, different, n=100):
    return {
        "dataset": "d", "bias": bias, "train_ratio": ratio, "model": model, "hits@1_all": h1, "mrr_all": h1 + 0.05,
        "hits@1_same": same, "hits@1_close": close, "hits@1_different": different,
        "n_same": n, "n_close": n, "n_different": n,
    }


def _table(paper_like: bool, n_different: int = 100) -> pd.DataFrame:
    rows = []
    for model in ("rdgcn", "multike"):
        rows.append(_row(model, "none", 0.2, 0.6, 0.9, 0.6, 0.3, n_different))
        rows.append(_row(model, "none", 0.02, 0.5 if paper_like else 0.2, 0.9, 0.5, 0.2, n_different))
        # industrial: the drop is largest on "different" in the paper-like case
        rows.append(_row(model, "both", 0.02, 0.45, 0.85, 0.5, 0.05 if paper_like else 0.29, n_different))
    rows.append(_row("bootea", "none", 0.2, 0.8, 0.8, 0.8, 0.8))
    rows.append(_row("bootea", "none", 0.02, 0.03 if paper_like else 0.7, 0.03, 0.03, 0.03))
    rows.append(_row("bootea", "both", 0.02, 0.04 if paper_like else 0.5, 0.04, 0.04, 0.04))
    rows.append(_row("name_similarity", "none", 0.2, 0.5, 1, 0.4, 0))
    return pd.DataFrame(rows)


def _verdicts(table):
    return {c.claim: c.verdict for c in s3_claims(table, IDEAL, INDUSTRIAL, MODELS)}


def test_claims_hold_on_a_paper_like_table():
    verdicts = _verdicts(_table(paper_like=True))
    assert verdicts == {
        "s3.table2_drop_ideal_to_industrial": "holds",
        "s3.table2_drop_largest_on_different": "holds",
        "s3.table2_structure_below_0.1": "holds",
        "s3.table3_literal_robust_to_size": "holds",
        "s3.table3_bootstrapping_sensitive_to_size": "holds",
    }


def test_claims_differ_on_a_contrary_table():
    claims = {c.claim: c for c in s3_claims(_table(paper_like=False), IDEAL, INDUSTRIAL, MODELS)}
    for claim in (
        "s3.table2_drop_largest_on_different",
        "s3.table2_structure_below_0.1",
        "s3.table3_literal_robust_to_size",
        "s3.table3_bootstrapping_sensitive_to_size",
    ):
        assert claims[claim].verdict == "differs", claim
        assert claims[claim].reason
    assert claims["s3.table2_drop_ideal_to_industrial"].verdict == "holds"  # mean MRR still drops


def test_small_splits_make_the_split_claim_not_checkable():
    claims = {c.claim: c for c in s3_claims(_table(True, n_different=12), IDEAL, INDUSTRIAL, MODELS)}
    claim = claims["s3.table2_drop_largest_on_different"]
    assert claim.verdict == "not checkable" and "fewer than 30 test mappings" in claim.reason and "different (12)" in claim.reason


def test_the_drop_claim_differs_when_the_industrial_mrr_is_higher():
    table = _table(paper_like=True)
    industrial = table["bias"] == "both"
    table.loc[industrial, "mrr_all"] = 0.99
    claim = {c.claim: c for c in s3_claims(table, IDEAL, INDUSTRIAL, MODELS)}["s3.table2_drop_ideal_to_industrial"]
    assert claim.verdict == "differs" and "lies outside" in claim.reason


def test_wide_intervals_make_every_claim_inconclusive():
    claims = {c.claim: c for c in s3_claims(_table(paper_like=True), IDEAL, INDUSTRIAL, MODELS, spread=0.5)}
    for name, claim in claims.items():
        assert claim.verdict == "inconclusive", name
        assert "straddles" in claim.reason and "bootstrap over test mappings" in claim.interval, name
        assert claim.basis.startswith("stand-in below strength: "), name


def test_without_name_using_methods():
    table = _table(True)
    verdicts = {c.claim: c.verdict for c in s3_claims(table, IDEAL, INDUSTRIAL, ["bootea"])}
    assert verdicts["s3.table2_drop_largest_on_different"] == "not checkable"
    assert verdicts["s3.table3_literal_robust_to_size"] == "not checkable"

