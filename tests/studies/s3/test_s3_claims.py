"""S3 claims: the paper's own Table 2 gives the paper's verdicts; every verdict on small synthetic Tables 2-3 and their
bootstrap replicates, in a holding, a failing and an inconclusive case; relative (not absolute) drops; per-pair ids;
a skipped context; methods below strength never hold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s3.claims import CLAIM_NAMES, S3Evidence, claim_id, relative_drop
from kgeval.studies.s3.claims import s3_claims as _s3_claims
from kgeval.studies.s3.models import METHOD_FAMILIES
from kgeval.studies.s3.replicates import REPLICATED
from kgeval.studies.s3.tables import wide_table


def _replicates(table: pd.DataFrame, spread: float) -> dict:
    """Replicates scattered around each setting's table values (``spread``: their standard deviation)."""
    rng = np.random.default_rng(0)
    out = {}
    for row in table.to_dict("records"):
        if not np.isfinite(row["mrr_all"]):  # a skipped setting has no ranks, hence no replicates
            continue
        key = (row["dataset"], row["bias"], float(row["train_ratio"]), row["model"])
        out[key] = {c: row.get(c, np.nan) + spread * rng.standard_normal(400) for c in REPLICATED}
    return out


def s3_claims(table, ideal, industrial, models, spread=1e-4, below_strength=None, families=METHOD_FAMILIES):
    ev = S3Evidence(table, _replicates(table, spread))
    if below_strength is not None:
        ev = S3Evidence(table, ev.replicates, below_strength=below_strength)
    return _s3_claims(ev, ideal, industrial, models, families)


def _by_id(claims) -> dict:
    return {c.claim: c for c in claims}


MODELS = ["bootea", "rdgcn", "multike", "name_similarity"]
IDEAL = {"bias": "none", "train_ratio": 0.2}
INDUSTRIAL = {"bias": "both", "train_ratio": 0.02}
AT_STRENGTH: dict[str, str] = {}  # every method at its published strength

# --- the paper's own numbers ---------------------------------------------------------------------------------------

#: paper 002, Table 2 ("Overall results under the ideal context and the industrial context"), Hits@1 on the name
#: splits same, close, diff. and the attribute splits small, medium, large, then Hits@1, Hits@5, MRR on all test
#: mappings; the D-W-15K rows of "no bias 2%" are from Table 3 (the size ablation), which has no MED-BBK-9K rows
PAPER_COLUMNS = ("same", "close", "different", "small", "medium", "large", "hits@1", "hits@5", "mrr")
PAPER_ROWS: dict[tuple[str, str, float], dict[str, tuple[float, ...]]] = {
    ("dw15k_v2", "none", 0.2): {  # Table 2, D-W-15K, Ideal
        "bootea": (.868, .902, .753, .721, .821, .912, .818, .922, .864),
        "multike": (.977, .254, .216, .306, .488, .661, .484, .622, .554),
        "rdgcn": (.942, .934, .305, .330, .734, .827, .629, .756, .687),
        "rsn4ea": (.718, .718, .579, .536, .663, .753, .650, .797, .717),
    },
    ("dw15k_v2", "both", 0.02): {  # Table 2, D-W-15K, Industrial
        "bootea": (.050, .051, .023, .015, .040, .053, .037, .092, .065),
        "multike": (.968, .211, .036, .086, .392, .605, .368, .426, .402),
        "rdgcn": (.945, .872, .062, .110, .559, .759, .489, .539, .514),
        "rsn4ea": (.055, .060, .029, .016, .046, .065, .043, .092, .068),
    },
    ("dw15k_v2", "none", 0.02): {  # Table 3, D-W-15K, With No Bias, 2%
        "bootea": (.024, .022, .030, .028, .025, .026, .026, .073, .051),
        "multike": (.969, .224, .048, .121, .428, .639, .394, .463, .433),
        "rdgcn": (.900, .895, .107, .147, .636, .761, .513, .582, .547),
        "rsn4ea": (.026, .015, .031, .025, .021, .034, .027, .056, .044),
    },
    ("med_bbk_9k", "none", 0.2): {  # Table 2, MED-BBK-9K, Ideal
        "bootea": (.334, .259, .328, .388, .201, .265, .307, .495, .399),
        "multike": (.342, .173, .072, .269, .149, .195, .213, .367, .289),
        "rdgcn": (.550, .217, .056, .348, .270, .242, .306, .425, .365),
        "rsn4ea": (.238, .121, .226, .277, .114, .095, .195, .311, .253),
    },
    ("med_bbk_9k", "both", 0.02): {  # Table 2, MED-BBK-9K, Industrial
        "bootea": (.006, .003, .003, .006, .002, .004, .004, .011, .010),
        "multike": (.303, .149, .041, .218, .137, .155, .179, .322, .252),
        "rdgcn": (.329, .083, .013, .201, .120, .086, .158, .239, .199),
        "rsn4ea": (.008, .002, .007, .009, .001, .000, .005, .013, .011),
    },
}
PAPER_MODELS = ["bootea", "multike", "rdgcn", "rsn4ea"]
#: RSN4EA, the paper's fourth method, is structure-only (kgeval has no stand-in for it yet)
PAPER_FAMILIES = {**METHOD_FAMILIES, "rsn4ea": "structure"}
#: the paper prints no split sizes; any size of at least MIN_SPLIT_SIZE (30) lets every split be judged
SPLIT_SIZE = 1000


