"""Claims tables: one row per claim of a paper, with the paper's value next to kgeval's and a verdict.

Every study ends in ``results/claims/<study>.tsv`` (format: ``docs/reproducing.md``, "Claims tables"): columns
:data:`COLUMNS`, one row per claim, sorted by ``claim``. A verdict is ``holds``, ``differs``, ``inconclusive``,
``not checkable`` or ``by construction``; every verdict but ``holds`` carries a reason (budget, data, stand-in model,
noise, or a mistake in the paper, with the evidence). A ``differs`` is a finding to explain, never a number to tune.

The verdict rule (:func:`judge`): ``holds`` or ``differs`` only when the whole 95 % interval of the statistic lies on
one side of the criterion, ``inconclusive`` when it straddles it (the reason names the side of the point estimate).
The ``interval`` column holds that interval with its resampling unit, or :data:`EXACT` for a statistic computed without
sampling (a published number recomputed from released files). The ``basis`` column says what the evidence rests on:
``measured`` (or ``measured: <what was compared>``, :func:`measured`, where the comparison itself needs naming),
``by construction: <argument>`` (true whatever the data), or ``stand-in: <method>`` / ``stand-in below strength:
<method>`` (a simplified method or a simulation).

A claim no data could change (a ``by construction: <argument>`` basis, :func:`by_construction`) has the verdict
:data:`BY_CONSTRUCTION`, and only such a claim has it: it is reported, never counted as support or refutation. Its
``interval`` shows what was computed and its ``reason`` what the judgement would have said, then the argument
(``computed: holds (<evidence>); true whatever the data: <argument>``); :func:`interval_claim`, :func:`numeric_claim`
and :func:`ordinal_claim` write both when given such a basis. A claim that cannot be computed at all stays
``not checkable``, with basis ``measured`` and the argument in its reason.

Usage::

    from kgeval.claims import Claim, numeric_claim, write_claims

    rows = [
        numeric_claim("s4.fig3_tau_sparse_vs_original", "Fig. 3: tau between FB-Test-S and FB-Test-O", 0.7949, tau,
                      tolerance=1e-4, interval=EXACT),
        interval_claim("s4.x.fig3_sparsity_changes_rankings", "Sec. 4.2: ...", "tau < 1", tau, (low, high),
                       Criterion(upper=1.0, strict=True), unit="bootstrap over 1,000 queries"),
        Claim("s4.fig7_stability", "Fig. 7: ...", "tau about 0.8 at 80%", "", "", "not checkable",
              "the release has no per-triple ranks"),
    ]
    write_claims(rows, "results/claims/s4.tsv")
"""

from __future__ import annotations

import math
import numbers
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from kgeval.io import write_tsv

__all__ = [
    "COLUMNS",
    "VERDICTS",
    "HOLDS",
    "DIFFERS",
    "NOT_CHECKABLE",
    "INCONCLUSIVE",
    "BY_CONSTRUCTION",
    "MEASURED",
    "measured",
    "EXACT",
    "Claim",
    "Criterion",
    "Judgement",
    "by_construction",
    "stand_in",
    "judge",
    "combine",
    "format_interval",
    "interval_claim",
    "ClaimFormat",
    "format_value",
    "numeric_claim",
    "ordinal_claim",
    "claims_table",
    "write_claims",
    "read_claims",
]

HOLDS = "holds"
DIFFERS = "differs"
NOT_CHECKABLE = "not checkable"
INCONCLUSIVE = "inconclusive"
#: the verdict of a claim no data could change (basis :func:`by_construction`): reported, never counted as support
#: or refutation
BY_CONSTRUCTION = "by construction"

#: the allowed verdicts
VERDICTS: tuple[str, ...] = (HOLDS, DIFFERS, INCONCLUSIVE, NOT_CHECKABLE, BY_CONSTRUCTION)

#: the columns of a claims table, in order
COLUMNS: tuple[str, ...] = (
    "claim", "statement", "paper", "kgeval", "interval", "tolerance", "verdict", "basis", "reason"
)

#: ``basis`` of a claim judged on this tier's own measurements
MEASURED = "measured"
#: the prefix of the ``basis`` of a claim true whatever the data (:func:`by_construction`)
_CONSTRUCTED = "by construction: "
#: the prefixes a ``basis`` other than :data:`MEASURED` starts with
BASIS_PREFIXES: tuple[str, ...] = (_CONSTRUCTED, "stand-in: ", "stand-in below strength: ", "measured: ")

#: ``interval`` of a statistic computed without sampling (e.g. a published number recomputed from released files)
EXACT = "exact: computed without sampling"

