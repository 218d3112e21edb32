"""S1's claims (Berrendorf et al., paper 000, Sec. 3-4 and Fig. 1) checked on this tier's tables.

Inputs: the test-size slope tables (:func:`kgeval.studies.s1.testsize.slopes`, one per swept EA pair: every metric's
value at the smallest and the largest test set and the relative change between them, per number of training
alignments) and the reference-scorer table of ``study_s1_ranks`` (a random scorer's metrics next to their closed-form
expectation and standard deviation). Each claim says how it is decided (``tolerance``) before the data are looked at:

- ``s1.fig1_mr_grows_with_test_size``: MR grows with the number of test alignments, in every training size;
- ``s1.fig1_hits1_falls_with_test_size``: Hits@1 falls with it, in every training size with training alignments (with
  none, Hits@1 is a random scorer's 1/n, whose change is noise around zero);
- ``s1.fig1_amr_stable_with_test_size``: AMR changes by at most 10 % (relative) between the smallest and the largest
  test set, in every training size, while MR changes by more;
- ``s1.amr_random_scorer_is_one``: a random scorer's AMR is 1 up to 3 standard deviations of its closed form.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from kgeval.claims import NOT_CHECKABLE, Claim, format_value, ordinal_claim, write_claims
from kgeval.io import read_tsv

__all__ = ["AMR_TOLERANCE", "s1_claims", "write_s1_claims"]

#: the largest relative change of AMR between the smallest and the largest test set that counts as "stable"
AMR_TOLERANCE = 0.10


def _changes(slopes: Mapping[str, pd.DataFrame], metric: str, trained_only: bool = False) -> pd.DataFrame:
    """``pair, num_train, relative_change`` of one metric over every swept pair."""
    frames = []
    for pair, table in sorted(slopes.items()):
        part = table.loc[table["metric"] == metric, ["num_train", "relative_change", "num_sizes"]].copy()
        part.insert(0, "pair", pair)
        frames.append(part)
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["pair", "num_train"])
    out = out.loc[out["num_sizes"] >= 2] if "num_sizes" in out else out
    if trained_only:
        out = out.loc[out["num_train"] > 0]
    return out.reset_index(drop=True)


def _describe(changes: pd.DataFrame) -> str:
    values = changes["relative_change"].to_numpy(float)
    pairs = ", ".join(sorted(set(changes["pair"])))
    return (
        f"relative change smallest->largest test set: min {values.min():+.4f}, median {np.median(values):+.4f}, "
        f"max {values.max():+.4f} over {len(values)} training sizes ({pairs})"
    )


def _missing(claim: str, statement: str, paper: str, what: str) -> Claim:
    return Claim(claim, statement, paper, "", "", NOT_CHECKABLE, f"no test-size sweep with {what} in this tier")


def _direction_claim(
    slopes: Mapping[str, pd.DataFrame], metric: str, sign: int, claim: str, statement: str, paper: str, trained: bool
) -> Claim:
    changes = _changes(slopes, metric, trained_only=trained)
    if changes.empty:
        return _missing(claim, statement, paper, "two or more test sizes" + (" and training alignments" if trained else ""))
    values = changes["relative_change"].to_numpy(float)
    ok = values * sign > 0
    word = "grows" if sign > 0 else "falls"
    return ordinal_claim(
        claim,
        statement,
        paper,
        f"{_describe(changes)}; {word} in {int(ok.sum())} of {len(ok)}",
        bool(ok.all()),
        reason="" if ok.all() else f"{metric} does not {word[:-1]} in the training sizes "
        + ", ".join(f"{r.pair}/{r.num_train}" for r in changes.loc[~ok].itertuples()),
        tolerance="sign of the relative change, every training size",
    )


def _amr_claim(slopes: Mapping[str, pd.DataFrame]) -> Claim:
    claim = "s1.fig1_amr_stable_with_test_size"
    statement = "Sec. 4, Fig. 1: AMR does not depend on the test size (MR does)"
    paper = "AMR constant in the test size for every training size"
    amr, mr = _changes(slopes, "amr"), _changes(slopes, "mr")
    if amr.empty or mr.empty:
        return _missing(claim, statement, paper, "two or more test sizes")
    both = amr.merge(mr, on=["pair", "num_train"], suffixes=("_amr", "_mr"))
    a, m = both["relative_change_amr"].abs().to_numpy(float), both["relative_change_mr"].abs().to_numpy(float)
    ok = (a <= AMR_TOLERANCE) & (a < m)
    bad = both.loc[~ok]
    return ordinal_claim(
        claim,
        statement,
        paper,
        f"|relative change| of AMR max {a.max():.4f} (median {np.median(a):.4f}); of MR min {m.min():.4f} "
        f"(median {np.median(m):.4f}); stable in {int(ok.sum())} of {len(ok)} training sizes",
        bool(ok.all()),
        reason=""
        if ok.all()
        else "AMR moved by more than the tolerance (or more than MR) in "
        + ", ".join(f"{r.pair}/{r.num_train} ({r.relative_change_amr:+.3f})" for r in bad.itertuples()),
        tolerance=f"|relative change of AMR| <= {AMR_TOLERANCE} and < that of MR, every training size",
    )


def _random_claim(reference: pd.DataFrame | None) -> Claim:
    claim = "s1.amr_random_scorer_is_one"
    statement = "Sec. 3: AMR = MR / E[MR] is 1 in expectation for a random scorer, on any dataset"
    paper = "1"
    if reference is None:
        return Claim(claim, statement, paper, "", "", NOT_CHECKABLE, "study_s1_ranks is not part of this tier")
    rows = reference.loc[
        (reference["scorer"] == "random") & (reference["metric"] == "amr") & (reference["side"] == "both")
    ]
    if rows.empty:
        return Claim(claim, statement, paper, "", "", NOT_CHECKABLE, "the reference table has no random-scorer AMR")
    z = ((rows["value"] - 1.0) / rows["expected_std"]).abs().to_numpy(float)
    ok = z <= 3
    values = "; ".join(f"{r.dataset} {r.value:.4f}" for r in rows.itertuples())
    return ordinal_claim(
        claim,
        statement,
        paper,
        f"random-scorer AMR: {values}; max |AMR - 1| / std = {format_value(float(z.max()), 2)}",
        bool(ok.all()),
        reason="" if ok.all() else "a random scorer's AMR is more than 3 closed-form standard deviations from 1",
        tolerance="|AMR - 1| <= 3 std (closed form) on every dataset",
    )


def s1_claims(slopes: Mapping[str, pd.DataFrame], reference: pd.DataFrame | None = None) -> list[Claim]:
    """The S1 claims (module docstring) from the slope tables (pair -> table) and the reference-scorer table."""
    return [
        _direction_claim(
            slopes, "mr", +1, "s1.fig1_mr_grows_with_test_size",
            "Sec. 4, Fig. 1: MR grows with the number of test alignments", "MR grows with the test size", False,
        ),
        _direction_claim(
            slopes, "hits@1", -1, "s1.fig1_hits1_falls_with_test_size",
            "Sec. 4, Fig. 1: Hits@1 falls with the number of test alignments (trained models)",
            "Hits@1 falls with the test size", True,
        ),
        _amr_claim(slopes),
        _random_claim(reference),
    ]


def write_s1_claims(
    slopes_paths: Mapping[str, str | os.PathLike] | Sequence[str | os.PathLike],
    reference_path: str | os.PathLike | None,
    out: str | os.PathLike,
) -> pd.DataFrame:
    """Read the slope tables (pair -> path, or paths ``.../testsize/<pair>/slopes.tsv``) and write ``claims/s1.tsv``."""
    if not isinstance(slopes_paths, Mapping):
        slopes_paths = {os.path.basename(os.path.dirname(str(p))): p for p in slopes_paths}
    slopes = {pair: read_tsv(path) for pair, path in slopes_paths.items()}
    reference = read_tsv(reference_path) if reference_path else None
    return write_claims(s1_claims(slopes, reference), out)
