"""S2: adjust a published metric value after the fact, from the expectations table.

Hoyt et al. (2022, Sec. 4.1 and App. B.3.2) note that the adjusted index and the z-score are affine in the base
metric, with coefficients that depend only on the evaluation set's numbers of candidates. Given E[M] and V[M] under
random ranking (``results/tables/expectations.tsv``) a reported value M is therefore adjusted as

- adjusted index: (M - E[M]) / (M* - E[M]) with the optimum M* = 1 (every base metric here is 1 at all-best ranks),
  i.e. AMRI = 1 - (MR - 1) / (E[MR] - 1) and AMRR = (MRR - E[MRR]) / (1 - E[MRR]);
- expectation-normalised (MR only): AMR = MR / E[MR];
- z-score: ±(M - E[M]) / sqrt(V[M]), the sign making larger better.

Command line: ``kgeval adjust --dataset fb15k237 --split test --metric mrr --value 0.35``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from kgeval.io import read_tsv
from kgeval.metrics import METRICS, SIDES

__all__ = [
    "DEFAULT_TABLE",
    "Adjustment",
    "AdjustmentError",
    "adjust_value",
    "format_adjustment",
    "add_subparser",
]

DEFAULT_TABLE = Path("results") / "tables" / "expectations.tsv"


class AdjustmentError(ValueError):
    """The request names something the expectations table does not hold."""


@dataclass(frozen=True)
class Adjustment:
    """A base metric value with its adjusted values.

    :param derived: (key, description, value) for each adjusted value, registry keys where the registry has one
    """

    dataset: str
    split: str
    side: str
    metric: str
    value: float
    n_ranks: int
    expectation: float
    variance: float
    method: str
    derived: tuple[tuple[str, str, float], ...]


def _known(values) -> str:
    return ", ".join(sorted(str(v) for v in set(values)))


def _derived_key(base: str, kind: str, fallback: str) -> str:
    """The registry key of the adjusted/z metric of ``base`` (AMRI for MR), else a descriptive name."""
    preferred = {"mr": {"adjusted": "amri"}}
    if kind in preferred.get(base, {}):
        return preferred[base][kind]
    for key, spec in METRICS.items():
        if spec.base == base and spec.kind == kind:
            return key
    return fallback


def adjust_value(
    table: pd.DataFrame, dataset: str, split: str, metric: str, value: float, side: str = "both"
) -> Adjustment:
    """Adjust ``value`` of base metric ``metric`` on (dataset, split, side) with the table's expectation and variance.

    :param table: the expectations table (``dataset, split, side, metric, n_ranks, expectation, variance[, method]``)
    :raises AdjustmentError: for an unknown dataset, split, side or metric (listing the known ones), or a metric that
        is not a base metric
    """
    if dataset not in set(table["dataset"]):
        raise AdjustmentError(f"unknown dataset {dataset!r}; the expectations table has: {_known(table['dataset'])}")
    sub = table[table["dataset"] == dataset]
    if split not in set(sub["split"]):
        raise AdjustmentError(f"unknown split {split!r} for dataset {dataset!r}; known: {_known(sub['split'])}")
    sub = sub[sub["split"] == split]
    if side not in set(sub["side"]):
        raise AdjustmentError(f"unknown side {side!r}; known: {_known(sub['side'])}")
    sub = sub[sub["side"] == side]
    base_metrics = [k for k in sub["metric"] if k in METRICS and METRICS[k].kind == "base"]
    if metric not in METRICS or metric not in set(sub["metric"]):
        raise AdjustmentError(f"unknown metric {metric!r}; known base metrics: {', '.join(base_metrics)}")
    spec = METRICS[metric]
    if spec.kind != "base":
        hint = f" (it adjusts {spec.base!r}; pass --metric {spec.base})" if spec.base else ""
        raise AdjustmentError(
            f"metric {metric!r} is not a base metric{hint}; known base metrics: {', '.join(base_metrics)}"
        )
    row = sub[sub["metric"] == metric].iloc[0]
    e, v = float(row["expectation"]), float(row["variance"])
    derived: list[tuple[str, str, float]] = []
    if 1.0 - e == 0.0:
        derived.append((_derived_key(metric, "adjusted", f"adjusted index of {metric}"), "adjusted index", math.nan))
    else:
        derived.append(
            (_derived_key(metric, "adjusted", f"adjusted index of {metric}"), "adjusted index", (value - e) / (1.0 - e))
        )
    if metric == "mr":
        derived.append(("amr", "expectation-normalised", value / e))
    sign = 1.0 if spec.increasing else -1.0
    z = sign * (value - e) / math.sqrt(v) if v > 0 else math.nan
    derived.append((_derived_key(metric, "z", f"z-score of {metric}"), "z-score", z))
    return Adjustment(
        dataset=dataset,
        split=split,
        side=side,
        metric=metric,
        value=float(value),
        n_ranks=int(row["n_ranks"]),
        expectation=e,
        variance=v,
        method=str(row["method"]) if "method" in row.index else "",
        derived=tuple(derived),
    )


def format_adjustment(adj: Adjustment) -> str:
    """Human- and machine-readable lines: a header, then ``key<TAB>value<TAB>description``."""
    lines = [
        f"# {adj.dataset} {adj.split} side={adj.side}: n_ranks={adj.n_ranks}, "
        f"E[{adj.metric}]={adj.expectation:.10g}, V[{adj.metric}]={adj.variance:.10g}"
        + (f" ({adj.method})" if adj.method else ""),
        f"{adj.metric}\t{adj.value:.10g}\tgiven",
    ]
    lines += [f"{key}\t{value:.10g}\t{description}" for key, description, value in adj.derived]
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    path = Path(args.table)
    if not path.exists():
        print(
            f"kgeval adjust: expectations table {path} not found; build it with "
            "`snakemake --cores 1 results/tables/expectations.tsv` (no model needed; for FB15k-237 and WN18RR: "
            "`snakemake --cores 2 tabulate_expectations --configfile config/released.yaml`, then --table "
            "results/released/tables/expectations.tsv) or pass --table",
            file=sys.stderr,
        )
        return 2
    try:
        adj = adjust_value(read_tsv(path), args.dataset, args.split, args.metric, args.value, side=args.side)
    except AdjustmentError as error:
        print(f"kgeval adjust: {error}", file=sys.stderr)
        return 2
    print(format_adjustment(adj))
    return 0


def add_subparser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``kgeval adjust``."""
    parser = subparsers.add_parser(
        "adjust",
        help="adjusted index and z-score of a published metric value",
        description=(
            "Print the adjusted index and the z-score of a reported base-metric value (Hoyt et al. 2022), from the "
            "expectation and variance under random ranking in the expectations table."
        ),
    )
    parser.add_argument("--dataset", required=True, help="dataset key of the expectations table (e.g. fb15k237)")
    parser.add_argument("--split", default="test", help="evaluation split (default: test)")
    parser.add_argument("--metric", required=True, help="base metric key (mr, mrr, hits@10, gmr, ...)")
    parser.add_argument("--value", required=True, type=float, help="the reported value of the metric")
    parser.add_argument("--side", default="both", choices=SIDES, help="head, tail or both (default: both)")
    parser.add_argument(
        "--table",
        default=os.environ.get("KGEVAL_EXPECTATIONS", str(DEFAULT_TABLE)),
        help=f"expectations table (default: $KGEVAL_EXPECTATIONS or {DEFAULT_TABLE})",
    )
    parser.set_defaults(func=_run)