def _long(rows: dict, split_size: int = SPLIT_SIZE) -> pd.DataFrame:
    """The collated split metrics (``collate_runs``' columns) whose wide table holds ``rows``."""
    records = []
    for (dataset, bias, ratio), methods in rows.items():
        for model, values in methods.items():
            named = dict(zip(PAPER_COLUMNS, values, strict=True))
            metrics = [(s, "hits@1", named[s]) for s in PAPER_COLUMNS[:6]]
            metrics += [("all", m, named[m]) for m in ("hits@1", "hits@5", "mrr")]
            for split, metric, value in metrics:
                kind = "all" if split == "all" else ("name" if split in ("same", "close", "different") else "attr")
                records.append({"dataset": dataset, "model": model, "bias": bias, "train_ratio": ratio, "seed": 0,
                                "split_kind": kind, "split": split, "num_test": split_size, "side": "left",
                                "rank_type": "realistic", "metric": metric, "value": value})
    return pd.DataFrame(records)


def _paper_table(rows: dict = PAPER_ROWS) -> pd.DataFrame:
    """``table3.tsv`` as the pipeline builds it (``wide_table``) from the paper's values."""
    return wide_table(_long(rows))


def test_relative_drop_is_relative_to_the_better_setting():
    # the paper's example (Sec. 4.2): MultiKE on MED-BBK-9K drops 11.4 %, 13.9 %, 43.1 %
    assert np.round([relative_drop(.342, .303), relative_drop(.173, .149), relative_drop(.072, .041)], 3).tolist() == [
        0.114, 0.139, 0.431]
    assert np.isnan(relative_drop(0.0, 0.1))


def test_the_papers_table2_gives_the_papers_verdicts():
    claims = _by_id(s3_claims(_paper_table(), IDEAL, INDUSTRIAL, PAPER_MODELS, below_strength=AT_STRENGTH,
                              families=PAPER_FAMILIES))
    assert sorted(claims) == sorted(claim_id(p, n) for p in ("dw15k_v2", "med_bbk_9k") for n in CLAIM_NAMES)
    for pair in ("dw15k_v2", "med_bbk_9k"):
        for name in CLAIM_NAMES[:3]:  # Table 2's claims
            assert claims[claim_id(pair, name)].verdict == "holds", (pair, name, claims[claim_id(pair, name)].reason)
    for name in ("table3_literal_robust_to_size", "table3_bootstrapping_sensitive_to_size"):  # Table 3: D-W-15K only
        assert claims[claim_id("dw15k_v2", name)].verdict == "holds", name
        assert claims[claim_id("med_bbk_9k", name)].verdict == "not checkable", name
    different = claims[claim_id("med_bbk_9k", "table2_drop_largest_on_different")].kgeval
    assert "multike relative drops same 11.4 %, close 13.9 %, different 43.1 %" in different
    drop = claims[claim_id("med_bbk_9k", "table2_drop_ideal_to_industrial")].kgeval
    assert "mean MRR over the paper's methods (bootea, rsn4ea, multike, rdgcn) 0.327 -> 0.118 (drop 63.9 %)" in drop and "multike 0.289 -> 0.252 (12.8 %)" in drop
    assert "(bootea, rsn4ea, multike, rdgcn) 0.706 -> 0.262" in claims[claim_id("dw15k_v2", "table2_drop_ideal_to_industrial")].kgeval
    assert all(c.basis.startswith("stand-in: ") for c in claims.values() if c.verdict != "not checkable")


