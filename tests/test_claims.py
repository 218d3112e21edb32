"""The shared claims table: verdicts, reasons, sorting, numeric tolerances, and a reader that checks a written table."""

from __future__ import annotations

import pytest

from kgeval.claims import COLUMNS, Claim, ClaimFormat, numeric_claim, ordinal_claim, read_claims, write_claims


def test_a_claim_needs_a_known_verdict_and_a_reason_unless_it_holds() -> None:
    Claim("s4.x", "Table 4: something", "1", "1", "exact", "holds")
    with pytest.raises(ValueError, match="not one of"):
        Claim("s4.x", "Table 4: something", "1", "1", "exact", "maybe")
    with pytest.raises(ValueError, match="needs a reason"):
        Claim("s4.x", "Table 4: something", "1", "2", "exact", "differs")
    with pytest.raises(ValueError, match="needs a reason"):
        Claim("s4.x", "Fig. 7", "0.8", "", "", "not checkable", "  ")
    with pytest.raises(ValueError, match="must look like"):
        Claim("S4 X", "Table 4", "1", "1", "exact", "holds")
    with pytest.raises(ValueError, match="tab or a newline"):
        Claim("s4.x", "Table 4", "1\t2", "1", "exact", "holds")


def test_numeric_claims_hold_within_the_tolerance_per_value() -> None:
    assert numeric_claim("s4.a", "tau", -0.4358, -0.435897, 1e-4).verdict == "holds"  # a truncated print
    differs = numeric_claim("s4.b", "tau", 0.7949, 0.70, 1e-4)
    assert differs.verdict == "differs" and "exceeds the tolerance" in differs.reason
    row = numeric_claim(
        "s4.c", "row", [0.1026, 0.099], [0.10256, 0.09959], [1e-4, 1e-3], fmt=ClaimFormat(kgeval_digits=5)
    )
    assert row.verdict == "holds" and row.kgeval == "0.10256; 0.09959" and row.tolerance == "0.0001; 0.001"
    assert numeric_claim("s4.d", "counts", [20466, 0], [20466, 0], 0).paper == "20,466; 0"
    printed = numeric_claim(
        "s4.h", "x", 0.359, 0.35897, 1e-3, fmt=ClaimFormat(digits=3, paper_text="0.359 (Fig. 4)", tolerance_text="3 dp")
    )
    assert (printed.paper, printed.kgeval, printed.tolerance) == ("0.359 (Fig. 4)", "0.359", "3 dp")
    assert numeric_claim("s4.i", "x", 0.5, 0.51234, 0.1, fmt=ClaimFormat(digits=2, kgeval_digits=3)).kgeval == "0.512"
    with pytest.raises(ValueError, match="paper values"):
        numeric_claim("s4.e", "x", [1, 2], [1], 0)
    assert ordinal_claim("s2.f", "order", "a > b", "a 2 > b 1", True).verdict == "holds"
    assert ordinal_claim("s2.g", "order", "a > b", "a 1 < b 2", False, reason="reversed").verdict == "differs"


def test_written_tables_are_sorted_unique_and_read_back(tmp_path) -> None:
    rows = [
        Claim("s4.zeta", "Fig. 8", "x", "y", "exact", "holds"),
        Claim("s4.alpha", "Fig. 7", "0.8", "", "", "not checkable", "no per-triple ranks released"),
    ]
    path = tmp_path / "claims" / "s4.tsv"
    table = write_claims(rows, path)
    assert list(table["claim"]) == ["s4.alpha", "s4.zeta"]
    back = read_claims(path)
    assert tuple(back.columns) == COLUMNS and list(back["claim"]) == ["s4.alpha", "s4.zeta"]
    with pytest.raises(ValueError, match="unique"):
        write_claims(rows + rows[:1], tmp_path / "dup.tsv")
    bad = tmp_path / "bad.tsv"
    bad.write_text("\t".join(COLUMNS) + "\ns4.a\tT\t1\t2\t0\tdiffers\t\n")
    with pytest.raises(ValueError, match="needs a reason"):
        read_claims(bad)
