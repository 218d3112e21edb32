"""S3 claims table (``claims/s3.tsv``): paper 002's findings of Sec. 4.2-4.3 checked on kgeval's Tables 2-3.

Method families (``families``, by default :data:`kgeval.studies.s3.models.METHOD_FAMILIES`): *structure*
(gcn_align, transe_merge, bootea, rsn4ea - the paper's BootEA and RSN4EA), *literal* (rdgcn, multike - the paper's
RDGCN and MultiKE); the training-free name_similarity is in no family. Every claim is judged per pair: its id carries
the pair, ``s3.<pair>.<claim>`` (e.g. ``s3.dbp15k_fr_en.table2_drop_ideal_to_industrial``), and its row lists each
method's value. A relative drop from ``x`` to ``y`` is ``(x - y) / x``, relative to the value in the better setting (the
ideal context, or the largest training ratio), as the paper computes its percentages (MultiKE's 11.4 % on "same" is
``(0.342 - 0.303) / 0.342``); its interval is the percentile interval of the same ratio per bootstrap replicate.

- ``table2_drop_ideal_to_industrial``: every trained method loses much of its MRR from the ideal to the industrial
  context: the mean MRR over the methods drops by at least :data:`MEAN_MIN_DROP` and each method's MRR by at least
  :data:`METHOD_MIN_DROP` (relative drops). The paper's mean MRR: 0.661 -> 0.262 on D-W-15K (Table 2's own rows give
  0.706 -> 0.262), 0.327 -> 0.118 on MED-BBK-9K, i.e. -60 % to -64 %; its per-method drops range from -13 % (MultiKE,
  MED-BBK-9K) to -97 %, so a per-method threshold of 30 % would fail on the paper's own Table 2.
- ``table2_drop_largest_on_different``: for each literal method, the relative Hits@1 drop from ideal to industrial
  is larger on "different" than on "same" and "close" (paper: MultiKE on MED-BBK-9K 11.4 %, 13.9 %, 43.1 %). Not
  checkable where a split holds fewer than :data:`~kgeval.studies.s3.tables.MIN_SPLIT_SIZE` test mappings in either
  context.
- ``table2_structure_below_0.1``: every structure-only method has Hits@1 < 0.1 on all test mappings in the
  industrial context (paper: BootEA, RSN4EA all metrics < 0.1).
- ``table3_literal_robust_to_size``: without bias, the literal methods lose at most :data:`LITERAL_ROBUST_MAX_DROP`
  of their Hits@1 from the largest to the smallest training ratio (paper: 0.484 -> 0.394, 0.629 -> 0.513, i.e. 19 %
  and 18 %).
- ``table3_bootstrapping_sensitive_to_size``: without bias, bootea loses at least :data:`BOOTSTRAP_MIN_DROP` of its
  Hits@1 from the largest to the smallest training ratio, more than any literal method (paper: 0.818 -> 0.026, 97 %).

A claim resting on a method below its published strength has basis ``stand-in below strength: <method> at <ratio>
of published`` and never ``holds``: where its criterion is met the verdict is ``inconclusive`` and the reason says
why. Which methods are below strength comes from the strength table (``s3/tables/strength.tsv``,
:mod:`kgeval.studies.s3.strength`, :func:`strength_evidence`) where the tier builds it: a method under
:data:`~kgeval.studies.s3.strength.STRENGTH_GOAL` of its published Hits@1 is below strength; a claim resting only on
methods at strength has basis ``measured``, one resting on a method without a published figure (MultiKE) names it as
a ``stand-in``. Without a strength table (the default tier) the fixed list :data:`BELOW_STRENGTH` stands in for it,
and the reason says so. A pair whose context was skipped (e.g. the industrial context's
attribute bias on SRPRS, which has no attributes) makes the claims that need it ``not checkable``, with the skip's
reason.
"""

from __future__ import annotations

import os
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
    write_claims,
)
from kgeval.io import read_tsv
from kgeval.studies.s3.models import METHOD_FAMILIES
from kgeval.studies.s3.replicates import setting_replicates
from kgeval.studies.s3.strength import below_strength as table_below_strength
from kgeval.studies.s3.strength import unrated as table_unrated
from kgeval.studies.s3.tables import MIN_SPLIT_SIZE, setting_label
from kgeval.uncertainty.resampling import BootstrapSettings, percentile_interval