def test_absolute_drops_would_misread_the_paper():
    """MultiKE on MED-BBK-9K loses less Hits@1 in absolute terms on 'different' (0.031) than on 'same' (0.039):
    only the relative reading holds, as the paper states."""
    rows = PAPER_ROWS[("med_bbk_9k", "none", 0.2)]["multike"], PAPER_ROWS[("med_bbk_9k", "both", 0.02)]["multike"]
    absolute = [a - b for a, b in zip(rows[0][:3], rows[1][:3])]
    assert absolute[2] < max(absolute[:2])
    table = _paper_table({k: {"multike": v["multike"]} for k, v in PAPER_ROWS.items() if k[0] == "med_bbk_9k"})
    claim = _by_id(s3_claims(table, IDEAL, INDUSTRIAL, ["multike"], below_strength=AT_STRENGTH))
    assert claim[claim_id("med_bbk_9k", "table2_drop_largest_on_different")].verdict == "holds"


def _two_contexts(ideal: dict, industrial: dict, pair: str = "p") -> pd.DataFrame:
    """A built table with the ideal and the industrial rows of the given methods (paper columns)."""
    return _paper_table({(pair, "none", 0.2): ideal, (pair, "both", 0.02): industrial})


def _paper_values(same, close, different, mrr) -> tuple[float, ...]:
    return (same, close, different, .5, .5, .5, .5, .6, mrr)


def test_the_different_claim_differs_when_only_the_absolute_drop_is_largest_there():
    # absolute drops .1, .1, .3 (largest on different); relative 50 %, 50 %, 33 % (smallest on different)
    table = _two_contexts({"rdgcn": _paper_values(.2, .2, .9, .6)}, {"rdgcn": _paper_values(.1, .1, .6, .3)})
    claim = _by_id(s3_claims(table, IDEAL, INDUSTRIAL, ["rdgcn"], below_strength=AT_STRENGTH))
    claim = claim[claim_id("p", "table2_drop_largest_on_different")]
    assert claim.verdict == "differs" and "rdgcn margin" in claim.reason
    assert "same 50.0 %, close 50.0 %, different 33.3 %" in claim.kgeval


@pytest.mark.parametrize(
    ("industrial_mrr", "verdict", "named"),
    [
        ({"bootea": .1, "rdgcn": .3}, "holds", ""),  # mean drop 67 %, each >= 10 %
        ({"bootea": .1, "rdgcn": .57}, "differs", "rdgcn relative drop"),  # mean drop 44 %, rdgcn only 5 %
        ({"bootea": .64, "rdgcn": .48}, "differs", "mean relative drop"),  # each drops 20 %: the mean too, < 30 %
    ],
)
def test_the_dramatic_drop_needs_the_mean_and_each_method(industrial_mrr, verdict, named):
    ideal = {"bootea": _paper_values(.5, .5, .5, .8), "rdgcn": _paper_values(.5, .5, .5, .6)}
    industrial = {m: _paper_values(.4, .4, .4, v) for m, v in industrial_mrr.items()}
    claim = _by_id(s3_claims(_two_contexts(ideal, industrial), IDEAL, INDUSTRIAL, MODELS, below_strength=AT_STRENGTH))
    claim = claim[claim_id("p", "table2_drop_ideal_to_industrial")]
    assert claim.verdict == verdict, claim.reason
    assert named in claim.reason
    assert "bootea 0.800 -> " in claim.kgeval and "rdgcn 0.600 -> " in claim.kgeval  # each method's value


