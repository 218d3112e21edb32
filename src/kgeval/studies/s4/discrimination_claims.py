"""S4's claims on discriminative power (Zhou et al. 2022, Sec. 5.2, Fig. 8) and the systems' mean rank, checked on
the authors' released results.

Fig. 8 compares the mean p-value (the area under the curve of sorted pairwise p-values over the 78 pairs of the 13
systems) of micro and macro metrics on FB-Test-O, WN18RR and FB-Test-S-C; "almost all macro metrics are more
discriminative" is read, on FB15k-237 and on WN18RR alike, as at least 3 of the 4 macro metrics below both micro ones. "The gap ... decreases" is read on the gap's size,
``|micro - macro|``, for MRR and for Hits@10: a gap that changes sign is not a smaller gap.
"""

from __future__ import annotations

import pandas as pd

from kgeval.claims import NOT_CHECKABLE, Claim, ordinal_claim

__all__ = ["NOT_RESAMPLED", "discrimination_claims"]

#: the interval of an ordering or sign judged on the authors' released per-system numbers: they carry query noise,
#: but the release lacks the unit to resample, so the verdict is on the paper's own numbers as released
NOT_RESAMPLED = (
    "not resampled: the release has per-system aggregates only (no per-query values); decided on the authors' "
    "released numbers"
)
_NOT_RESAMPLED = NOT_RESAMPLED


def _mean_pvalues(mean_p: pd.Series, test_set: str) -> dict[str, float]:
    """The mean p-values of Fig. 8's metrics on one test set."""
    return {
        name: float(mean_p.loc[(test_set, family, metric)])
        for name, family, metric in (
            ("micro mrr", "micro", "mrr"),
            ("micro hits@10", "micro", "hits@10"),
            ("macro mrr", "macro", "mrr"),
            ("macro hits@10", "macro", "hits@10"),
            ("map@20", "macro", "map@20"),
            ("ndcg@20", "macro", "ndcg@20"),
        )
    }


def _macro_claim(claim: str, figure: str, o: dict[str, float]) -> Claim:
    """'almost all macro metrics are more discriminative than micro metrics on incomplete test set' on one test set:
    at least 3 of the 4 macro metrics below both micro ones, the rule of every tier."""
    macro = ("macro mrr", "macro hits@10", "map@20", "ndcg@20")
    better = [m for m in macro if o[m] < min(o["micro mrr"], o["micro hits@10"])]
    text = "mean p-value (area under the curve / 78 pairs): " + "; ".join(f"{k} {v:.4f}" for k, v in o.items())
    return ordinal_claim(
        claim,
        f"Sec. 5.2, {figure} (incomplete labels) almost all macro metrics are more discriminative than the micro ones",
        "most macro metrics below both micro curves",
        f"{len(better)} of 4 macro metrics ({', '.join(better) or 'none'}) below both micro metrics; {text}",
        len(better) >= 3,
        reason="" if len(better) >= 3 else "fewer than three macro metrics are more discriminative",
        tolerance="at least 3 of 4 macro metrics",
        interval=_NOT_RESAMPLED,
    )


