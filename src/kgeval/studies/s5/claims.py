"""S5's claims (paper 004, Sec. 6.1-6.3, Table 1, Table 2, Fig. 2) checked on kgeval's own S5 tables.

Inputs: the collated S5 tables (:mod:`kgeval.studies.s5.assessment`): ``calibrators.tsv`` (validation, one row per
fitted function), ``assessment.tsv`` (test), ``table1_timing.tsv`` and ``table2_overlap.tsv``. Each criterion is
fixed here from the paper's wording before looking at the results; a ``differs`` is a finding, never tuned.

- ``s5.isotonic_beats_platt_r2w`` (Sec. 6.1, takeaways): "all of the calibration functions that achieve the best
  R2_w results over the validation split were learned using isotonic regression": holds iff the selected function
  (validation ``r2_w`` of Eq. 8) is isotonic in every run.
- ``s5.posteriors_correlate_with_ranks`` (Sec. 6.1): "many calibration functions exhibit high correlation (r_xy)";
  holds iff ``r_xy > 0`` (LCWA, selected function) in every run and ``r_xy >= 0.5`` in more than half of them.
- ``s5.t_a_fraction_of_t_lp`` and ``s5.t_a_end_to_end_fraction_of_t_lp`` (Sec. 6.3, Table 1): the time reduction
  is at least 77 % (the paper's minimum, TorusE on NELL-995): holds iff ``%Delta t <= -77`` in every run, with
  ``t_A`` as Sec. 6.3 defines it and end to end respectively.
- ``s5.table2_overlap_ge_78`` (Sec. 6.3, Table 2): holds iff the overlap is at least 78 % for every dataset and seed
  (not checkable with fewer than two models).
- ``s5.strategies_nonsensical_easier`` (Sec. 5 "expected behavior", Fig. 2): for the selected function, ``BS_w``
  lower and ``BA`` higher with GB+LC negatives than with TC negatives, in every run where both have negatives.
  The numbers of negatives per strategy are given, so an empty GB is visible.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from kgeval.claims import NOT_CHECKABLE, Claim, ordinal_claim, write_claims
from kgeval.io import read_tsv

__all__ = ["s5_claims", "write_s5_claims", "PAPER_MIN_REDUCTION", "PAPER_MIN_OVERLAP"]

#: the smallest time reduction of Table 1 (TorusE, NELL-995), percent
PAPER_MIN_REDUCTION = 77.0
#: the smallest overlap of Table 2
PAPER_MIN_OVERLAP = 0.78

_RUN = ["dataset", "model", "seed"]


def _bool(series: pd.Series) -> pd.Series:
    return series.astype(str).str.lower().isin(["true", "1", "1.0"])


def _range(values: pd.Series | np.ndarray) -> str:
    values = np.asarray(values, dtype=float)
    if not len(values):
        return "n/a"
    return f"min {np.nanmin(values):.4f}, median {np.nanmedian(values):.4f}, max {np.nanmax(values):.4f}"


def _isotonic_claim(calibrators: pd.DataFrame) -> Claim:
    selected = calibrators[_bool(calibrators["selected"])]
    n = len(selected)
    iso = int((selected["method"] == "isotonic").sum())
    others = selected.loc[selected["method"] != "isotonic", _RUN].astype(str)
    losers = ["/".join(row) for row in others.itertuples(index=False)]
    return ordinal_claim(
        "s5.isotonic_beats_platt_r2w",
        "Sec. 6.1: the best function by validation R2_w (Eq. 8) is isotonic regression in every run, never Platt",
        "isotonic in every run (9 methods x 8 datasets)",
        f"isotonic in {iso} of {n} runs" + (f"; Platt in {', '.join(losers)}" if losers else ""),
        holds=n > 0 and iso == n,
        reason="" if n and iso == n else "Platt (gradient descent) has the larger validation R2_w of Eq. 8 there",
        tolerance="every run",
    )


def _correlation_claim(assessment: pd.DataFrame) -> Claim:
    a = assessment[_bool(assessment["selected"]) & (assessment["strategy"] == "lcwa")]
    r = a[a["metric"] == "pearson_r"]["value"].astype(float).to_numpy()
    holds = len(r) > 0 and bool(np.all(r > 0)) and float(np.mean(r >= 0.5)) > 0.5
    return ordinal_claim(
        "s5.posteriors_correlate_with_ranks",
        "Sec. 6.1: posteriors of the selected function correlate with relative ranks (Eq. 18-19, LCWA, test)",
        "high r_xy for many functions; low for BoxE, RotatE, RotPro",
        f"r_xy {_range(r)}; >= 0.5 in {int(np.sum(r >= 0.5))} of {len(r)} runs",
        holds=holds,
        reason="" if holds else "r_xy not positive in every run, or not >= 0.5 in most runs",
        tolerance="r_xy > 0 in every run and >= 0.5 in more than half",
    )


def _timing_claim(timing: pd.DataFrame, column: str, claim: str, which: str) -> Claim:
    pct = timing[column].astype(float).to_numpy()
    fraction = (timing[column.replace("pct_delta_t", "t_a")].astype(float) / timing["t_lp"].astype(float)).to_numpy()
    holds = len(pct) > 0 and bool(np.all(pct <= -PAPER_MIN_REDUCTION))
    return ordinal_claim(
        claim,
        f"Sec. 6.3, Table 1: t_A ({which}) is a small fraction of t_LP, a reduction of at least 77 % in every run",
        "%dt from -77.0 to -98.9",
        f"%dt {_range(pct)}; t_A/t_LP {_range(fraction)}; <= -77 in {int(np.sum(pct <= -PAPER_MIN_REDUCTION))} "
        f"of {len(pct)} runs",
        holds=holds,
        reason="" if holds else f"reduction below the paper's minimum of 77 % in {int(np.sum(pct > -77))} runs",
        tolerance="%dt <= -77 in every run",
    )


def _overlap_claim(overlap: pd.DataFrame) -> Claim:
    usable = overlap[overlap["num_pairs"].astype(float) > 0]
    if not len(usable):
        return Claim(
            "s5.table2_overlap_ge_78",
            "Sec. 6.3, Table 2: orders by MR' and by mean posterior share >= 78 % of pairwise comparisons",
            ">= 78 % on every dataset",
            "no dataset with two or more models",
            ">= 0.78",
            NOT_CHECKABLE,
            "the configuration studies fewer than two models per dataset, so there are no comparisons",
        )
    values = usable["overlap"].astype(float).to_numpy()
    holds = bool(np.all(values >= PAPER_MIN_OVERLAP))
    return ordinal_claim(
        "s5.table2_overlap_ge_78",
        "Sec. 6.3, Table 2: orders by MR' and by mean posterior share >= 78 % of pairwise comparisons",
        ">= 78 % on every dataset (9 models)",
        f"overlap {_range(values)} over {len(values)} dataset/seed pairs, "
        f"{int(usable['num_models'].astype(float).max())} models at most",
        holds=holds,
        reason="" if holds else "overlap below 78 % for some dataset and seed",
        tolerance=">= 0.78 everywhere",
    )


def _strategy_claim(assessment: pd.DataFrame) -> Claim:
    a = assessment[_bool(assessment["selected"])]
    wide = a.pivot_table(index=_RUN + ["strategy"], columns="metric", values="value", aggfunc="first").reset_index()
    counts = wide.groupby("strategy")["num_negatives"].agg(["min", "max"]) if "num_negatives" in wide else None
    count_text = (
        "; ".join(f"{s}: {int(row['min']):,}-{int(row['max']):,} negatives" for s, row in counts.iterrows())
        if counts is not None
        else "no counts"
    )
    if "gb" in set(wide["strategy"]):
        empty_gb = int((wide[wide["strategy"] == "gb"]["num_negatives"] == 0).sum())
        count_text += f"; GB empty in {empty_gb} runs (GB+LC is then LC)"
    nons = wide[wide["strategy"] == "gb+lc"].set_index(_RUN)
    tc = wide[wide["strategy"] == "tc"].set_index(_RUN)
    both = nons.join(tc, lsuffix="_n", rsuffix="_t", how="inner")
    both = both[(both["num_negatives_n"] > 0) & (both["num_negatives_t"] > 0)]
    if not len(both):
        return Claim(
            "s5.strategies_nonsensical_easier",
            "Sec. 5/6.1, Fig. 2: nonsensical (GB+LC) negatives are easier than plausible (TC): lower BS_w, higher BA",
            "as expected for all functions",
            count_text,
            "every run",
            NOT_CHECKABLE,
            "no run has both GB+LC and TC negatives (or the strategies were not assessed)",
        )
    ok = (both["bs_w_n"] < both["bs_w_t"]) & (both["ba_n"] > both["ba_t"])
    return ordinal_claim(
        "s5.strategies_nonsensical_easier",
        "Sec. 5/6.1, Fig. 2: nonsensical (GB+LC) negatives are easier than plausible (TC): lower BS_w, higher BA",
        "as expected for all functions",
        f"as expected in {int(ok.sum())} of {len(both)} runs; {count_text}",
        holds=bool(ok.all()),
        reason="" if ok.all() else "BS_w or BA ordered the other way in some runs",
        tolerance="every run with both",
    )


def s5_claims(
    calibrators: pd.DataFrame, assessment: pd.DataFrame, timing: pd.DataFrame, overlap: pd.DataFrame
) -> list[Claim]:
    """The S5 claims (module docstring) from the collated tables."""
    return [
        _isotonic_claim(calibrators),
        _correlation_claim(assessment),
        _timing_claim(timing, "pct_delta_t", "s5.t_a_fraction_of_t_lp", "Sec. 6.3: selected fit + test posteriors"),
        _timing_claim(
            timing,
            "pct_delta_t_end_to_end",
            "s5.t_a_end_to_end_fraction_of_t_lp",
            "end to end: plus scoring the validation negatives",
        ),
        _overlap_claim(overlap),
        _strategy_claim(assessment),
    ]


def write_s5_claims(
    calibrators_path: str | os.PathLike,
    assessment_path: str | os.PathLike,
    timing_path: str | os.PathLike,
    overlap_path: str | os.PathLike,
    out: str | os.PathLike,
) -> pd.DataFrame:
    """Read the collated S5 tables and write ``claims/s5.tsv``."""
    claims = s5_claims(read_tsv(calibrators_path), read_tsv(assessment_path), read_tsv(timing_path), read_tsv(overlap_path))
    return write_claims(claims, out)