def test_methods_below_strength_never_hold():
    weak = {m: f"{m} (weak)" for m in PAPER_MODELS}
    claims = s3_claims(_paper_table(), IDEAL, INDUSTRIAL, PAPER_MODELS, below_strength=weak, families=PAPER_FAMILIES)
    for claim in claims:
        assert claim.verdict in ("inconclusive", "not checkable"), claim.claim
        assert claim.basis.startswith("stand-in below strength: "), claim.claim
        if claim.verdict == "inconclusive":
            assert "the criterion is met" in claim.reason and "below published strength" in claim.reason


def test_claims_are_judged_per_pair():
    rows = dict(PAPER_ROWS)
    worse = list(rows[("med_bbk_9k", "both", 0.02)]["multike"])
    worse[2] = .070  # MultiKE keeps its 'different' Hits@1 on MED-BBK-9K
    rows[("med_bbk_9k", "both", 0.02)] = {**rows[("med_bbk_9k", "both", 0.02)], "multike": tuple(worse)}
    claims = _by_id(s3_claims(_paper_table(rows), IDEAL, INDUSTRIAL, PAPER_MODELS, below_strength=AT_STRENGTH,
                              families=PAPER_FAMILIES))
    assert claims[claim_id("med_bbk_9k", "table2_drop_largest_on_different")].verdict == "differs"
    assert claims[claim_id("dw15k_v2", "table2_drop_largest_on_different")].verdict == "holds"


def test_a_skipped_context_makes_its_claims_not_checkable():
    """A names-only pair (SRPRS): the industrial context needs attribute bias and is skipped; the size claims stand."""
    table = _paper_table({k: v for k, v in PAPER_ROWS.items() if k[0] == "dw15k_v2"})
    industrial = table["bias"] == "both"
    note = "skipped: bias 'both' needs the attribute split; the attribute split is skipped, not faked"
    value_columns = [c for c in table.columns if c.startswith(("hits@", "mrr", "amri", "zmrr"))]
    table.loc[industrial, value_columns] = np.nan
    table.loc[industrial, "note"] = note
    claims = _by_id(s3_claims(table, IDEAL, INDUSTRIAL, PAPER_MODELS, below_strength=AT_STRENGTH,
                              families=PAPER_FAMILIES))
    for name in ("table2_drop_ideal_to_industrial", "table2_drop_largest_on_different", "table2_structure_below_0.1"):
        claim = claims[claim_id("dw15k_v2", name)]
        assert claim.verdict == "not checkable" and "industrial (both 2%) lacks" in claim.reason, name
        assert "needs the attribute split" in claim.reason, name
    assert claims[claim_id("dw15k_v2", "table3_literal_robust_to_size")].verdict == "holds"


# --- small synthetic tables ----------------------------------------------------------------------------------------


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
        # industrial: the relative drop is largest on "different" in the paper-like case
        rows.append(_row(model, "both", 0.02, 0.45, 0.85, 0.5, 0.05 if paper_like else 0.29, n_different))
    rows.append(_row("bootea", "none", 0.2, 0.8, 0.8, 0.8, 0.8))
    rows.append(_row("bootea", "none", 0.02, 0.03 if paper_like else 0.7, 0.03, 0.03, 0.03))
    rows.append(_row("bootea", "both", 0.02, 0.04 if paper_like else 0.5, 0.04, 0.04, 0.04))
    rows.append(_row("name_similarity", "none", 0.2, 0.5, 1, 0.4, 0))
    return pd.DataFrame(rows)


def _verdicts(table, **kwargs):
    return {c.claim.removeprefix("s3.d."): c.verdict for c in s3_claims(table, IDEAL, INDUSTRIAL, MODELS, **kwargs)}


