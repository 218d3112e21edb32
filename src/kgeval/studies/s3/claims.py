"""S3 claims table (``claims/s3.tsv``): paper 002's findings of Sec. 4.2-4.3 checked on kgeval's Tables 2-3.

Method families (:data:`kgeval.studies.s3.models.METHOD_FAMILIES`): *structure* (gcn_align, transe_merge, bootea - the
paper's BootEA and RSN4EA), *literal* (rdgcn, multike - the paper's RDGCN and MultiKE); the training-free
name_similarity is in no family. Every claim is judged per dataset; it holds when it holds on every dataset where it
can be checked, and lists each dataset's values.

- ``s3.table2_drop_ideal_to_industrial``: the mean MRR over the trained methods is lower in the industrial context
  than in the ideal one (paper, D-W-15K: 0.661 -> 0.262).
- ``s3.table2_drop_largest_on_different``: for the literal methods, the Hits@1 drop from ideal to industrial is
  larger on "different" than on "same" and "close" (paper: MultiKE on MED-BBK-9K 11.4%, 13.9%, 43.1%). Not checkable
  where a split holds fewer than :data:`~kgeval.studies.s3.tables.MIN_SPLIT_SIZE` test mappings in either context.
- ``s3.table2_structure_below_0.1``: every structure-only method has Hits@1 < 0.1 on all test mappings in the
  industrial context (paper: BootEA, RSN4EA all metrics < 0.1).
- ``s3.table3_literal_robust_to_size``: without bias, the literal methods lose at most a third of their Hits@1 from
  the largest to the smallest training ratio (paper: 0.484 -> 0.394, 0.629 -> 0.513, i.e. 19% and 18%).
- ``s3.table3_bootstrapping_sensitive_to_size``: without bias, bootea loses at least half of its Hits@1 from the
  largest to the smallest training ratio, more than any literal method (paper: 0.818 -> 0.026, 97%).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kgeval.claims import NOT_CHECKABLE, Claim, ordinal_claim, write_claims
from kgeval.io import read_tsv
from kgeval.studies.s3.models import METHOD_FAMILIES
from kgeval.studies.s3.tables import MIN_SPLIT_SIZE

__all__ = ["LITERAL_ROBUST_MAX_DROP", "BOOTSTRAP_MIN_DROP", "s3_claims", "write_s3_claims"]

#: largest relative Hits@1 drop (largest -> smallest ratio) that counts as robust
LITERAL_ROBUST_MAX_DROP = 1 / 3
#: least relative Hits@1 drop that counts as sensitive
BOOTSTRAP_MIN_DROP = 0.5


def _rows(table: pd.DataFrame, dataset: str, bias: str, ratio: float, models: Sequence[str]) -> pd.DataFrame:
    part = table[
        (table["dataset"] == dataset)
        & (table["bias"] == bias)
        & np.isclose(table["train_ratio"].astype(float), float(ratio))
        & table["model"].isin(list(models))
    ]
    return part[part["hits@1_all"].notna()].set_index("model")


def _not_checkable(claim: str, statement: str, paper: str, reason: str) -> Claim:
    return Claim(claim, statement, paper, "n/a", "", NOT_CHECKABLE, reason)


def _combine(claim: str, statement: str, paper: str, tolerance: str, results: list[tuple[str, bool | None, str]], why: str) -> Claim:
    """``results``: per dataset (text, holds or None = not checkable there, reason)."""
    checked = [r for r in results if r[1] is not None]
    text = "; ".join(t for t, _, _ in results)
    if not checked:
        reasons = "; ".join(r for _, _, r in results if r) or "no dataset has the settings"
        return Claim(claim, statement, paper, text or "n/a", tolerance, NOT_CHECKABLE, reasons)
    holds = all(h for _, h, _ in checked)
    extra = "; ".join(r for _, h, r in results if h is None and r)
    specific = "; ".join(r for _, h, r in checked if h is False and r)
    reason = "" if holds else (specific or why)
    if extra:
        reason = (reason + "; " if reason else "") + "not checkable on " + extra
    return ordinal_claim(claim, statement, paper, text, holds, reason=reason, tolerance=tolerance)


def _drop_claim(table, datasets, ideal, industrial, structure, literal) -> Claim:
    statement = "Table 2 / Sec. 4.2: the mean MRR of the trained methods drops from the ideal to the industrial context"
    paper = "D-W-15K 0.661 -> 0.262; MED-BBK-9K 0.327 -> 0.118"
    results = []
    for d in datasets:
        a = _rows(table, d, *ideal, [*structure, *literal])
        b = _rows(table, d, *industrial, [*structure, *literal])
        common = a.index.intersection(b.index)
        if not len(common):
            results.append((f"{d}: n/a", None, f"{d} (no trained method in both contexts)"))
            continue
        x, y = float(a.loc[common, "mrr_all"].mean()), float(b.loc[common, "mrr_all"].mean())
        results.append((f"{d} {x:.3f} -> {y:.3f}", y < x, ""))
    return _combine("s3.table2_drop_ideal_to_industrial", statement, paper, "any drop", results,
                    "the industrial MRR is not lower: the reduced budgets or the pair's names make the biased seeds as useful")


def _different_claim(table, datasets, ideal, industrial, literal) -> Claim:
    statement = (
        "Table 2 / Sec. 4.2: for the name-using methods (MultiKE, RDGCN; here rdgcn, multike) the Hits@1 drop from "
        "ideal to industrial is largest on the 'different' name split"
    )
    paper = "MultiKE, MED-BBK-9K: same -11.4%, close -13.9%, different -43.1%"
    results = []
    for d in datasets:
        a, b = _rows(table, d, *ideal, literal), _rows(table, d, *industrial, literal)
        common = a.index.intersection(b.index)
        if not len(common):
            results.append((f"{d}: n/a", None, f"{d} (no name-using method in both contexts)"))
            continue
        small = [
            s for s in ("same", "close", "different")
            if not (np.nanmin([a.loc[common, f"n_{s}"].min(), b.loc[common, f"n_{s}"].min()]) >= MIN_SPLIT_SIZE)
        ]
        if small:
            sizes = {s: np.nanmin([a.loc[common, f"n_{s}"].min(), b.loc[common, f"n_{s}"].min()]) for s in small}
            listed = ", ".join(f"{s} ({'empty' if not np.isfinite(n) or n == 0 else f'{n:g}'})" for s, n in sizes.items())
            results.append((f"{d}: n/a", None, f"{d} (fewer than {MIN_SPLIT_SIZE} test mappings in {listed})"))
            continue
        parts, ok = [], True
        for m in common:
            drop = {s: float(a.loc[m, f"hits@1_{s}"] - b.loc[m, f"hits@1_{s}"]) for s in ("same", "close", "different")}
            ok &= drop["different"] > max(drop["same"], drop["close"])
            parts.append(f"{m} {drop['same']:+.3f}/{drop['close']:+.3f}/{drop['different']:+.3f}")
        results.append((f"{d} drops same/close/different: " + ", ".join(parts), ok, ""))
    return _combine("s3.table2_drop_largest_on_different", statement, paper, "different > same and close", results,
                    "the drop on 'different' is not the largest for every name-using method")


def _structure_claim(table, datasets, industrial, structure) -> Claim:
    statement = "Table 2 / Sec. 4.2: structure-only methods (BootEA, RSN4EA) stay below 0.1 Hits@1 in the industrial context"
    paper = "BootEA 0.037, RSN4EA 0.043 (D-W-15K); 0.004, 0.005 (MED-BBK-9K)"
    results = []
    for d in datasets:
        b = _rows(table, d, *industrial, structure)
        if b.empty:
            results.append((f"{d}: n/a", None, f"{d} (no structure-only method ran in the industrial context)"))
            continue
        values = {m: float(b.loc[m, "hits@1_all"]) for m in b.index}
        results.append((f"{d} " + ", ".join(f"{m} {v:.3f}" for m, v in values.items()), max(values.values()) < 0.1, ""))
    return _combine("s3.table2_structure_below_0.1", statement, paper, "< 0.1 each", results,
                    "a structure-only method reaches 0.1 Hits@1: the seed alignment (merged or pulled together) still carries it on this pair")


def _ratios(table: pd.DataFrame, dataset: str) -> tuple[float, float] | None:
    r = sorted(set(table.loc[(table["dataset"] == dataset) & (table["bias"] == "none"), "train_ratio"].astype(float)))
    return (r[-1], r[0]) if len(r) >= 2 else None


def _size_claims(table, datasets, literal) -> tuple[Claim, Claim]:
    robust_statement = (
        "Table 3 / Sec. 4.3.1: without bias, the name/attribute-using methods (MultiKE, RDGCN) are robust to the "
        "training size (Hits@1 from 20% to 2%)"
    )
    robust_paper = "MultiKE 0.484 -> 0.394, RDGCN 0.629 -> 0.513"
    boot_statement = (
        "Table 3 / Sec. 4.3.1: without bias, the bootstrapping method (BootEA) is very sensitive to the training "
        "size (Hits@1 from 20% to 2%), more than MultiKE and RDGCN"
    )
    boot_paper = "BootEA 0.818 -> 0.026"
    robust, boot = [], []
    for d in datasets:
        ratios = _ratios(table, d)
        if ratios is None:
            robust.append((f"{d}: n/a", None, f"{d} (fewer than two training ratios without bias)"))
            boot.append((f"{d}: n/a", None, f"{d} (fewer than two training ratios without bias)"))
            continue
        big, small = ratios
        a = _rows(table, d, "none", big, [*literal, "bootea"])
        b = _rows(table, d, "none", small, [*literal, "bootea"])
        drops = {}
        for m in a.index.intersection(b.index):
            x, y = float(a.loc[m, "hits@1_all"]), float(b.loc[m, "hits@1_all"])
            drops[m] = (x, y, (x - y) / x if x > 0 else float("nan"))
        label = f"{100 * big:g}% -> {100 * small:g}%"
        lit = {m: v for m, v in drops.items() if m in literal}
        if lit:
            ok = all(np.isfinite(v[2]) and v[2] <= LITERAL_ROBUST_MAX_DROP for v in lit.values())
            robust.append((f"{d} ({label}) " + ", ".join(f"{m} {x:.3f} -> {y:.3f}" for m, (x, y, _) in lit.items()), ok, ""))
        else:
            robust.append((f"{d}: n/a", None, f"{d} (no name-using method ran)"))
        if "bootea" in drops:
            x, y, rel = drops["bootea"]
            worst_literal = max((v[2] for v in lit.values() if np.isfinite(v[2])), default=-np.inf)
            ok = bool(np.isfinite(rel) and rel >= BOOTSTRAP_MIN_DROP and rel > worst_literal)
            why = ""
            if not ok:
                why = (
                    f"{d}: bootea has Hits@1 {x:.3f} already at {100 * big:g}% - it did not learn the alignment with "
                    "this budget, so there is nothing to lose"
                    if x < 0.1
                    else f"{d}: bootea keeps {y:.3f} of {x:.3f} (relative drop {rel:.2f})"
                )
            boot.append((f"{d} ({label}) bootea {x:.3f} -> {y:.3f}", ok, why))
        else:
            boot.append((f"{d}: n/a", None, f"{d} (bootea did not run)"))
    tol_r = f"relative drop <= {LITERAL_ROBUST_MAX_DROP:.2f}"
    tol_b = f"relative drop >= {BOOTSTRAP_MIN_DROP:.2f} and above the name-using methods'"
    return (
        _combine("s3.table3_literal_robust_to_size", robust_statement, robust_paper, tol_r, robust,
                 "a name-using method loses more than a third of its Hits@1"),
        _combine("s3.table3_bootstrapping_sensitive_to_size", boot_statement, boot_paper, tol_b, boot,
                 "bootea keeps more than half its Hits@1 at the smallest ratio, or loses less than a name-using method"),
    )


def s3_claims(
    table: pd.DataFrame, ideal: Mapping[str, Any], industrial: Mapping[str, Any], models: Sequence[str]
) -> list[Claim]:
    """The S3 claims (module doc) from the wide table of every setting (``table3.tsv``).

    :param ideal: ``{bias, train_ratio}`` of the ideal context
    :param industrial: ``{bias, train_ratio}`` of the industrial context
    :param models: the configured methods
    """
    structure = [m for m in models if METHOD_FAMILIES.get(m) == "structure"]
    literal = [m for m in models if METHOD_FAMILIES.get(m) == "literal"]
    datasets = sorted(table["dataset"].unique()) if len(table) else []
    ideal_t = (ideal["bias"], float(ideal["train_ratio"]))
    industrial_t = (industrial["bias"], float(industrial["train_ratio"]))
    claims = [_drop_claim(table, datasets, ideal_t, industrial_t, structure, literal)]
    if literal:
        claims.append(_different_claim(table, datasets, ideal_t, industrial_t, literal))
    else:
        claims.append(_not_checkable("s3.table2_drop_largest_on_different", "Table 2: drop largest on 'different' for name-using methods",
                                     "MultiKE, MED-BBK-9K: -11.4%, -13.9%, -43.1%", "no name-using method (rdgcn, multike) is configured"))
    if structure:
        claims.append(_structure_claim(table, datasets, industrial_t, structure))
    else:
        claims.append(_not_checkable("s3.table2_structure_below_0.1", "Table 2: structure-only methods below 0.1 Hits@1",
                                     "BootEA 0.037, RSN4EA 0.043", "no structure-only method is configured"))
    claims.extend(_size_claims(table, datasets, literal))
    return claims


def write_s3_claims(
    table_path: str | os.PathLike,
    ideal: Mapping[str, Any],
    industrial: Mapping[str, Any],
    models: Sequence[str],
    out: str | os.PathLike,
) -> pd.DataFrame:
    """Read ``table3.tsv`` (every setting), judge the claims and write ``claims/s3.tsv``."""
    return write_claims(s3_claims(read_tsv(table_path), ideal, industrial, models), out)