def _fig8_claims(summary: pd.DataFrame) -> list[Claim]:
    """Sec. 5.2, Fig. 8: discriminative power (mean p-values) of micro and macro metrics."""
    rows = []
    mean_p = summary.set_index(["test_set", "family", "metric"])["mean_pvalue"]
    for claim, test_set, figure in (
        ("s4.fig8_macro_more_discriminative_on_fb15k237", "FB-Test-O", "Fig. 8a: on FB15k-237"),
        ("s4.fig8b_macro_more_discriminative_on_wn18rr", "WN18RR", "Fig. 8b: on WN18RR"),
    ):
        try:
            rows.append(_macro_claim(claim, figure, _mean_pvalues(mean_p, test_set)))
        except KeyError:
            rows.append(Claim(claim, f"Sec. 5.2, {figure} (incomplete labels) almost all macro metrics are more "
                              "discriminative than the micro ones", "most macro metrics below both micro curves", "",
                              "at least 3 of 4 macro metrics", NOT_CHECKABLE,
                              f"the released discriminative power lacks {test_set}'s micro MRR and Hits@10, macro MRR, "
                              "Hits@10, MAP@20 or nDCG@20 p-values"))
    o = _mean_pvalues(mean_p, "FB-Test-O")
    gaps = {
        (test_set, metric): float(mean_p.loc[(test_set, "micro", metric)] - mean_p.loc[(test_set, "macro", metric)])
        for test_set in ("FB-Test-O", "FB-Test-S-C")
        for metric in ("mrr", "hits@10")
    }
    shrinks = {m: abs(gaps[("FB-Test-S-C", m)]) < abs(gaps[("FB-Test-O", m)]) for m in ("mrr", "hits@10")}
    grows = [m for m, ok in shrinks.items() if not ok]
    rows.append(
        ordinal_claim(
            "s4.fig8_gap_shrinks_on_complete_labels",
            "Sec. 5.2, Fig. 8: the gap in discriminative power between micro and macro metrics decreases on the "
            "complete FB-Test-S-C (the gap's size, for MRR and for Hits@10)",
            "the micro-macro gap smaller on FB-Test-S-C",
            "; ".join(
                f"{m}: |micro - macro| mean p-value FB-Test-O {abs(gaps[('FB-Test-O', m)]):.4f} -> FB-Test-S-C "
                f"{abs(gaps[('FB-Test-S-C', m)]):.4f} (signed {gaps[('FB-Test-O', m)]:+.4f} -> "
                f"{gaps[('FB-Test-S-C', m)]:+.4f})"
                for m in ("mrr", "hits@10")
            ),
            not grows,
            reason="" if not grows else f"the gap grows on FB-Test-S-C for {', '.join(grows)}",
            tolerance="|micro - macro| smaller on FB-Test-S-C than on FB-Test-O, MRR and Hits@10",
            interval=_NOT_RESAMPLED,
        )
    )
    mrr_sign = o["macro mrr"] < o["micro mrr"]
    hits_sign = o["macro hits@10"] < o["micro hits@10"]
    rows.append(
        ordinal_claim(
            "s4.fig8_hits10_inconsistent",
            "Sec. 5.2, Fig. 8: Hits@10 changes its discriminative power between micro and macro inconsistently with MRR",
            "Hits@10 and MRR differ in which family is more discriminative",
            f"FB-Test-O: macro better for MRR: {mrr_sign}; for Hits@10: {hits_sign}",
            mrr_sign != hits_sign,
            reason="" if mrr_sign != hits_sign else "Hits@10 behaves as MRR",
            interval=_NOT_RESAMPLED,
        )
    )
    return rows


def _mean_rank_claims(evaluation: pd.DataFrame) -> list[Claim]:
    """Sec. 5.2: the 13 systems' mean micro MR per test set."""
    rows = []
    mr = evaluation.loc[(evaluation["family"] == "micro") & (evaluation["metric"] == "mr")]
    means = mr.groupby("test_set")["value"].mean()
    for claim, test_sets, paper in (
        ("s4.sec5_2_mean_rank_wn18rr", ("WN18RR",), 3000.0),
        ("s4.sec5_2_mean_rank_fb15k237", ("FB-Test-O", "FB-Test-S-C"), 200.0),
    ):
        values = [float(means[t]) for t in test_sets]
        ok = all(paper / 1.5 <= v <= paper * 1.5 for v in values)
        rows.append(
            ordinal_claim(
                claim,
                f"Sec. 5.2: the micro MR of the 13 systems averages around {paper:,.0f} on "
                f"{' and '.join(test_sets)}",
                f"around {paper:,.0f}",
                "; ".join(f"{t} {v:.1f}" for t, v in zip(test_sets, values, strict=True)),
                ok,
                reason="" if ok else "off by more than a factor 1.5",
                tolerance="within a factor 1.5 ('around')",
                interval=_NOT_RESAMPLED,
            )
        )
    return rows


def discrimination_claims(summary: pd.DataFrame, evaluation: pd.DataFrame) -> list[Claim]:
    """The Sec. 5.2 claims: Fig. 8's discriminative power (``summary``: the released mean p-values) and the
    systems' mean micro MR (``evaluation``)."""
    return _fig8_claims(summary) + _mean_rank_claims(evaluation)
