"""S4's Sec. 4.2 sentences on Tables 3 and 4 (Zhou et al. 2022), one rule each for every tier.

- ``table3_one_to_one_unchanged`` ("the system ranking is fixed on 1-1 category (correlation = 1)"): every Table 3
  tau on 1-1 questions, head and tail, is 1. Where the pooled labels add no answer to a 1-1 question the rankings on
  them coincide whatever the systems: the verdict is then ``by construction``.
- ``table3_many_side_rankings_change`` ("changes drastically on N-1 (Head), 1-N (Tail) and N-N (Head and Tail)
  categories"): every Table 3 tau of those four cells lies below :data:`SAME_RANKING_TAU`, the bar the
  "sparsity changes rankings" sentence uses on every tier.
- ``table4_sparse_distribution_below_0_4`` ("using original 'sparse' distribution ... the correlation coefficients
  for all micro metrics are still much less than 0.4"): every Table 4 tau with the sparse relation distribution lies
  below 0.4, the paper's own bar.
- ``fig3_sparsity_changes_rankings`` on the released tier: the micro MRR tau at the deepest pool below
  :data:`SAME_RANKING_TAU`, the trained tiers' rule (:mod:`kgeval.studies.s4.claims`).

Each tau is judged with :func:`kgeval.claims.judge` on its interval: a bootstrap interval on the trained tiers
(:mod:`kgeval.studies.s4.category_bootstrap`), the point itself on the release (no per-question values to resample).
Strict bounds: an unchanged ranking (tau 1) never supports a "changes" rule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from kgeval.claims import MEASURED, NOT_CHECKABLE, Claim, Criterion, Judgement, by_construction, combine, judge
from kgeval.claims import format_interval, interval_claim
from kgeval.studies.s4.paper import PAPER_TABLE3, PAPER_TABLE4

__all__ = ["SAME_RANKING_TAU", "SAME_RANKING_SOURCE", "TABLE3_METRICS", "TABLE4_METRICS", "CHANGED_CELLS",
           "table3_claims", "table4_claim", "changes_rankings_claim"]

#: the Kendall tau at or above which two system rankings count as the same (Voorhees, "Variations in relevance
#: judgments and the measurement of retrieval effectiveness", IPM 2000: rankings correlated at 0.9 or more are
#: considered equivalent); "sparsity changes rankings" asks tau below it
SAME_RANKING_TAU = 0.9
#: where :data:`SAME_RANKING_TAU` comes from, as the claims' tolerance names it
SAME_RANKING_SOURCE = "Voorhees 2000: tau >= 0.9 counts as the same ranking"
#: Table 3's and Table 4's micro metrics
TABLE3_METRICS: tuple[str, ...] = ("mrr", "hits@1", "hits@3", "hits@10")
TABLE4_METRICS: tuple[str, ...] = ("mr", "mrr", "hits@1", "hits@3", "hits@10")
#: the cells of Table 3 whose rankings the paper says change drastically
CHANGED_CELLS: tuple[tuple[str, str], ...] = (("head", "N-1"), ("tail", "1-N"), ("head", "N-N"), ("tail", "N-N"))
#: Table 4's bar, as the paper prints it
TABLE4_BAR = 0.4

#: (point, low, high) of one tau
Tau = tuple[float, float, float]


def _id(name: str, suffix: str) -> str:
    return f"s4.{name}.{suffix}" if name else f"s4.{suffix}"


def _judged(taus: Mapping[str, Tau], criterion: Criterion) -> tuple[Judgement, str, list[str]]:
    """The combined judgement of the defined taus, their values as text, and the undefined ones."""
    parts, texts, undefined = [], [], []
    for what, (point, low, high) in taus.items():
        if math.isnan(point):
            undefined.append(what)
            continue
        parts.append(judge(point, low, high, criterion, name=f"tau ({what})"))
        texts.append(f"{what} {point:.4f}" + ("" if low == high == point else f" {format_interval(low, high)}"))
    return combine(parts), "; ".join(texts), undefined


def _interval(taus: Mapping[str, Tau], unit: str) -> str:
    """The interval column: the resampling unit, or the release's note when the taus were not resampled."""
    if all(low == high == point for point, low, high in taus.values() if not math.isnan(point)):
        return unit
    return f"per tau in the kgeval column ({unit})"