def test_claims_hold_on_a_paper_like_table():
    assert _verdicts(_table(paper_like=True), below_strength=AT_STRENGTH) == dict.fromkeys(CLAIM_NAMES, "holds")


def test_claims_differ_on_a_contrary_table():
    claims = {c.claim.removeprefix("s3.d."): c for c in s3_claims(_table(paper_like=False), IDEAL, INDUSTRIAL, MODELS)}
    for claim in CLAIM_NAMES:  # the mean MRR drops by 28 % only (0.717 -> 0.517)
        assert claims[claim].verdict == "differs", claim
        assert claims[claim].reason
    assert "(bootea, rdgcn, multike) 0.717 -> 0.517 (drop 27.9 %)" in claims["table2_drop_ideal_to_industrial"].kgeval


def test_small_splits_make_the_split_claim_not_checkable():
    claims = _by_id(s3_claims(_table(True, n_different=12), IDEAL, INDUSTRIAL, MODELS))
    claim = claims["s3.d.table2_drop_largest_on_different"]
    assert claim.verdict == "not checkable"
    assert "fewer than 30 test mappings" in claim.reason and "different (12)" in claim.reason


def test_an_empty_split_is_named_as_empty():
    """DBP15k fr-en: every entity has a URI name, so the 'different' split is empty and its Hits@1 is missing."""
    table = _table(True)
    table["n_different"] = 0
    table["hits@1_different"] = np.nan
    claim = _by_id(s3_claims(table, IDEAL, INDUSTRIAL, MODELS))["s3.d.table2_drop_largest_on_different"]
    assert claim.verdict == "not checkable"
    assert "fewer than 30 test mappings in different (empty)" in claim.reason


def test_the_drop_claim_differs_when_the_industrial_mrr_is_higher():
    table = _table(paper_like=True)
    table.loc[table["bias"] == "both", "mrr_all"] = 0.99
    claim = _by_id(s3_claims(table, IDEAL, INDUSTRIAL, MODELS))["s3.d.table2_drop_ideal_to_industrial"]
    assert claim.verdict == "differs" and "lies outside" in claim.reason


def test_wide_intervals_make_every_claim_inconclusive():
    claims = _by_id(s3_claims(_table(paper_like=True), IDEAL, INDUSTRIAL, MODELS, spread=0.5))
    for name, claim in claims.items():
        assert claim.verdict == "inconclusive", name
        assert "straddles" in claim.reason and "bootstrap over test mappings" in claim.interval, name
        # the fixed list (no strength table) has bootea below strength; the name-using claims rest on the others
        literal_only = name.endswith(("robust_to_size", "largest_on_different"))
        assert claim.basis.startswith("stand-in: kgeval's" if literal_only else "stand-in below strength: BootEA"), name


def test_without_name_using_methods():
    verdicts = _verdicts(_table(True), below_strength=AT_STRENGTH)
    assert verdicts["table2_drop_largest_on_different"] == "holds"
    verdicts = {c.claim: c.verdict for c in s3_claims(_table(True), IDEAL, INDUSTRIAL, ["bootea"])}
    assert verdicts["s3.d.table2_drop_largest_on_different"] == "not checkable"
    assert verdicts["s3.d.table3_literal_robust_to_size"] == "not checkable"


def test_no_pair_gives_one_not_checkable_row_per_claim():
    empty = _table(True).iloc[:0]
    claims = s3_claims(empty, IDEAL, INDUSTRIAL, MODELS)
    assert [c.claim for c in claims] == [f"s3.{n}" for n in CLAIM_NAMES]
    assert {c.verdict for c in claims} == {"not checkable"}


# --- the strength table decides which methods are below strength ---------------------------------------------------


def _strength(hits: dict[str, float]) -> pd.DataFrame:
    """A strength table with one trained protocol row per method (Hits@1 given) and an RDGCN untrained row."""
    from kgeval.studies.s3.strength import strength_table

    rows = [{"dataset": "dbp15k_fr_en", "model": m, "start": "trained", "seed_ratio": 0.3, "protocol": True,
             "num_train": 4500, "num_valid": 450, "num_test": 10050, "hits_at_1": h, "valid_hits_at_1": h,
             "train_seconds": 1.0} for m, h in hits.items()]
    rows.append({**rows[0], "model": "rdgcn", "start": "untrained", "hits_at_1": 0.1})  # never judged
    return strength_table(pd.DataFrame(rows))


