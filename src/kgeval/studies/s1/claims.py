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

Each training size's relative change has a 95 % percentile-bootstrap interval over the evaluation queries of the two
pools (:mod:`kgeval.studies.s1.testsize_replicates`, averaged over split seeds); a training size supports (refutes)
a claim only when its whole interval lies inside (outside) the criterion. The random scorer's claim is true by
construction (basis and verdict ``by construction``): its ranks are uniform on 1..N, the distribution E[MR] assumes.
Its criterion (3 closed-form std) already is a random scorer's sampling noise, so it is judged at the point as a
z-test, ``z = (AMR - 1) / std``: the ``interval`` column shows each dataset's z, the one quantity judged, and the
value +- 1.96 std only as context; the reason keeps whether every ``|z| <= 3``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from kgeval.claims import (
    NOT_CHECKABLE,
    Claim,
    Criterion,
    by_construction,
    combine,
    format_interval,
    format_value,
    interval_claim,
    judge,
    ordinal_claim,
    write_claims,
)
from kgeval.io import read_tsv
from kgeval.studies.s1.testsize_replicates import UNIT, change_replicates, replicates_of
from kgeval.uncertainty.resampling import BootstrapSettings
from kgeval.uncertainty.resampling import percentile_interval

__all__ = ["AMR_TOLERANCE", "RANDOM_SCORER", "s1_claims", "write_s1_claims"]

#: the basis of the random-scorer claim
RANDOM_SCORER = by_construction(
    "a uniformly random scorer's realistic ranks are uniform on 1..N, the distribution E[MR] assumes, so its AMR is 1 "
    "in expectation whatever the data: a check of the implementation, not evidence for the paper"
)
_UNIT = f"95 % two-stage bootstrap over {UNIT}"

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


def _judged_changes(changes: pd.DataFrame, replicates, metric: str, criterion: Criterion, level: float):
    """Per training size: the judgement of the relative change of ``metric`` and its interval text."""
    parts, texts = [], []
    for r in changes.itertuples():
        low, high = percentile_interval(replicates_of(replicates, r.pair, r.num_train, metric), level)
        name = f"{r.pair}/{r.num_train}"
        parts.append(judge(r.relative_change, low, high, criterion, name=f"{metric} change at {name}"))
        texts.append(f"{name} {format_interval(low, high, digits=3)}")
    return parts, "; ".join(texts) + f" ({_UNIT})"


def _direction_claim(
    slopes: Mapping[str, pd.DataFrame], metric: str, sign: int, ids: tuple[str, str, str], replicates, level: float
) -> Claim:
    claim, statement, paper = ids
    trained = metric == "hits@1"
    changes = _changes(slopes, metric, trained_only=trained)
    if changes.empty:
        return _missing(claim, statement, paper, "two or more test sizes" + (" and training alignments" if trained else ""))
    values = changes["relative_change"].to_numpy(float)
    ok = values * sign > 0
    word = "grows" if sign > 0 else "falls"
    criterion = Criterion(lower=0.0, strict=True) if sign > 0 else Criterion(upper=0.0, strict=True)
    parts, interval = _judged_changes(changes, replicates, metric, criterion, level)
    return interval_claim(
        claim,
        statement,
        paper,
        f"{_describe(changes)}; {word} in {int(ok.sum())} of {len(ok)} by the point values",
        combine(parts),
        interval=interval,
        tolerance="sign of the relative change, every training size",
    )