def table3_claims(
    name: str,
    table3: Mapping[tuple[str, str, str], Tau],
    added_one_to_one: int | None,
    unit: str,
    basis: str = MEASURED,
) -> list[Claim]:
    """The two Table 3 rules on one label set.

    :param name: the label set (``""`` on the release)
    :param table3: ``(side, category, metric)`` -> (tau, low, high); NaN where undefined
    :param added_one_to_one: the answers the pooled labels add to 1-1 questions (None: unknown)
    :param unit: the intervals' resampling unit (or why there is none)
    """
    missing = (math.nan,) * 3
    same = {f"{s} 1-1 {m}": table3.get((s, "1-1", m), missing) for s in ("head", "tail") for m in TABLE3_METRICS}
    judgement, text, undefined = _judged(same, Criterion(lower=1.0))
    statement = "Sec. 4.2, Table 3: the system ranking is fixed on 1-1 relations (tau 1, micro MRR, Hits@1, 3, 10)"
    claim_id, tolerance = _id(name, "table3_one_to_one_unchanged"), "tau = 1 for every 1-1 cell (whole interval)"
    if len(undefined) == len(same):
        rows = [Claim(claim_id, statement, "1.0 for every metric", "", tolerance, NOT_CHECKABLE,
                      "no 1-1 question with a defined tau (no 1-1 relation, or the systems tie)", basis=basis)]
    else:
        row_basis = basis if added_one_to_one != 0 else by_construction(
            "the pooled labels add no answer to 1-1 questions, so their ranks, and the rankings on them, are those of "
            "the sparse labels")
        rows = [interval_claim(claim_id, statement, "1.0 for every metric", text, judgement, _interval(same, unit),
                               tolerance, basis=row_basis,
                               reason=f"undefined: {', '.join(undefined)}" if undefined else "")]
    changed = {f"{s} {c} {m}": table3.get((s, c, m), missing) for s, c in CHANGED_CELLS for m in TABLE3_METRICS}
    judgement, text, undefined = _judged(changed, Criterion(upper=SAME_RANKING_TAU, strict=True))
    paper = max(PAPER_TABLE3[cell][i] for cell in CHANGED_CELLS for i in range(len(TABLE3_METRICS)))
    statement = ("Sec. 4.2, Table 3: the system ranking changes drastically on N-1 (head), 1-N (tail) and N-N (head "
                 "and tail) questions (micro MRR, Hits@1, 3, 10)")
    tolerance = f"tau < {SAME_RANKING_TAU:g} in every such cell (whole interval; {SAME_RANKING_SOURCE})"
    claim_id = _id(name, "table3_many_side_rankings_change")
    if len(undefined) == len(changed):
        rows.append(Claim(claim_id, statement, f"largest {paper:.4f}", "", tolerance, NOT_CHECKABLE,
                          "no defined tau in those cells", basis=basis))
        return rows
    rows.append(interval_claim(claim_id, statement, f"largest {paper:.4f}", text, judgement,
                               _interval(changed, unit), tolerance, basis=basis,
                               reason=f"undefined: {', '.join(undefined)}" if undefined else ""))
    return rows


def table4_claim(name: str, table4: Mapping[str, Tau], unit: str, basis: str = MEASURED) -> Claim:
    """The Table 4 rule on one label set (``table4``: micro metric -> (tau, low, high) with the sparse relation
    distribution)."""
    taus = {m: table4.get(m, (math.nan,) * 3) for m in TABLE4_METRICS}
    judgement, text, undefined = _judged(taus, Criterion(upper=TABLE4_BAR, strict=True))
    statement = ("Sec. 4.2, Table 4: with FB-Test-S's relation distribution every micro tau stays much below 0.4 "
                 "(the relation distribution is not the main cause of the ranking changes)")
    paper = f"largest {max(PAPER_TABLE4['sparse']):.4f}"
    tolerance = f"tau < {TABLE4_BAR:g} for MR, MRR, Hits@1, 3, 10 (the paper's bar; whole interval)"
    if len(undefined) == len(taus):
        return Claim(_id(name, "table4_sparse_distribution_below_0_4"), statement, paper, "", tolerance,
                     NOT_CHECKABLE, "no defined tau", basis=basis)
    return interval_claim(_id(name, "table4_sparse_distribution_below_0_4"), statement, paper, text, judgement,
                          _interval(taus, unit), tolerance, basis=basis,
                          reason=f"undefined: {', '.join(undefined)}" if undefined else "")


def changes_rankings_claim(tau: float, depth: int, systems: int, unit: str) -> Claim:
    """The released tier's "sparsity changes rankings" row, judged as the trained tiers judge it."""
    criterion = Criterion(upper=SAME_RANKING_TAU, strict=True)
    return interval_claim(
        "s4.fig3_sparsity_changes_rankings",
        "Sec. 4.2, Fig. 3: label sparsity changes system rankings: the micro MRR rankings on the sparse and the pooled "
        f"labels are not the same ranking (Kendall's tau below {SAME_RANKING_TAU:g}, IR's bar for equivalent "
        "rankings)",
        "tau -0.2308 (FB-Test-S vs FB-Test-S-C, 13 systems)",
        f"tau {tau:.4f} at pooling depth {depth} ({systems} systems)",
        judge(tau, tau, tau, criterion, name="tau"),
        unit,
        criterion.text("tau") + f" ({SAME_RANKING_SOURCE}; the paper's own figure is far below it)",
    )