def _with_strength(table, models, strength, families=PAPER_FAMILIES):
    from kgeval.studies.s3.claims import strength_evidence

    ev = S3Evidence(table, _replicates(table, 1e-4), **strength_evidence(strength))
    return _by_id(_s3_claims(ev, IDEAL, INDUSTRIAL, models, families))


def test_the_strength_table_decides_the_basis():
    table = _paper_table()
    # bootea at 0.3265 / 0.653 = 0.50 of published; rdgcn at 0.7975 / 0.886 = 0.90; multike has no figure
    strength = _strength({"bootea": 0.3265, "rdgcn": 0.7975, "multike": 0.8, "rsn4ea": 0.6})
    claims = _with_strength(table, PAPER_MODELS, strength)
    drop = claims[claim_id("dw15k_v2", "table2_drop_ideal_to_industrial")]
    assert drop.basis.startswith("stand-in below strength: bootea at 0.50 of published")
    assert drop.verdict == "inconclusive" and "below published strength" in drop.reason
    different = claims[claim_id("dw15k_v2", "table2_drop_largest_on_different")]  # rdgcn, multike: none below
    assert different.basis.startswith("stand-in: multike (Hits@1 0.800; MultiKE") and different.verdict == "holds"
    # rdgcn alone at 0.90 of a figure made with translated names: not like for like, so a stand-in, never "measured"
    only_rdgcn = _with_strength(table, ["rdgcn"], strength)[claim_id("dw15k_v2", "table2_drop_largest_on_different")]
    assert only_rdgcn.basis.startswith("stand-in: rdgcn (Hits@1 0.797, 0.90 of a published figure that is not like "
                                       "for like") and only_rdgcn.verdict == "holds"
    assert "fixed list" not in only_rdgcn.reason
    # a method the table lacks is named, not taken as measured
    lacking = _with_strength(table, ["rdgcn"], _strength({"bootea": 0.6}))
    assert lacking[claim_id("dw15k_v2", "table2_drop_largest_on_different")].basis == (
        "stand-in: rdgcn (not in the strength table)")
    fixed_only = _with_strength(table, ["bootea"], _strength({"rdgcn": 0.8}))  # bootea not in the table
    assert fixed_only[claim_id("dw15k_v2", "table2_structure_below_0.1")].basis.startswith(
        "stand-in below strength: BootEA (")  # the fixed list's entry stands


def test_at_strength_bootea_can_hold_and_the_fixed_list_says_so_without_a_table():
    table = _paper_table()
    at_strength = _strength({"bootea": 0.6, "rdgcn": 0.8, "multike": 0.8, "rsn4ea": 0.6})
    claims = _with_strength(table, ["bootea"], at_strength)
    structure = claims[claim_id("dw15k_v2", "table2_structure_below_0.1")]
    assert structure.verdict == "holds" and structure.basis == "measured"  # bootea at 0.92 of published
    with_rsn = _with_strength(table, ["bootea", "rsn4ea"], at_strength)
    with_rsn = with_rsn[claim_id("dw15k_v2", "table2_structure_below_0.1")]
    # rsn4ea at 0.6 / 0.350, a figure on SRPRS en-fr: another pair, so a stand-in
    assert with_rsn.basis.startswith("stand-in: rsn4ea (Hits@1 0.600, 1.71 of a published figure that is not like")
    weak_rsn = _strength({"bootea": 0.6, "rdgcn": 0.8, "multike": 0.8, "rsn4ea": 0.2})
    weak = _with_strength(table, ["bootea", "rsn4ea"], weak_rsn)[claim_id("dw15k_v2", "table2_structure_below_0.1")]
    assert weak.verdict == "inconclusive" and weak.basis.startswith("stand-in below strength: rsn4ea at 0.57")
    fixed = _with_strength(table, ["bootea"], None)[claim_id("dw15k_v2", "table2_structure_below_0.1")]
    assert fixed.verdict == "inconclusive" and fixed.basis.startswith("stand-in below strength: BootEA")
    assert "no strength table in this tier" in fixed.reason


