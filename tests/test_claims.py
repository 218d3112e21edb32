"""The shared claims table: verdicts, reasons, intervals, bases, the interval verdict rule, sorting, numeric
tolerances, and a reader that checks a written table."""

from __future__ import annotations

import math

import pytest

from kgeval.claims import (
    BY_CONSTRUCTION,
    COLUMNS,
    EXACT,
    VERDICTS,
    Claim,
    ClaimFormat,
    Criterion,
    Judgement,
    by_construction,
    combine,
    interval_claim,
    judge,
    measured,
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
    constructed = by_construction("fitted and judged on one split")
    assert Claim("s4.x", "T", "1", "1", "", BY_CONSTRUCTION, constructed, interval=EXACT, basis=constructed)
    assert stand_in("simulated pooling").startswith("stand-in: ")
    assert stand_in("BootEA", below_strength=True).startswith("stand-in below strength: ")


ARGUMENT = "fitted and judged on one split"


@pytest.mark.parametrize("verdict", ["holds", "differs", "inconclusive"])
def test_a_by_construction_basis_needs_the_by_construction_verdict(verdict) -> None:
    with pytest.raises(ValueError, match=r"s4\.x: a by-construction basis needs the verdict 'by construction'"):
        Claim("s4.x", "T", "1", "1", "", verdict, "why", interval=EXACT, basis=by_construction(ARGUMENT))
    with pytest.raises(ValueError, match="by-construction basis"):
        Claim("s4.x", "T", "1", "", "", "not checkable", "no data", basis=by_construction(ARGUMENT))


def test_a_measured_basis_may_name_what_was_compared() -> None:
    basis = measured("compiled statistics pass against the compiled ranking engine")
    assert basis.startswith("measured: ")
    Claim("s4.x", "T", "1", "1", "", "holds", "", interval=EXACT, basis=basis)
    with pytest.raises(ValueError, match="basis 'measured: ' must be"):
        Claim("s4.x", "T", "1", "1", "", "holds", "", interval=EXACT, basis="measured: ")


@pytest.mark.parametrize("basis", ["measured", measured("two passes"), stand_in("simulated pooling")])
def test_the_by_construction_verdict_needs_a_by_construction_basis(basis) -> None:
    with pytest.raises(ValueError, match=r"s4\.x: verdict 'by construction' needs the basis by_construction"):
        Claim("s4.x", "T", "1", "1", "", BY_CONSTRUCTION, ARGUMENT, interval=EXACT, basis=basis)


def test_a_by_construction_row_needs_a_reason_and_an_interval() -> None:
    assert BY_CONSTRUCTION == "by construction" and BY_CONSTRUCTION in VERDICTS
    with pytest.raises(ValueError, match="needs a reason"):
        Claim("s4.x", "T", "1", "1", "", BY_CONSTRUCTION, "", interval=EXACT, basis=by_construction(ARGUMENT))
    with pytest.raises(ValueError, match="needs an interval"):
        Claim("s4.x", "T", "1", "1", "", BY_CONSTRUCTION, ARGUMENT, basis=by_construction(ARGUMENT))


def test_interval_claims_with_a_by_construction_basis_keep_the_judgement_in_the_reason() -> None:
    inside = judge(0.5, 0.4, 0.6, Criterion(lower=0.0, strict=True), name="d")
    claim = interval_claim("s5.a", "x", "> 0", "0.5", inside, "[0.4, 0.6]", "> 0", by_construction(ARGUMENT), "in sample")
    assert claim.verdict == BY_CONSTRUCTION and claim.basis == by_construction(ARGUMENT)
    assert claim.reason == f"computed: holds (in sample; {inside.evidence}); true whatever the data: {ARGUMENT}"
    outside = judge(-0.5, -0.6, -0.4, Criterion(lower=0.0, strict=True), name="d")
    claim = interval_claim("s5.b", "x", "> 0", "-0.5", outside, "[-0.6, -0.4]", "> 0", by_construction(ARGUMENT))
    assert claim.verdict == BY_CONSTRUCTION
    assert claim.reason == f"computed: differs ({outside.evidence}); true whatever the data: {ARGUMENT}"
    unsure = interval_claim("s5.c", "x", "> 0", "0.1", judge(0.1, -0.2, 0.4, Criterion(lower=0.0)), "[-0.2, 0.4]",
                            "> 0", by_construction(ARGUMENT))
    assert unsure.verdict == BY_CONSTRUCTION and unsure.reason.startswith("computed: inconclusive (")
    assert "holds side" in unsure.reason
    # nothing computed: not checkable, on no evidence, the argument kept in the reason
    missing = interval_claim("s5.d", "x", "> 0", "", Judgement("not checkable", "no runs"), "", "> 0",
                             by_construction(ARGUMENT))
    assert missing.verdict == "not checkable" and missing.basis == "measured"
    assert missing.reason == f"no runs; true whatever the data: {ARGUMENT}"


def test_numeric_and_ordinal_claims_with_a_by_construction_basis_keep_the_judgement_in_the_reason() -> None:
    basis = by_construction(ARGUMENT)
    exact = numeric_claim("s4.a", "tau", 0.5, 0.50001, 1e-4, basis=basis, **E)
    assert exact.verdict == BY_CONSTRUCTION and exact.interval == EXACT
    assert exact.reason.startswith("computed: holds (largest difference 1e-05 within the tolerance); ")
    assert exact.reason.endswith(f"true whatever the data: {ARGUMENT}")
    far = numeric_claim("s4.b", "tau", 0.5, 0.7, 1e-4, basis=basis, **E)
    assert far.verdict == BY_CONSTRUCTION and far.reason.startswith("computed: differs (largest difference 0.2 exceeds")
    sampled = numeric_claim("s4.c", "x", 0.5, 0.51, 0.05, interval=[(0.47, 0.54)], basis=basis)
    assert sampled.verdict == BY_CONSTRUCTION and sampled.interval == "[0.4700, 0.5400]"
    assert sampled.reason.startswith("computed: holds (value 1's interval [0.4700, 0.5400] lies inside ")
    holds = ordinal_claim("s2.f", "order", "a > b", "a 2 > b 1", True, "a remark", basis=basis, **E)
    assert (holds.verdict, holds.reason) == (BY_CONSTRUCTION, f"computed: holds (a remark); true whatever the data: {ARGUMENT}")
    differs = ordinal_claim("s2.g", "order", "a > b", "a 1 < b 2", False, basis=basis, **E)
    assert (differs.verdict, differs.reason) == (BY_CONSTRUCTION, f"computed: differs; true whatever the data: {ARGUMENT}")


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
        ordinal_claim("s4.mu", "Sec. 3", "a > b", "a > b", True, basis=by_construction("a > b by definition"), **E),
    ]
    path = tmp_path / "claims" / "s4.tsv"
    table = write_claims(rows, path)
    assert list(table["claim"]) == ["s4.alpha", "s4.mu", "s4.zeta"]
    back = read_claims(path)
    assert tuple(back.columns) == COLUMNS and list(back["claim"]) == ["s4.alpha", "s4.mu", "s4.zeta"]
    assert back.set_index("claim").loc["s4.mu", "verdict"] == "by construction"
    assert COLUMNS.index("interval") == COLUMNS.index("kgeval") + 1 and COLUMNS.index("basis") == COLUMNS.index("verdict") + 1
    assert back.set_index("claim").loc["s4.zeta", "basis"] == "stand-in: simulated pooling"
    with pytest.raises(ValueError, match="unique"):
        write_claims(rows + rows[:1], tmp_path / "dup.tsv")
    bad = tmp_path / "bad.tsv"
    bad.write_text("\t".join(COLUMNS) + "\ns4.a\tT\t1\t2\texact\t0\tdiffers\tmeasured\t\n")
    with pytest.raises(ValueError, match="needs a reason"):
        read_claims(bad)
    bad.write_text("\t".join(COLUMNS) + "\ns4.a\tT\t1\t1\texact\t0\tholds\tby construction: a = a\t\n")
    with pytest.raises(ValueError, match="by-construction basis"):
        read_claims(bad)
