"""The shared claims table: verdicts, reasons, intervals, bases, the interval verdict rule, sorting, numeric
tolerances, and a reader that checks a written table."""

from __future__ import annotations

import math

import pytest

from kgeval.claims import (
    COLUMNS,
    EXACT,
    Claim,
    ClaimFormat,
    Criterion,
    Judgement,
    by_construction,
    combine,
    judge,
    numeric_claim,
    ordinal_claim,
    read_claims,
    stand_in,
    write_claims,
)

E = {"interval": EXACT}


def test_a_claim_needs_a_known_verdict_and_a_reason_unless_it_holds() -> None:
    Claim("s4.x", "Table 4: something", "1", "1", "exact", "holds", **E)
    with pytest.raises(ValueError, match="not one of"):
        Claim("s4.x", "Table 4: something", "1", "1", "exact", "maybe", **E)
    with pytest.raises(ValueError, match="needs a reason"):
        Claim("s4.x", "Table 4: something", "1", "2", "exact", "differs", **E)
    with pytest.raises(ValueError, match="needs a reason"):
        Claim("s4.x", "Fig. 7", "0.8", "", "", "not checkable", "  ")
    with pytest.raises(ValueError, match="must look like"):
        Claim("S4 X", "Table 4", "1", "1", "exact", "holds", **E)
    with pytest.raises(ValueError, match="tab or a newline"):
        Claim("s4.x", "Table 4", "1\t2", "1", "exact", "holds", **E)
    with pytest.raises(ValueError, match="needs an interval"):
        Claim("s4.x", "Table 4: something", "1", "1", "exact", "holds")
    with pytest.raises(ValueError, match="needs a reason"):
        Claim("s4.x", "Table 4: something", "1", "1", "exact", "inconclusive", **E)
    with pytest.raises(ValueError, match="basis"):
        Claim("s4.x", "Table 4: something", "1", "1", "exact", "holds", interval=EXACT, basis="trust me")
    with pytest.raises(ValueError, match="basis"):
        Claim("s4.x", "Table 4: something", "1", "1", "exact", "holds", interval=EXACT, basis="by construction: ")
    assert Claim("s4.x", "T", "1", "1", "", "holds", interval=EXACT, basis=by_construction("fitted and judged on one split"))
    assert stand_in("simulated pooling").startswith("stand-in: ")
    assert stand_in("BootEA", below_strength=True).startswith("stand-in below strength: ")


@pytest.mark.parametrize(
    "low, high, criterion, verdict",
    [
        (0.2, 0.9, Criterion(upper=1.0, strict=True), "holds"),
        (0.2, 1.0, Criterion(upper=1.0, strict=True), "inconclusive"),  # the bound itself is outside a strict region
        (1.0, 1.0, Criterion(upper=1.0, strict=True), "differs"),
        (1.0, 1.0, Criterion(upper=1.0), "holds"),
        (-0.79, 0.48, Criterion(upper=0.0, strict=True), "inconclusive"),
        (-0.68, -0.21, Criterion(upper=0.0, strict=True), "holds"),
        (0.1, 0.2, Criterion(lower=0.3, upper=0.5), "differs"),
        (0.6, 0.7, Criterion(lower=0.3, upper=0.5), "differs"),
        (0.35, 0.45, Criterion(lower=0.3, upper=0.5), "holds"),
        (0.25, 0.55, Criterion(lower=0.3, upper=0.5), "inconclusive"),
        (-math.inf, math.inf, Criterion(lower=0.0), "inconclusive"),
    ],
)
def test_the_verdict_rule_needs_the_whole_interval_on_one_side(low, high, criterion, verdict) -> None:
    point = (max(low, -1) + min(high, 1)) / 2
    assert judge(point, low, high, criterion).verdict == verdict


def test_an_inconclusive_verdict_names_the_side_of_the_point_estimate() -> None:
    assert "holds side" in judge(-0.5, -0.8, 0.5, Criterion(upper=0.0, strict=True)).evidence
    assert "differs side" in judge(0.3, -0.8, 0.5, Criterion(upper=0.0, strict=True)).evidence
    assert judge(float("nan"), 0, 1, Criterion(lower=0)).verdict == "not checkable"