__all__ = [
    "MEAN_MIN_DROP",
    "METHOD_MIN_DROP",
    "STRUCTURE_MAX_HITS1",
    "LITERAL_ROBUST_MAX_DROP",
    "BOOTSTRAP_MIN_DROP",
    "BELOW_STRENGTH",
    "NO_STRENGTH_TABLE",
    "CLAIM_NAMES",
    "S3Evidence",
    "strength_evidence",
    "claim_id",
    "relative_drop",
    "s3_claims",
    "write_s3_claims",
]

#: least relative drop of the mean MRR over the trained methods, ideal -> industrial, that counts as dramatic
MEAN_MIN_DROP = 0.3
#: least relative MRR drop of each trained method, ideal -> industrial (the paper's smallest: 12.8 %)
METHOD_MIN_DROP = 0.1
#: the Hits@1 below which a structure-only method counts as failing in the industrial context
STRUCTURE_MAX_HITS1 = 0.1
#: largest relative Hits@1 drop (largest -> smallest ratio) that counts as robust
LITERAL_ROBUST_MAX_DROP = 1 / 3
#: least relative Hits@1 drop that counts as sensitive
BOOTSTRAP_MIN_DROP = 0.5
#: the methods whose kgeval stand-in is below its published strength where no strength table is built
BELOW_STRENGTH: dict[str, str] = {
    "bootea": "BootEA (Hits@1 0.471 on DBP15k fr-en at 30 % seeds, 0.72 of the published 0.653, in the "
    "real tier's s3/tables/strength.tsv)",
    "rsn4ea": "RSN4EA (Hits@1 0.104 on DBP15k fr-en at 30 % seeds, 0.27 of OpenEA's EN-FR-15K value 0.393, in "
    "benchmarks/results/s3_strength_frEN.tsv)",
}
#: the claims judged on every pair, in table order
CLAIM_NAMES: tuple[str, ...] = (
    "table2_drop_ideal_to_industrial",
    "table2_drop_largest_on_different",
    "table2_structure_below_0.1",
    "table3_literal_robust_to_size",
    "table3_bootstrapping_sensitive_to_size",
)

