"""Claims tables: one row per claim of a paper, with the paper's value next to kgeval's and a verdict.

Every study ends in ``results/claims/<study>.tsv`` (format: ``docs/reproducing.md``, "Claims tables"): columns
:data:`COLUMNS`, one row per claim, sorted by ``claim``. A verdict is ``holds``, ``differs`` or ``not checkable``;
every verdict but ``holds`` carries a reason (budget, data, stand-in model, or a mistake in the paper, with the
evidence). A ``differs`` is a finding to explain, never a number to tune.

Usage::

    from kgeval.claims import Claim, numeric_claim, write_claims

    rows = [
        numeric_claim("s4.fig3_tau_sparse_vs_original", "Fig. 3: tau between FB-Test-S and FB-Test-O", 0.7949, tau,
                      tolerance=1e-4),
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
    "Claim",
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

#: the allowed verdicts
VERDICTS: tuple[str, ...] = (HOLDS, DIFFERS, NOT_CHECKABLE)

#: the columns of a claims table, in order
COLUMNS: tuple[str, ...] = ("claim", "statement", "paper", "kgeval", "tolerance", "verdict", "reason")

_CLAIM_ID = re.compile(r"^s\d\.[a-z0-9_.@+-]+$")


@dataclass(frozen=True)
class Claim:
    """One row of a claims table.

    :param claim: short id, ``s<n>.<name>`` (lower case, e.g. ``s4.fig3_tau_sparse_vs_original``)
    :param statement: the paper's claim in kgeval's words, naming its figure, table or section
    :param paper: the paper's value or ordering, as printed
    :param kgeval: kgeval's value or ordering
    :param tolerance: how far kgeval may be from the paper for ``holds`` (free text, e.g. ``1e-4``)
    :param verdict: one of :data:`VERDICTS`
    :param reason: why the verdict is not ``holds`` (required then), or a remark
    :raises ValueError: for a malformed id, an unknown verdict, or a missing reason
    """

    claim: str
    statement: str
    paper: str
    kgeval: str
    tolerance: str
    verdict: str
    reason: str = ""

    def __post_init__(self) -> None:
        if not _CLAIM_ID.match(self.claim):
            raise ValueError(f"claim id {self.claim!r} must look like 's4.fig3_tau' (s<n>., then lower case)")
        if self.verdict not in VERDICTS:
            raise ValueError(f"claim {self.claim}: verdict {self.verdict!r} is not one of {', '.join(VERDICTS)}")
        if self.verdict != HOLDS and not self.reason.strip():
            raise ValueError(f"claim {self.claim}: verdict {self.verdict!r} needs a reason (the evidence)")
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


@dataclass(frozen=True)
class ClaimFormat:
    """How :func:`numeric_claim` prints a claim's values.

    :param digits: decimals of the values in the table
    :param kgeval_digits: decimals of kgeval's values (default ``digits``; one more shows how a printed value was
        rounded or truncated)
    :param paper_text: the ``paper`` column as printed (default: the values with ``digits`` decimals)
    :param tolerance_text: the ``tolerance`` column (default: the tolerance itself)
    """

    digits: int = 4
    kgeval_digits: int | None = None
    paper_text: str | None = None
    tolerance_text: str | None = None


def numeric_claim(
    claim: str,
    statement: str,
    paper: float | Sequence[float],
    kgeval: float | Sequence[float],
    tolerance: float | Sequence[float],
    reason: str = "",
    fmt: ClaimFormat = ClaimFormat(),
) -> Claim:
    """A claim on one or several numbers: ``holds`` iff every ``|kgeval - paper| <= tolerance``.

    :param paper: the paper's value(s), as printed
    :param kgeval: kgeval's value(s), in the same order
    :param tolerance: the largest allowed absolute difference, one for all values or one per value (e.g. 1e-4 for a
        value printed with 4 decimals, which admits both rounding and truncation)
    :param reason: the explanation when the claim differs (required then), or a remark when it holds
    :param fmt: how the values are printed (decimals, or the paper's and the tolerance's columns as text)
    """
    p = [paper] if isinstance(paper, numbers.Real) else list(paper)
    k = [kgeval] if isinstance(kgeval, numbers.Real) else list(kgeval)
    tol = [tolerance] * len(p) if isinstance(tolerance, numbers.Real) else list(tolerance)
    if not len(p) == len(k) == len(tol):
        raise ValueError(f"claim {claim}: {len(p)} paper values, {len(k)} kgeval values, {len(tol)} tolerances")
    ok = all(
        math.isfinite(float(b)) and abs(float(a) - float(b)) <= t + 1e-12 for a, b, t in zip(p, k, tol, strict=True)
    )
    worst = max((abs(float(a) - float(b)) for a, b in zip(p, k, strict=True)), default=0.0)
    if not ok and not reason:
        reason = f"largest difference {worst:.4g} exceeds the tolerance"
    tolerance_text = fmt.tolerance_text
    if tolerance_text is None:
        tolerance_text = f"{tol[0]:g}" if len(set(tol)) == 1 else "; ".join(f"{t:g}" for t in tol)
    digits, kgeval_digits, paper_text = fmt.digits, fmt.kgeval_digits, fmt.paper_text
    return Claim(
        claim=claim,
        statement=statement,
        paper=paper_text if paper_text is not None else format_value(p if len(p) > 1 else p[0], digits),
        kgeval=format_value(k if len(k) > 1 else k[0], digits if kgeval_digits is None else kgeval_digits),
        tolerance=tolerance_text,
        verdict=HOLDS if ok else DIFFERS,
        reason=reason,
    )


def ordinal_claim(
    claim: str, statement: str, paper: str, kgeval: str, holds: bool, reason: str = "", tolerance: str = "exact"
) -> Claim:
    """A claim on an ordering or a sign: ``holds`` iff ``holds`` is true (``reason`` then explains a ``differs``)."""
    return Claim(
        claim=claim,
        statement=statement,
        paper=paper,
        kgeval=kgeval,
        tolerance=tolerance,
        verdict=HOLDS if holds else DIFFERS,
        reason=reason,
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
    for row in table.itertuples(index=False):
        Claim(*[str(v) for v in row])  # validates the row
    if list(table["claim"]) != sorted(table["claim"]) or table["claim"].duplicated().any():
        raise ValueError(f"{path}: claim ids must be unique and sorted")
    return table