def test_parts_combine_to_the_weakest_verdict() -> None:
    h, d, i, n = (Judgement(v, v) for v in ("holds", "differs", "inconclusive", "not checkable"))
    assert combine([h, h]).verdict == "holds"
    assert combine([h, i]).verdict == "inconclusive"
    assert combine([i, d, h]).verdict == "differs" and combine([i, d, h]).evidence == "differs"
    assert combine([h, n]).verdict == "not checkable"
    assert combine([]).verdict == "not checkable"


def test_numeric_claims_with_intervals() -> None:
    inside = numeric_claim("s2.a", "x", 0.5, 0.51, 0.05, interval=[(0.47, 0.54)],
                           fmt=ClaimFormat(interval_unit="bootstrap over queries"))
    assert inside.verdict == "holds" and inside.interval == "[0.4700, 0.5400] (bootstrap over queries)"
    assert numeric_claim("s2.b", "x", 0.5, 0.7, 0.05, interval=[(0.6, 0.8)]).verdict == "differs"
    unsure = numeric_claim("s2.c", "x", 0.5, 0.52, 0.05, interval=[(0.4, 0.6)])
    assert unsure.verdict == "inconclusive" and "holds side" in unsure.reason
    with pytest.raises(ValueError, match="intervals"):
        numeric_claim("s2.d", "x", [0.5, 0.6], [0.5, 0.6], 0.05, interval=[(0.4, 0.6)])


def test_numeric_claims_hold_within_the_tolerance_per_value() -> None:
    assert numeric_claim("s4.a", "tau", -0.4358, -0.435897, 1e-4, **E).verdict == "holds"  # a truncated print
    differs = numeric_claim("s4.b", "tau", 0.7949, 0.70, 1e-4, **E)
    assert differs.verdict == "differs" and "exceeds the tolerance" in differs.reason
    row = numeric_claim(
        "s4.c", "row", [0.1026, 0.099], [0.10256, 0.09959], [1e-4, 1e-3], fmt=ClaimFormat(kgeval_digits=5), **E
    )
    assert row.verdict == "holds" and row.kgeval == "0.10256; 0.09959" and row.tolerance == "0.0001; 0.001"
    assert numeric_claim("s4.d", "counts", [20466, 0], [20466, 0], 0, **E).paper == "20,466; 0"
    printed = numeric_claim(
        "s4.h", "x", 0.359, 0.35897, 1e-3, fmt=ClaimFormat(digits=3, paper_text="0.359 (Fig. 4)", tolerance_text="3 dp"), **E
    )
    assert (printed.paper, printed.kgeval, printed.tolerance) == ("0.359 (Fig. 4)", "0.359", "3 dp")
    assert numeric_claim("s4.i", "x", 0.5, 0.51234, 0.1, fmt=ClaimFormat(digits=2, kgeval_digits=3), **E).kgeval == "0.512"
    with pytest.raises(ValueError, match="paper values"):
        numeric_claim("s4.e", "x", [1, 2], [1], 0, **E)
    assert ordinal_claim("s2.f", "order", "a > b", "a 2 > b 1", True, **E).verdict == "holds"
    assert ordinal_claim("s2.g", "order", "a > b", "a 1 < b 2", False, reason="reversed", **E).verdict == "differs"


def test_written_tables_are_sorted_unique_and_read_back(tmp_path) -> None:
    rows = [
        Claim("s4.zeta", "Fig. 8", "x", "y", "exact", "holds", interval=EXACT, basis=stand_in("simulated pooling")),
        Claim("s4.alpha", "Fig. 7", "0.8", "", "", "not checkable", "no per-triple ranks released"),
    ]
    path = tmp_path / "claims" / "s4.tsv"
    table = write_claims(rows, path)
    assert list(table["claim"]) == ["s4.alpha", "s4.zeta"]
    back = read_claims(path)
    assert tuple(back.columns) == COLUMNS and list(back["claim"]) == ["s4.alpha", "s4.zeta"]
    assert COLUMNS.index("interval") == COLUMNS.index("kgeval") + 1 and COLUMNS.index("basis") == COLUMNS.index("verdict") + 1
    assert back.set_index("claim").loc["s4.zeta", "basis"] == "stand-in: simulated pooling"
    with pytest.raises(ValueError, match="unique"):
        write_claims(rows + rows[:1], tmp_path / "dup.tsv")
    bad = tmp_path / "bad.tsv"
    bad.write_text("\t".join(COLUMNS) + "\ns4.a\tT\t1\t2\texact\t0\tdiffers\tmeasured\t\n")
    with pytest.raises(ValueError, match="needs a reason"):
        read_claims(bad)