_CLAIM_ID = re.compile(r"^s\d\.[a-z0-9_.@+-]+$")


@dataclass(frozen=True)
class Claim:
    """One row of a claims table.

    :param claim: short id, ``s<n>.<name>`` (lower case, e.g. ``s4.fig3_tau_sparse_vs_original``)
    :param statement: the paper's claim in kgeval's words, naming its figure, table or section
    :param paper: the paper's value or ordering, as printed
    :param kgeval: kgeval's value or ordering
    :param tolerance: how far kgeval may be from the paper for ``holds`` (free text, e.g. ``1e-4``)
    :param verdict: one of :data:`VERDICTS`; :data:`BY_CONSTRUCTION` exactly when ``basis`` is :func:`by_construction`
    :param reason: why the verdict is not ``holds`` (required then), or a remark; for :data:`BY_CONSTRUCTION`, what
        the judgement would have said and the argument
    :param interval: the 95 % interval of the statistic judged, with its resampling unit (:func:`format_interval`),
        or :data:`EXACT`; required for every verdict but ``not checkable``
    :param basis: :data:`MEASURED`, or one of :data:`BASIS_PREFIXES` followed by the argument or the method
        (:func:`by_construction`, :func:`stand_in`)
    :raises ValueError: for a malformed id, an unknown verdict or basis, a by-construction basis without the
        :data:`BY_CONSTRUCTION` verdict or that verdict without such a basis, or a missing reason or interval
    """

    claim: str
    statement: str
    paper: str
    kgeval: str
    tolerance: str
    verdict: str
    reason: str = ""
    interval: str = ""
    basis: str = MEASURED

    def __post_init__(self) -> None:
        if not _CLAIM_ID.match(self.claim):
            raise ValueError(f"claim id {self.claim!r} must look like 's4.fig3_tau' (s<n>., then lower case)")
        if self.verdict not in VERDICTS:
            raise ValueError(f"claim {self.claim}: verdict {self.verdict!r} is not one of {', '.join(VERDICTS)}")
        if self.verdict != HOLDS and not self.reason.strip():
            raise ValueError(f"claim {self.claim}: verdict {self.verdict!r} needs a reason (the evidence)")
        if self.verdict != NOT_CHECKABLE and not self.interval.strip():
            raise ValueError(
                f"claim {self.claim}: verdict {self.verdict!r} needs an interval (the 95 % interval of the statistic "
                f"judged, or {EXACT!r})"
            )
        if self.basis != MEASURED and not any(
            self.basis.startswith(p) and len(self.basis) > len(p) for p in BASIS_PREFIXES
        ):
            raise ValueError(
                f"claim {self.claim}: basis {self.basis!r} must be {MEASURED!r} or start with one of "
                f"{[p.strip() for p in BASIS_PREFIXES]} followed by the argument or the method"
            )
        constructed = self.basis.startswith(_CONSTRUCTED)
        if constructed and self.verdict != BY_CONSTRUCTION:
            raise ValueError(
                f"claim {self.claim}: a by-construction basis needs the verdict {BY_CONSTRUCTION!r}, not "
                f"{self.verdict!r}: no data could change it, so put what was computed in the reason (interval_claim, "
                "numeric_claim and ordinal_claim do), or give the basis the evidence rests on"
            )
        if self.verdict == BY_CONSTRUCTION and not constructed:
            raise ValueError(
                f"claim {self.claim}: verdict {BY_CONSTRUCTION!r} needs the basis by_construction(<argument>), not "
                f"{self.basis!r}; a claim the data decide is holds, differs or inconclusive"
            )
        if not self.statement.strip():
            raise ValueError(f"claim {self.claim}: the statement is empty")
        for name in COLUMNS:
            value = getattr(self, name)
            if "\t" in value or "\n" in value:
                raise ValueError(f"claim {self.claim}: field {name} holds a tab or a newline")