_SPLITS = ("same", "close", "different")
_UNIT = (
    "bootstrap over test mappings, the methods of a setting resampled together on their shared test mappings; "
    "one draw of the seed mappings per training seed, seeds averaged"
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
class _Part:
    """One method's (or the mean's) part of a claim: its text, judgement (None: not checkable) and interval."""

    text: str
    judgement: Judgement | None
    interval: str = ""


@dataclass(frozen=True)
class _Head:
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


def _pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def _rows(table: pd.DataFrame, pair: str, setting: Setting, models: Sequence[str]) -> pd.DataFrame:
    part = table[
        (table["dataset"] == pair)
        & (table["bias"] == setting[0])
        & np.isclose(table["train_ratio"].astype(float), setting[1])
        & table["model"].isin(models)
    ]
    return part.set_index("model")


def _note(row: pd.Series) -> str:
    note = row["note"] if "note" in row.index else ""
    return note if isinstance(note, str) and note else "no value"


def _usable(
    table: pd.DataFrame, pair: str, settings: Mapping[str, Setting], models: Sequence[str], columns: Sequence[str]
) -> tuple[dict[str, pd.DataFrame], list[str], str]:
    """Each named setting's rows, the methods with finite ``columns`` in all of them, and why the others are left
    out (a skipped setting's note, or a method that did not run)."""
    rows = {label: _rows(table, pair, setting, models) for label, setting in settings.items()}
    usable, missing = list(models), []
    for label, part in rows.items():
        lacking = {}
        for m in models:
            if m not in part.index:
                lacking[m] = "not run"
            elif not np.all(np.isfinite(part.loc[m, list(columns)].to_numpy(dtype=float))):
                lacking[m] = _note(part.loc[m])
        usable = [m for m in usable if m not in lacking]
        for note in sorted(set(lacking.values())):
            names = ", ".join(m for m in models if lacking.get(m) == note)
            missing.append(f"{label} ({setting_label(*settings[label])}) lacks {names}: {note}")
    return rows, usable, "; ".join(missing)


def _reps(ev: S3Evidence, pair: str, setting: Setting, model: str, column: str) -> np.ndarray:
    key = (pair, setting[0], float(setting[1]), model)
    values = ev.replicates.get(key)
    if values is None:
        raise KeyError(f"no bootstrap replicates for the S3 setting {key}; was its ranks table among the inputs?")
    return np.asarray(values[column], dtype=float)


def _judged(ev: S3Evidence, text: str, point: float, reps: np.ndarray, criterion: Criterion, name: str) -> _Part:
    low, high = percentile_interval(reps, ev.level)
    return _Part(text, judge(point, low, high, criterion, name=name), f"{name} {format_interval(low, high, digits=3)}")


def _basis(ev: S3Evidence, models: Sequence[str]) -> str:
    weak = [ev.below_strength[m] for m in models if m in ev.below_strength]
    if weak:
        return stand_in("; ".join(weak), below_strength=True)
    if not ev.strength_measured:
        return stand_in("kgeval's PyTorch re-implementations of " + ", ".join(models))
    unrated = [ev.unrated.get(m, f"{m} (not in the strength table)") for m in models
               if m in ev.unrated or m not in ev.strength_checked]
    return stand_in("; ".join(unrated)) if unrated else MEASURED


def _strength_note(ev: S3Evidence, models: Sequence[str]) -> str:
    """:data:`NO_STRENGTH_TABLE` where a method of the claim is below strength by the fixed list, else empty."""
    weak = any(m in ev.below_strength for m in models)
    return NO_STRENGTH_TABLE if weak and not ev.strength_measured else ""


def _not_checkable(head: _Head, reason: str, basis: str) -> Claim:
    return Claim(head.claim, head.statement, head.paper, "n/a", head.tolerance, NOT_CHECKABLE, reason, basis=basis)


def _combine(ev: S3Evidence, head: _Head, parts: list[_Part], models: Sequence[str], remark: str = "") -> Claim:
    """One row from the parts (all must hold); a ``holds`` resting on a method below strength becomes
    ``inconclusive``."""
    basis = _basis(ev, models)
    text = "; ".join(p.text for p in parts if p.text)
    checked = [p for p in parts if p.judgement is not None]
    if not checked:
        return _not_checkable(head, remark or "nothing to judge", basis)
    judgement = combine([p.judgement for p in checked])
    weak = [m for m in models if m in ev.below_strength]
    if judgement.verdict == HOLDS and weak:
        judgement = Judgement(
            INCONCLUSIVE,
            f"the criterion is met ({judgement.evidence}), but it rests on {', '.join(weak)} below published "
            "strength, which cannot support it",
        )
    interval = "; ".join(p.interval for p in checked) + f" ({100 * ev.level:g} % {_UNIT})"
    reason = "; ".join(r for r in (f"left out: {remark}" if remark else "", _strength_note(ev, models)) if r)
    return interval_claim(head.claim, head.statement, head.paper, text, judgement, interval, head.tolerance,
                          basis=basis, reason=reason)


def _drop_claim(ev: S3Evidence, pair: str, contexts: Mapping[str, Setting], methods: Sequence[str]) -> Claim:
    head = _Head(
        claim_id(pair, "table2_drop_ideal_to_industrial"),
        "Table 2 / Sec. 4.2: every trained method's performance drops dramatically from the ideal to the industrial "
        f"context: the mean MRR over the methods by at least {MEAN_MIN_DROP:.0%} and each method's by at least "
        f"{METHOD_MIN_DROP:.0%} (relative to the ideal)",
        "mean MRR D-W-15K 0.661 -> 0.262 (-60 %; Table 2's rows: 0.706), MED-BBK-9K 0.327 -> 0.118 (-64 %); "
        "per method -13 % (MultiKE, MED-BBK-9K) to -97 % (BootEA, MED-BBK-9K)",
        f"relative drop of the mean >= {MEAN_MIN_DROP:g}, of each method >= {METHOD_MIN_DROP:g}",
    )
    rows, common, missing = _usable(ev.table, pair, contexts, methods, ["mrr_all"])
    if not common:
        return _not_checkable(head, missing or "no trained method is configured", _basis(ev, methods))
    x, y = rows["ideal"].loc[common, "mrr_all"].astype(float), rows["industrial"].loc[common, "mrr_all"].astype(float)
    rx = {m: _reps(ev, pair, contexts["ideal"], m, "mrr_all") for m in common}
    ry = {m: _reps(ev, pair, contexts["industrial"], m, "mrr_all") for m in common}
    mean = relative_drop(x.mean(), y.mean())
    mean_reps = relative_drop(np.mean(list(rx.values()), axis=0), np.mean(list(ry.values()), axis=0))
    parts = [_judged(ev, f"mean MRR {x.mean():.3f} -> {y.mean():.3f} (drop {_pct(mean)})", mean, mean_reps,
                     Criterion(lower=MEAN_MIN_DROP), "mean relative drop")]
    for m in common:
        drop = relative_drop(x[m], y[m])
        parts.append(_judged(ev, f"{m} {x[m]:.3f} -> {y[m]:.3f} ({_pct(drop)})", drop, relative_drop(rx[m], ry[m]),
                             Criterion(lower=METHOD_MIN_DROP), f"{m} relative drop"))
    return _combine(ev, head, parts, common, missing)


def _small_splits(rows: Mapping[str, pd.DataFrame], common: Sequence[str]) -> str:
    sizes = {s: np.nanmin([part.loc[common, f"n_{s}"].astype(float).min() for part in rows.values()]) for s in _SPLITS}
    small = {s: n for s, n in sizes.items() if not n >= MIN_SPLIT_SIZE}
    return ", ".join(f"{s} ({'empty' if not np.isfinite(n) or n == 0 else f'{n:g}'})" for s, n in small.items())


def _different_claim(ev: S3Evidence, pair: str, contexts: Mapping[str, Setting], literal: Sequence[str]) -> Claim:
    head = _Head(
        claim_id(pair, "table2_drop_largest_on_different"),
        "Table 2 / Sec. 4.2: for the name-using methods (MultiKE, RDGCN; here rdgcn, multike) the relative Hits@1 "
        "drop from ideal to industrial is largest on the 'different' name split",
        "MultiKE, MED-BBK-9K: same 11.4 %, close 13.9 %, different 43.1 % (.342 -> .303, .173 -> .149, .072 -> .041)",
        "relative drop on different - max(same, close) > 0, each method",
    )
    if not literal:
        return _not_checkable(head, "no name-using method (rdgcn, multike) is configured", _basis(ev, literal))
    # the methods that ran both contexts first (an empty split has no Hits@1 and would only read as "no value")
    rows, ran, missing = _usable(ev.table, pair, contexts, literal, ["hits@1_all"])
    if not ran:
        return _not_checkable(head, missing, _basis(ev, literal))
    small = _small_splits(rows, ran)
    if small:
        return _not_checkable(head, f"fewer than {MIN_SPLIT_SIZE} test mappings in {small}", _basis(ev, literal))
    rows, common, missing = _usable(ev.table, pair, contexts, literal, [f"hits@1_{s}" for s in _SPLITS])
    if not common:
        return _not_checkable(head, missing, _basis(ev, literal))
    parts = []
    for m in common:
        drop = {s: relative_drop(rows["ideal"].loc[m, f"hits@1_{s}"], rows["industrial"].loc[m, f"hits@1_{s}"])
                for s in _SPLITS}
        reps = {s: relative_drop(_reps(ev, pair, contexts["ideal"], m, f"hits@1_{s}"),
                                 _reps(ev, pair, contexts["industrial"], m, f"hits@1_{s}")) for s in _SPLITS}
        point = drop["different"] - max(drop["same"], drop["close"])
        margin = reps["different"] - np.maximum(reps["same"], reps["close"])
        text = f"{m} relative drops " + ", ".join(f"{s} {_pct(drop[s])}" for s in _SPLITS)
        parts.append(_judged(ev, text, point, margin, Criterion(lower=0.0, strict=True), f"{m} margin"))
    return _combine(ev, head, parts, common, missing)


def _structure_claim(ev: S3Evidence, pair: str, industrial: Setting, structure: Sequence[str]) -> Claim:
    head = _Head(
        claim_id(pair, "table2_structure_below_0.1"),
        "Table 2 / Sec. 4.2: structure-only methods (BootEA, RSN4EA) stay below 0.1 Hits@1 in the industrial context",
        "BootEA 0.037, RSN4EA 0.043 (D-W-15K); 0.004, 0.005 (MED-BBK-9K)",
        f"Hits@1 < {STRUCTURE_MAX_HITS1:g} each",
    )
    if not structure:
        return _not_checkable(head, "no structure-only method is configured", _basis(ev, structure))
    rows, common, missing = _usable(ev.table, pair, {"industrial": industrial}, structure, ["hits@1_all"])
    if not common:
        return _not_checkable(head, missing, _basis(ev, structure))
    parts = []
    for m in common:
        value = float(rows["industrial"].loc[m, "hits@1_all"])
        parts.append(_judged(ev, f"{m} {value:.3f}", value, _reps(ev, pair, industrial, m, "hits@1_all"),
                             Criterion(upper=STRUCTURE_MAX_HITS1, strict=True), m))
    return _combine(ev, head, parts, common, missing)


def _ratios(table: pd.DataFrame, pair: str) -> tuple[float, float] | None:
    r = sorted(set(table.loc[(table["dataset"] == pair) & (table["bias"] == "none"), "train_ratio"].astype(float)))
    return (r[-1], r[0]) if len(r) >= 2 else None


def _size_heads(pair: str) -> tuple[_Head, _Head]:
    robust = _Head(
        claim_id(pair, "table3_literal_robust_to_size"),
        "Table 3 / Sec. 4.3.1: without bias, the name/attribute-using methods (MultiKE, RDGCN) are robust to the "
        "training size (Hits@1 from 20% to 2%)",
        "MultiKE 0.484 -> 0.394, RDGCN 0.629 -> 0.513",
        f"relative drop <= {LITERAL_ROBUST_MAX_DROP:.2f}",
    )
    sensitive = _Head(
        claim_id(pair, "table3_bootstrapping_sensitive_to_size"),
        "Table 3 / Sec. 4.3.1: without bias, the bootstrapping method (BootEA) is very sensitive to the training "
        "size (Hits@1 from 20% to 2%), more than MultiKE and RDGCN",
        "BootEA 0.818 -> 0.026",
        f"relative drop >= {BOOTSTRAP_MIN_DROP:.2f} and above the name-using methods'",
    )
    return robust, sensitive


def _size_drops(
    ev: S3Evidence, pair: str, contexts: Mapping[str, Setting], methods: Sequence[str]
) -> tuple[dict[str, tuple[float, float, float]], dict[str, np.ndarray], str]:
    """Per usable method ``(x, y, relative drop)`` and the drop's replicates, and why the others are left out."""
    rows, common, missing = _usable(ev.table, pair, contexts, methods, ["hits@1_all"])
    drops, reps = {}, {}
    for m in common:
        x, y = (float(rows[c].loc[m, "hits@1_all"]) for c in contexts)
        drops[m] = (x, y, relative_drop(x, y))
        reps[m] = relative_drop(*(_reps(ev, pair, s, m, "hits@1_all") for s in contexts.values()))
    return drops, reps, missing


def _size_claims(ev: S3Evidence, pair: str, literal: Sequence[str]) -> tuple[Claim, Claim]:
    """The robust (literal methods) and sensitive (bootea) claims of one pair."""
    heads = _size_heads(pair)
    ratios = _ratios(ev.table, pair)
    if ratios is None:
        why = "fewer than two training ratios without bias"
        return _not_checkable(heads[0], why, _basis(ev, literal)), _not_checkable(heads[1], why, _basis(ev, ["bootea"]))
    big, small = ratios
    contexts = {"largest ratio": ("none", big), "smallest ratio": ("none", small)}
    label = f"{100 * big:g}% -> {100 * small:g}%"
    drops, reps, missing = _size_drops(ev, pair, contexts, literal)
    lit = list(drops)
    robust_parts = [
        _judged(ev, f"{'' if i else f'no bias {label}: '}{m} {drops[m][0]:.3f} -> {drops[m][1]:.3f} "
                f"({_pct(drops[m][2])})", drops[m][2], reps[m], Criterion(upper=LITERAL_ROBUST_MAX_DROP),
                f"{m} relative drop")
        for i, m in enumerate(lit)
    ]
    robust = (_combine(ev, heads[0], robust_parts, lit, missing) if lit
              else _not_checkable(heads[0], missing or "no name-using method is configured", _basis(ev, literal)))
    boot, boot_reps, boot_missing = _size_drops(ev, pair, contexts, ["bootea"])
    if not boot:
        return robust, _not_checkable(heads[1], boot_missing, _basis(ev, ["bootea", *literal]))
    x, y, rel = boot["bootea"]
    sensitive = [_judged(ev, f"no bias {label}: bootea {x:.3f} -> {y:.3f} ({_pct(rel)})", rel, boot_reps["bootea"],
                         Criterion(lower=BOOTSTRAP_MIN_DROP), "bootea relative drop")]
    if lit:
        worst = np.fmax.reduce(np.stack([reps[m] for m in lit]), axis=0)
        point = rel - max(drops[m][2] for m in lit)
        sensitive.append(_judged(ev, "", point, boot_reps["bootea"] - worst, Criterion(lower=0.0, strict=True),
                                 "bootea minus largest name-using drop"))
    return robust, _combine(ev, heads[1], sensitive, ["bootea", *lit], missing)


def s3_claims(
    ev: S3Evidence,
    ideal: Mapping[str, Any],
    industrial: Mapping[str, Any],
    models: Sequence[str],
    families: Mapping[str, str] = METHOD_FAMILIES,
) -> list[Claim]:
    """The S3 claims (module doc) of every pair in the wide table of every setting (``table3.tsv``).

    :param ideal: ``{bias, train_ratio}`` of the ideal context
    :param industrial: ``{bias, train_ratio}`` of the industrial context
    :param models: the configured methods
    :param families: method -> ``structure``, ``literal`` or another family (not judged)
    :returns: :data:`CLAIM_NAMES` per pair (ids ``s3.<pair>.<name>``); one not checkable row per claim when no pair
        has results
    """
    structure = [m for m in models if families.get(m) == "structure"]
    literal = [m for m in models if families.get(m) == "literal"]
    pairs = sorted(ev.table["dataset"].unique()) if len(ev.table) else []
    contexts = {
        "ideal": (str(ideal["bias"]), float(ideal["train_ratio"])),
        "industrial": (str(industrial["bias"]), float(industrial["train_ratio"])),
    }
    if not pairs:
        return [Claim(f"s3.{name}", f"paper 002, {name}", "see the paper", "n/a", "", NOT_CHECKABLE,
                      "no S3 pair has results") for name in CLAIM_NAMES]
    claims = []
    for pair in pairs:
        claims.append(_drop_claim(ev, pair, contexts, [*structure, *literal]))
        claims.append(_different_claim(ev, pair, contexts, literal))
        claims.append(_structure_claim(ev, pair, contexts["industrial"], structure))
        claims.extend(_size_claims(ev, pair, literal))
    return claims


def write_s3_claims(
    table_path: str | os.PathLike,
    ranks_paths: Sequence[str | os.PathLike],
    features_paths: Mapping[str, str | os.PathLike],
    settings: Mapping[str, Any],
    out: str | os.PathLike,
    strength_path: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Read ``table3.tsv`` (every setting), every run's ranks, the datasets' features and the strength table (where
    the tier builds one; ``None``: the fixed list :data:`BELOW_STRENGTH`), judge the claims and write
    ``claims/s3.tsv``.

    :param settings: ``ideal``, ``industrial`` (``{bias, train_ratio}``), ``models`` and ``uncertainty`` (the config
        section: ``resamples``, ``seed``, ``level``)
    """
    uncertainty = BootstrapSettings.from_config(settings["uncertainty"])
    features = {d: read_tsv(p) for d, p in features_paths.items()}
    replicates = setting_replicates(ranks_paths, features, uncertainty)
    strength = read_tsv(strength_path) if strength_path else None
    evidence = S3Evidence(read_tsv(table_path), replicates, uncertainty.level, **strength_evidence(strength))
    return write_claims(s3_claims(evidence, settings["ideal"], settings["industrial"], settings["models"]), out)