def _amr_claim(slopes: Mapping[str, pd.DataFrame], replicates, level: float) -> Claim:
    claim = "s1.fig1_amr_stable_with_test_size"
    statement = "Sec. 4, Fig. 1: AMR does not depend on the test size (MR does)"
    paper = "AMR constant in the test size for every training size"
    amr, mr = _changes(slopes, "amr"), _changes(slopes, "mr")
    if amr.empty or mr.empty:
        return _missing(claim, statement, paper, "two or more test sizes")
    both = amr.merge(mr, on=["pair", "num_train"], suffixes=("_amr", "_mr"))
    a, m = both["relative_change_amr"].abs().to_numpy(float), both["relative_change_mr"].abs().to_numpy(float)
    ok = (a <= AMR_TOLERANCE) & (a < m)
    parts, interval = _judged_changes(
        amr, replicates, "amr", Criterion(lower=-AMR_TOLERANCE, upper=AMR_TOLERANCE), level
    )
    for r in both.itertuples():
        gap = np.abs(replicates_of(replicates, r.pair, r.num_train, "mr")) - np.abs(
            replicates_of(replicates, r.pair, r.num_train, "amr")
        )
        low, high = percentile_interval(gap, level)
        point = abs(r.relative_change_mr) - abs(r.relative_change_amr)
        parts.append(judge(point, low, high, Criterion(lower=0.0, strict=True), name=f"|MR change| - |AMR change| at {r.pair}/{r.num_train}"))
    return interval_claim(
        claim,
        statement,
        paper,
        f"|relative change| of AMR max {a.max():.4f} (median {np.median(a):.4f}); of MR min {m.min():.4f} "
        f"(median {np.median(m):.4f}); stable in {int(ok.sum())} of {len(ok)} training sizes by the point values",
        combine(parts),
        interval=interval,
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
    signed = ((rows["value"] - 1.0) / rows["expected_std"]).to_numpy(float)
    z = np.abs(signed)
    values = "; ".join(f"{r.dataset} {r.value:.4f}" for r in rows.itertuples())
    ok = bool((z <= 3).all())
    largest = format_value(float(z.max()), 2)
    judged = "; ".join(f"{r.dataset} z = {v:+.2f}" for r, v in zip(rows.itertuples(), signed))
    context = "; ".join(
        f"{r.dataset} {format_interval(r.value - 1.96 * r.expected_std, r.value + 1.96 * r.expected_std)}"
        for r in rows.itertuples()
    )
    return ordinal_claim(
        claim,
        statement,
        paper,
        f"random-scorer AMR: {values}; max |AMR - 1| / std = {largest}",
        holds=ok,
        reason=f"max |z| = {largest} {'<=' if ok else '>'} 3"
        + ("" if ok else ": a random scorer's AMR is more than 3 closed-form standard deviations from 1"),
        tolerance="|AMR - 1| <= 3 std (closed form) on every dataset",
        interval=f"{judged} (judged: |z| <= 3 at the point, z = (AMR - 1) / std with the closed-form std of a random "
        f"scorer's AMR, its sampling noise; not resampled); AMR +- 1.96 std as context: {context}",
        basis=RANDOM_SCORER,
    )


def s1_claims(
    slopes: Mapping[str, pd.DataFrame],
    reference: pd.DataFrame | None = None,
    replicates: Mapping[tuple[str, int], Mapping[str, np.ndarray]] | None = None,
    level: float = 0.95,
) -> list[Claim]:
    """The S1 claims (module docstring) from the slope tables (pair -> table), the reference-scorer table and the
    relative changes' replicates (:func:`kgeval.studies.s1.testsize_replicates.change_replicates`)."""
    replicates = replicates or {}
    return [
        _direction_claim(
            slopes, "mr", +1,
            ("s1.fig1_mr_grows_with_test_size", "Sec. 4, Fig. 1: MR grows with the number of test alignments",
             "MR grows with the test size"),
            replicates, level,
        ),
        _direction_claim(
            slopes, "hits@1", -1,
            ("s1.fig1_hits1_falls_with_test_size",
             "Sec. 4, Fig. 1: Hits@1 falls with the number of test alignments (trained models)",
             "Hits@1 falls with the test size"),
            replicates, level,
        ),
        _amr_claim(slopes, replicates, level),
        _random_claim(reference),
    ]


def write_s1_claims(
    slopes_paths: Mapping[str, str | os.PathLike] | Sequence[str | os.PathLike],
    reference_path: str | os.PathLike | None,
    out: str | os.PathLike,
    ranks_paths: Sequence[str | os.PathLike] = (),
    uncertainty: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """Read the slope tables (pair -> path, or paths ``.../testsize/<pair>/slopes.tsv``), the reference table and the
    sweeps' ranks (``ranks_paths``, resampled as the config's ``uncertainty`` section says), and write
    ``claims/s1.tsv``."""
    if not isinstance(slopes_paths, Mapping):
        slopes_paths = {os.path.basename(os.path.dirname(str(p))): p for p in slopes_paths}
    slopes = {pair: read_tsv(path) for pair, path in slopes_paths.items()}
    reference = read_tsv(reference_path) if reference_path else None
    replicates, level = {}, 0.95
    if ranks_paths:
        if uncertainty is None:
            raise ValueError("write_s1_claims: ranks_paths given without the uncertainty settings")
        settings = BootstrapSettings.from_config(uncertainty)
        replicates, level = change_replicates(ranks_paths, settings), settings.level
    return write_claims(s1_claims(slopes, reference, replicates, level), out)
