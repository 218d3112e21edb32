"""S5 claims from synthetic collated tables: verdicts follow the fixed criteria, empty GB is visible."""

import pandas as pd

from kgeval.claims import read_claims
from kgeval.studies.s5.claims import s5_claims, write_s5_claims

RUNS = [("nations", "transe", 0), ("nations", "rotate", 0)]


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


def _verdicts(**kwargs):
    return {c.claim: c for c in s5_claims(*_tables(**kwargs))}


def test_claims_hold_on_paper_like_tables():
    claims = _verdicts()
    assert len(claims) == 6
    assert all(c.verdict == "holds" for c in claims.values()), claims
    assert "GB empty in 2 runs" in claims["s5.strategies_nonsensical_easier"].kgeval
    assert "gb: 0-0 negatives" in claims["s5.strategies_nonsensical_easier"].kgeval


def test_claims_differ_where_the_criteria_fail():
    claims = _verdicts(platt_selected=True, pct=-50.0, overlap=0.0, tc_easier=True)
    for name in (
        "s5.isotonic_beats_platt_r2w",
        "s5.t_a_fraction_of_t_lp",
        "s5.t_a_end_to_end_fraction_of_t_lp",
        "s5.table2_overlap_ge_78",
        "s5.strategies_nonsensical_easier",
    ):
        assert claims[name].verdict == "differs" and claims[name].reason, name
    assert claims["s5.posteriors_correlate_with_ranks"].verdict == "holds"


def test_claims_file_is_valid(tmp_path):
    paths = []
    for name, table in zip(("calibrators", "assessment", "timing", "overlap"), _tables(), strict=True):
        path = tmp_path / f"{name}.tsv"
        table.to_csv(path, sep="\t", index=False)
        paths.append(path)
    write_s5_claims(*paths, out=tmp_path / "s5.tsv")
    table = read_claims(tmp_path / "s5.tsv")
    assert list(table["claim"]) == sorted(table["claim"]) and len(table) == 6