def _with_names(big: float, small: float | None = None) -> pd.DataFrame:
    """The paper-like table with the name baseline at ``big`` Hits@1 at 20 % and ``small`` (default: the same) at
    2 %, without bias."""
    table = _table(paper_like=True)
    table = table[table["model"] != "name_similarity"]
    values = {0.2: big, 0.02: big if small is None else small}
    names = [_row("name_similarity", "none", r, h, 1, 0.4, 0) for r, h in values.items()]
    return pd.concat([table, pd.DataFrame(names)], ignore_index=True)


def test_robustness_is_judged_on_what_training_adds_over_the_name_baseline():
    # rdgcn and multike at 0.6 -> 0.5, the names at 0.58 -> 0.45: training adds 0.02 at 20 %, within a third of 0.6,
    # and the methods stay above the names at 2 %: their drop is bounded by what training adds
    claim = _by_id(s3_claims(_with_names(0.58, 0.45), IDEAL, INDUSTRIAL, MODELS))["s3.d.table3_literal_robust_to_size"]
    assert claim.verdict == "not checkable"
    assert "cannot tell robust learning from robust names" in claim.reason
    assert "training adds at most +0.020" in claim.reason
    assert "rdgcn gain over name_similarity: 20% +0.020 [" in claim.kgeval
    # the names at 0.58 at both ratios: the methods fall below them at 2 %, having lost more than training added,
    # which the criterion measures: judged
    claim = _by_id(s3_claims(_with_names(0.58), IDEAL, INDUSTRIAL, MODELS))["s3.d.table3_literal_robust_to_size"]
    assert claim.verdict == "holds" and "2% -0.080 [" in claim.kgeval
    # the names at 0.2: training adds 0.4, so a drop could exceed the threshold and the claim is judged
    claim = _by_id(s3_claims(_with_names(0.2), IDEAL, INDUSTRIAL, MODELS))["s3.d.table3_literal_robust_to_size"]
    assert claim.verdict == "holds" and "multike gain over name_similarity: 20% +0.400" in claim.kgeval
    assert "thresholds: robust means a relative drop of at most one third" in claim.reason
    # without the baseline at every ratio: judged as the paper reads it, and the reason says what is unknown
    claim = _by_id(s3_claims(_table(True), IDEAL, INDUSTRIAL, MODELS))["s3.d.table3_literal_robust_to_size"]
    assert claim.verdict != "not checkable" and "what training adds is unknown" in claim.reason


def test_the_drop_claim_averages_the_paper_s_methods_and_names_its_thresholds_provenance():
    table = _table(paper_like=True)
    extra = [_row("gcn_align", bias, ratio, 0.9, 0.9, 0.9, 0.9) for bias, ratio in (("none", 0.2), ("both", 0.02))]
    table = pd.concat([table, pd.DataFrame(extra)], ignore_index=True)
    claim = _by_id(s3_claims(table, IDEAL, INDUSTRIAL, [*MODELS, "gcn_align"]))["s3.d.table2_drop_ideal_to_industrial"]
    alone = _by_id(s3_claims(_table(True), IDEAL, INDUSTRIAL, MODELS))["s3.d.table2_drop_ideal_to_industrial"]
    mean = alone.kgeval.split(";")[0]
    # gcn_align (MRR 0.95 in both contexts) is judged on its own but leaves the mean of the paper's methods alone
    assert mean.startswith("mean MRR over the paper's methods (bootea, rdgcn, multike)")
    assert claim.kgeval.startswith(mean + "; beside the mean: gcn_align") and "gcn_align 0.950 -> 0.950" in claim.kgeval
    assert "set after reading the paper's smallest per-method drop (-12.8 %)" in claim.reason