def format_value(value: float | int | str | Sequence, digits: int = 4) -> str:
    """A value as text for a claims table: numbers rounded to ``digits`` decimals, sequences joined by ``; ``."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "; ".join(format_value(v, digits) for v in value)
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return f"{int(value):,}"
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{float(value):.{digits}f}"


def measured(what: str) -> str:
    """The ``basis`` of a claim judged on this tier's own measurements, naming what was compared (e.g. which two
    implementations a timing sets against each other)."""
    return f"{MEASURED}: {what}"


def by_construction(argument: str) -> str:
    """The ``basis`` of a claim true whatever the data, with the one-line argument why."""
    return f"by construction: {argument}"


def _settle(verdict: str, reason: str, basis: str, computed: str = "") -> tuple[str, str, str]:
    """The verdict, reason and basis of a claim a constructor judged ``verdict`` with ``reason``.

    With a :func:`by_construction` basis a judged verdict becomes :data:`BY_CONSTRUCTION`, the reason
    ``computed: <verdict> (<reason and computed>); true whatever the data: <argument>``; one that could not be judged
    stays ``not checkable`` (nothing was computed), its basis :data:`MEASURED` and the argument after its reason.

    :param computed: what the judgement said where ``reason`` leaves it out (the evidence of a ``holds``)
    """
    if not basis.startswith(_CONSTRUCTED):
        return verdict, reason, basis
    argument = f"true whatever the data: {basis[len(_CONSTRUCTED):]}"
    if verdict == NOT_CHECKABLE:
        return verdict, "; ".join(t for t in (reason, argument) if t), MEASURED
    said = "; ".join(t for t in (reason, computed) if t)
    return BY_CONSTRUCTION, f"computed: {verdict}" + (f" ({said})" if said else "") + f"; {argument}", basis


def stand_in(method: str, below_strength: bool = False) -> str:
    """The ``basis`` of a claim judged on a simplified method or a simulation, naming it."""
    return f"stand-in{' below strength' if below_strength else ''}: {method}"


def format_interval(low: float, high: float, unit: str = "", digits: int = 4) -> str:
    """An interval as text, ``[low, high]`` followed by its resampling unit in parentheses when given."""
    text = f"[{format_value(float(low), digits)}, {format_value(float(high), digits)}]"
    return f"{text} ({unit})" if unit else text


@dataclass(frozen=True)
class Criterion:
    """The region of the statistic where a claim holds: ``lower <= x <= upper`` (``<`` with ``strict``).

    :param lower: the smallest value that supports the claim (None: no lower bound)
    :param upper: the largest value that supports the claim (None: no upper bound)
    :param strict: whether the bounds themselves lie outside the region
    """

    lower: float | None = None
    upper: float | None = None
    strict: bool = False

    def contains(self, x: float) -> bool:
        """Whether the value ``x`` supports the claim."""
        lo = -math.inf if self.lower is None else self.lower
        hi = math.inf if self.upper is None else self.upper
        return (lo < x < hi) if self.strict else (lo <= x <= hi)

    def text(self, name: str = "x", digits: int = 4) -> str:
        """The criterion as text, e.g. ``x < 1``."""
        parts = []
        if self.lower is not None:
            parts.append(f"{self.lower:.{digits}g} {'<' if self.strict else '<='} ")
        parts.append(name)
        if self.upper is not None:
            parts.append(f" {'<' if self.strict else '<='} {self.upper:.{digits}g}")
        return "".join(parts)


@dataclass(frozen=True)
class Judgement:
    """A verdict on one statistic and the evidence for it (a sentence for the ``reason`` column)."""

    verdict: str
    evidence: str


def judge(point: float, low: float, high: float, criterion: Criterion, name: str = "the statistic") -> Judgement:
    """The verdict rule: ``holds`` (``differs``) when the whole interval ``[low, high]`` lies inside (outside) the
    criterion's region, ``inconclusive`` when it straddles a bound, naming the side of the point estimate.

    A NaN point or bound gives ``not checkable``.
    """
    if any(math.isnan(float(v)) for v in (point, low, high)):
        return Judgement(NOT_CHECKABLE, f"{name} is undefined (NaN) on these data")
    inside_low, inside_high = criterion.contains(float(low)), criterion.contains(float(high))
    interval = format_interval(low, high)
    if inside_low and inside_high:
        return Judgement(HOLDS, f"{name}'s interval {interval} lies inside {criterion.text(name)}")
    lo = -math.inf if criterion.lower is None else criterion.lower
    hi = math.inf if criterion.upper is None else criterion.upper
    below = float(high) < lo or (criterion.strict and float(high) <= lo)
    above = float(low) > hi or (criterion.strict and float(low) >= hi)
    if below or above:
        return Judgement(DIFFERS, f"{name}'s interval {interval} lies outside {criterion.text(name)}")
    side = "holds" if criterion.contains(float(point)) else "differs"
    return Judgement(
        INCONCLUSIVE,
        f"{name}'s interval {interval} straddles {criterion.text(name)}; the point estimate "
        f"{format_value(float(point))} lies on the {side} side",
    )


def combine(judgements: Sequence[Judgement]) -> Judgement:
    """One verdict for a claim made of parts that must all hold: ``differs`` if any part differs, else
    ``inconclusive`` if any part is, else ``not checkable`` if any part is, else ``holds``; the evidence of the parts
    that decided it."""
    if not judgements:
        return Judgement(NOT_CHECKABLE, "no part of the claim could be checked")
    for verdict in (DIFFERS, INCONCLUSIVE, NOT_CHECKABLE):
        deciding = [j.evidence for j in judgements if j.verdict == verdict]
        if deciding:
            return Judgement(verdict, "; ".join(deciding))
    return Judgement(HOLDS, "; ".join(j.evidence for j in judgements))


def interval_claim(
    claim: str,
    statement: str,
    paper: str,
    kgeval: str,
    judgement: Judgement,
    interval: str,
    tolerance: str,
    basis: str = MEASURED,
    reason: str = "",
) -> Claim:
    """A claim judged by :func:`judge` (or :func:`combine`): the verdict is the judgement's, the reason its evidence
    (after ``reason``, a remark or an explanation of a ``differs``); with a :func:`by_construction` basis the verdict
    is :data:`BY_CONSTRUCTION` and the reason keeps the judgement (module docstring)."""
    text = judgement.evidence if judgement.verdict != HOLDS else ""
    full_reason = "; ".join(t for t in (reason, text) if t)
    verdict, full_reason, basis = _settle(judgement.verdict, full_reason, basis, judgement.evidence if not text else "")
    return Claim(
        claim=claim,
        statement=statement,
        paper=paper,
        kgeval=kgeval,
        tolerance=tolerance,
        verdict=verdict,
        reason=full_reason,
        interval=interval,
        basis=basis,
    )


@dataclass(frozen=True)
class ClaimFormat:
    """How :func:`numeric_claim` prints a claim's values.

    :param digits: decimals of the values in the table
    :param kgeval_digits: decimals of kgeval's values (default ``digits``; one more shows how a printed value was
        rounded or truncated)
    :param paper_text: the ``paper`` column as printed (default: the values with ``digits`` decimals)
    :param tolerance_text: the ``tolerance`` column (default: the tolerance itself)
    :param interval_unit: the resampling unit of the intervals (e.g. ``bootstrap over 1,000 queries``)
    """

    digits: int = 4
    kgeval_digits: int | None = None
    paper_text: str | None = None
    tolerance_text: str | None = None
    interval_unit: str = ""


def numeric_claim(
    claim: str,
    statement: str,
    paper: float | Sequence[float],
    kgeval: float | Sequence[float],
    tolerance: float | Sequence[float],
    reason: str = "",
    fmt: ClaimFormat = ClaimFormat(),
    *,
    interval: str | Sequence[tuple[float, float]],
    basis: str = MEASURED,
) -> Claim:
    """A claim on one or several numbers, each to lie within ``tolerance`` of the paper's.

    With ``interval=EXACT`` (values computed without sampling) it ``holds`` iff every ``|kgeval - paper| <= tolerance``.
    With one interval per value, each value is judged by :func:`judge` against ``[paper - tol, paper + tol]`` and the
    parts are combined (:func:`combine`). With a :func:`by_construction` basis the verdict is :data:`BY_CONSTRUCTION`
    and the reason keeps the judgement (module docstring).

    :param paper: the paper's value(s), as printed
    :param kgeval: kgeval's value(s), in the same order
    :param tolerance: the largest allowed absolute difference, one for all values or one per value (e.g. 1e-4 for a
        value printed with 4 decimals, which admits both rounding and truncation)
    :param reason: the explanation when the claim differs (required then), or a remark when it holds
    :param fmt: how the values are printed (decimals, the paper's and the tolerance's columns as text, the intervals'
        resampling unit)
    :param interval: :data:`EXACT`, or the 95 % interval of each value, in the same order
    :param basis: what the evidence rests on (:data:`MEASURED`, :func:`by_construction`, :func:`stand_in`)
    """
    p = [paper] if isinstance(paper, numbers.Real) else list(paper)
    k = [kgeval] if isinstance(kgeval, numbers.Real) else list(kgeval)
    tol = [tolerance] * len(p) if isinstance(tolerance, numbers.Real) else list(tolerance)
    if not len(p) == len(k) == len(tol):
        raise ValueError(f"claim {claim}: {len(p)} paper values, {len(k)} kgeval values, {len(tol)} tolerances")
    digits, kgeval_digits, paper_text = fmt.digits, fmt.kgeval_digits, fmt.paper_text
    tolerance_text = fmt.tolerance_text
    if tolerance_text is None:
        tolerance_text = f"{tol[0]:g}" if len(set(tol)) == 1 else "; ".join(f"{t:g}" for t in tol)
    if isinstance(interval, str):
        if interval != EXACT:
            raise ValueError(f"claim {claim}: interval must be EXACT or one (low, high) per value, got {interval!r}")
        ok = all(
            math.isfinite(float(b)) and abs(float(a) - float(b)) <= t + 1e-12
            for a, b, t in zip(p, k, tol, strict=True)
        )
        worst = max((abs(float(a) - float(b)) for a, b in zip(p, k, strict=True)), default=0.0)
        if not ok and not reason:
            reason = f"largest difference {worst:.4g} exceeds the tolerance"
        computed = f"largest difference {worst:.4g} within the tolerance" if ok else ""
        verdict, interval_text = (HOLDS if ok else DIFFERS), EXACT
    else:
        bounds = list(interval)
        if len(bounds) != len(p):
            raise ValueError(f"claim {claim}: {len(p)} values but {len(bounds)} intervals")
        parts = [
            judge(float(b), lo, hi, Criterion(float(a) - t - 1e-12, float(a) + t + 1e-12), name=f"value {i + 1}")
            for i, (a, b, t, (lo, hi)) in enumerate(zip(p, k, tol, bounds, strict=True))
        ]
        judgement = combine(parts)
        verdict, computed = judgement.verdict, judgement.evidence if judgement.verdict == HOLDS else ""
        if verdict != HOLDS:
            reason = "; ".join(t for t in (reason, judgement.evidence) if t)
        interval_text = "; ".join(format_interval(lo, hi, digits=digits) for lo, hi in bounds)
        unit = fmt.interval_unit
        interval_text = f"{interval_text} ({unit})" if unit else interval_text
    verdict, reason, basis = _settle(verdict, reason, basis, computed)
    return Claim(
        claim=claim,
        statement=statement,
        paper=paper_text if paper_text is not None else format_value(p if len(p) > 1 else p[0], digits),
        kgeval=format_value(k if len(k) > 1 else k[0], digits if kgeval_digits is None else kgeval_digits),
        tolerance=tolerance_text,
        verdict=verdict,
        reason=reason,
        interval=interval_text,
        basis=basis,
    )


def ordinal_claim(
    claim: str,
    statement: str,
    paper: str,
    kgeval: str,
    holds: bool,
    reason: str = "",
    tolerance: str = "exact",
    *,
    interval: str,
    basis: str = MEASURED,
) -> Claim:
    """A claim on an ordering or a sign decided without sampling noise (``interval`` says why, e.g. :data:`EXACT`):
    ``holds`` iff ``holds`` is true (``reason`` then explains a ``differs``); with a :func:`by_construction` basis
    :data:`BY_CONSTRUCTION`, the reason keeping which (module docstring). A statistic with an interval is judged with
    :func:`judge` and :func:`interval_claim` instead."""
    verdict, reason, basis = _settle(HOLDS if holds else DIFFERS, reason, basis)
    return Claim(
        claim=claim,
        statement=statement,
        paper=paper,
        kgeval=kgeval,
        tolerance=tolerance,
        verdict=verdict,
        reason=reason,
        interval=interval,
        basis=basis,
    )


def claims_table(claims: Iterable[Claim]) -> pd.DataFrame:
    """The claims as a table with :data:`COLUMNS`, sorted by ``claim``.

    :raises ValueError: when two claims share an id
    """
    rows = [[getattr(c, name) for name in COLUMNS] for c in claims]
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    duplicated = table["claim"][table["claim"].duplicated()].tolist()
    if duplicated:
        raise ValueError(f"claim ids must be unique; repeated: {sorted(set(duplicated))}")
    return table.sort_values("claim", kind="stable").reset_index(drop=True)


def write_claims(claims: Iterable[Claim], out: str | os.PathLike) -> pd.DataFrame:
    """Write the claims table as TSV (header, rows sorted by claim), atomically."""
    table = claims_table(claims)
    write_tsv(table, out, sort_by=["claim"])
    return table


def read_claims(path: str | os.PathLike) -> pd.DataFrame:
    """Read a claims table and check it: the columns, unique sorted ids, known verdicts, reasons where required.

    :raises ValueError: naming the first problem
    """
    table = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    if tuple(table.columns) != COLUMNS:
        raise ValueError(f"{path}: columns {list(table.columns)}, expected {list(COLUMNS)}")
    for row in table.to_dict("records"):
        Claim(**{k: str(v) for k, v in row.items()})  # validates the row
    if list(table["claim"]) != sorted(table["claim"]) or table["claim"].duplicated().any():
        raise ValueError(f"{path}: claim ids must be unique and sorted")
    return table
