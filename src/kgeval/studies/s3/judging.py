"""What the S3 claims (:mod:`kgeval.studies.s3.claims`, :mod:`kgeval.studies.s3.claims_size`) read and how they
judge it: the evidence (:class:`S3Evidence`: the wide table of every setting, each setting's bootstrap replicates,
the methods below their published strength), the rows of one setting, a method's replicates, one judged part of a
claim (:class:`Part`) and the row made of the parts (:func:`combine_parts`: a ``holds`` resting on a method below
strength becomes ``inconclusive``; the basis names the stand-ins).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kgeval.claims import (
    HOLDS,
    INCONCLUSIVE,
    MEASURED,
    NOT_CHECKABLE,
    Claim,
    Criterion,
    Judgement,
    combine,
    format_interval,
    interval_claim,
    judge,
    stand_in,
)
from kgeval.studies.s3.strength import below_strength as table_below_strength
from kgeval.studies.s3.strength import unrated as table_unrated
from kgeval.studies.s3.tables import setting_label
from kgeval.uncertainty.resampling import percentile_interval

__all__ = [
    "BELOW_STRENGTH",
    "NO_STRENGTH_TABLE",
    "UNIT",
    "Replicates",
    "Setting",
    "S3Evidence",
    "strength_evidence",
    "Part",
    "Head",
    "claim_id",
    "relative_drop",
    "pct",
    "setting_rows",
    "usable",
    "replicates_of",
    "judged",
    "basis_of",
    "not_checkable",
    "combine_parts",
]

#: the methods whose kgeval stand-in is below its published strength where no strength table is built
BELOW_STRENGTH: dict[str, str] = {
    "bootea": "BootEA (Hits@1 0.471 on DBP15k fr-en at 30 % seeds, 0.72 of the published 0.653, in the "
    "real tier's s3/tables/strength.tsv)",
    "rsn4ea": "RSN4EA (Hits@1 0.104 on DBP15k fr-en at 30 % seeds, 0.30 of the 0.350 of Zhao et al.'s rerun on "
    "SRPRS EN-FR, another pair, in benchmarks/results/s3_strength_frEN.tsv)",
}
#: the resampling unit of every S3 interval, as the claims' interval column names it
UNIT = (
    "bootstrap over test mappings, the methods of a setting resampled together on their shared test mappings; "
    "the seeds (each a training seed and a draw of the seed mappings) pooled by a two-stage bootstrap, seeds drawn "
    "with replacement"
)

Replicates = Mapping[tuple[str, str, float, str], Mapping[str, np.ndarray]]
Setting = tuple[str, float]


#: what the reason of a claim on a below-strength method says where the tier builds no strength table
NO_STRENGTH_TABLE = (
    "below strength by kgeval's fixed list (no strength table in this tier: studies.s3.strength.enabled is false)"
)


@dataclass(frozen=True)
class S3Evidence:
    """What the claims read: the wide table (``table3.tsv``), every setting's replicates, the interval level, the
    methods below their published strength (method -> what is weak; empty for the paper's own methods), the methods
    without a published figure (method -> why) and whether strength was measured (a strength table was read)."""

    table: pd.DataFrame
    replicates: Replicates
    level: float = 0.95
    below_strength: Mapping[str, str] = field(default_factory=lambda: dict(BELOW_STRENGTH))
    unrated: Mapping[str, str] = field(default_factory=dict)
    strength_measured: bool = False
    strength_checked: frozenset[str] = frozenset()


def strength_evidence(strength: pd.DataFrame | None) -> dict[str, Any]:
    """The ``below_strength``, ``unrated`` and ``strength_measured`` fields of :class:`S3Evidence` from a strength
    table (:mod:`kgeval.studies.s3.strength`), or, without one, the fixed list :data:`BELOW_STRENGTH`. A method of
    the fixed list that the table does not hold keeps its fixed entry."""
    if strength is None:
        return {"below_strength": dict(BELOW_STRENGTH), "unrated": {}, "strength_measured": False}
    checked = frozenset(strength.loc[strength["start"] == "trained", "model"].astype(str))
    below = {m: text for m, text in BELOW_STRENGTH.items() if m not in checked}
    below.update(table_below_strength(strength))
    return {"below_strength": below, "unrated": table_unrated(strength), "strength_measured": True,
            "strength_checked": checked}


@dataclass(frozen=True)
class Part:
    """One method's (or the mean's) part of a claim: its text, judgement (None: not checkable) and interval."""

    text: str
    judgement: Judgement | None
    interval: str = ""


@dataclass(frozen=True)
class Head:
    """The fixed columns of one claim row."""

    claim: str
    statement: str
    paper: str
    tolerance: str


def claim_id(pair: str, name: str) -> str:
    """The id of claim ``name`` judged on ``pair``: ``s3.<pair>.<name>``."""
    return f"s3.{pair}.{name}"


def relative_drop(x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray | float:
    """``(x - y) / x`` elementwise: the drop from ``x`` to ``y`` relative to ``x`` (NaN where ``x <= 0``)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(x > 0, (x - y) / x, np.nan)
    return float(out) if out.ndim == 0 else out


def pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def setting_rows(table: pd.DataFrame, pair: str, setting: Setting, models: Sequence[str]) -> pd.DataFrame:
    part = table[
        (table["dataset"] == pair)
        & (table["bias"] == setting[0])
        & np.isclose(table["train_ratio"].astype(float), setting[1])
        & table["model"].isin(models)
    ]
    return part.set_index("model")


def row_note(row: pd.Series) -> str:
    """A setting row's note (why it has no value), or ``no value``."""
    note = row["note"] if "note" in row.index else ""
    return note if isinstance(note, str) and note else "no value"


def usable(
    table: pd.DataFrame, pair: str, settings: Mapping[str, Setting], models: Sequence[str], columns: Sequence[str]
) -> tuple[dict[str, pd.DataFrame], list[str], str]:
    """Each named setting's rows, the methods with finite ``columns`` in all of them, and why the others are left
    out (a skipped setting's note, or a method that did not run)."""
    rows = {label: setting_rows(table, pair, setting, models) for label, setting in settings.items()}
    usable, missing = list(models), []
    for label, part in rows.items():
        lacking = {}
        for m in models:
            if m not in part.index:
                lacking[m] = "not run"
            elif not np.all(np.isfinite(part.loc[m, list(columns)].to_numpy(dtype=float))):
                lacking[m] = row_note(part.loc[m])
        usable = [m for m in usable if m not in lacking]
        for note in sorted(set(lacking.values())):
            names = ", ".join(m for m in models if lacking.get(m) == note)
            missing.append(f"{label} ({setting_label(*settings[label])}) lacks {names}: {note}")
    return rows, usable, "; ".join(missing)


def replicates_of(ev: S3Evidence, pair: str, setting: Setting, model: str, column: str) -> np.ndarray:
    key = (pair, setting[0], float(setting[1]), model)
    values = ev.replicates.get(key)
    if values is None:
        raise KeyError(f"no bootstrap replicates for the S3 setting {key}; was its ranks table among the inputs?")
    return np.asarray(values[column], dtype=float)


def judged(ev: S3Evidence, text: str, point: float, reps: np.ndarray, criterion: Criterion, name: str) -> Part:
    low, high = percentile_interval(reps, ev.level)
    return Part(text, judge(point, low, high, criterion, name=name), f"{name} {format_interval(low, high, digits=3)}")


def basis_of(ev: S3Evidence, models: Sequence[str]) -> str:
    weak = [ev.below_strength[m] for m in models if m in ev.below_strength]
    if weak:
        return stand_in("; ".join(weak), below_strength=True)
    if not ev.strength_measured:
        return stand_in("kgeval's PyTorch re-implementations of " + ", ".join(models))
    unrated = [ev.unrated.get(m, f"{m} (not in the strength table)") for m in models
               if m in ev.unrated or m not in ev.strength_checked]
    return stand_in("; ".join(unrated)) if unrated else MEASURED


def strength_note(ev: S3Evidence, models: Sequence[str]) -> str:
    """:data:`NO_STRENGTH_TABLE` where a method of the claim is below strength by the fixed list, else empty."""
    weak = any(m in ev.below_strength for m in models)
    return NO_STRENGTH_TABLE if weak and not ev.strength_measured else ""


def not_checkable(head: Head, reason: str, basis: str, kgeval: str = "n/a") -> Claim:
    """A ``not checkable`` row of ``head`` with its reason (``kgeval``: what was computed, if anything)."""
    return Claim(head.claim, head.statement, head.paper, kgeval, head.tolerance, NOT_CHECKABLE, reason, basis=basis)


def combine_parts(
    ev: S3Evidence, head: Head, parts: list[Part], models: Sequence[str], remark: str = "", note: str = ""
) -> Claim:
    """One row from the parts (all must hold); a ``holds`` resting on a method below strength becomes
    ``inconclusive``.

    :param remark: what was left out and why (the reason's ``left out:`` part)
    :param note: a sentence the reason always holds (e.g. where the thresholds come from)
    """
    basis = basis_of(ev, models)
    text = "; ".join(p.text for p in parts if p.text)
    checked = [p for p in parts if p.judgement is not None]
    if not checked:
        reason = "; ".join(t for t in (remark or "nothing to judge", note) if t)
        return not_checkable(head, reason, basis, text or "n/a")
    judgement = combine([p.judgement for p in checked])
    weak = [m for m in models if m in ev.below_strength]
    if judgement.verdict == HOLDS and weak:
        judgement = Judgement(
            INCONCLUSIVE,
            f"the criterion is met ({judgement.evidence}), but it rests on {', '.join(weak)} below published "
            "strength, which cannot support it",
        )
    interval = "; ".join(p.interval for p in checked) + f" ({100 * ev.level:g} % {UNIT})"
    reason = "; ".join(r for r in (f"left out: {remark}" if remark else "", strength_note(ev, models), note) if r)
    return interval_claim(head.claim, head.statement, head.paper, text, judgement, interval, head.tolerance,
                          basis=basis, reason=reason)


