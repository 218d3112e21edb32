"""Benchmark: per-job seconds of two runs of a tier, from the usage records the jobs write themselves.

The long jobs of a tier (``train_model``, ``train_ea_model``, ``evaluate_s3_model``, ``evaluate_s3_strength``)
record their wall and CPU seconds (:mod:`kgeval.runtime.usage`) under ``<results>/benchmarks/<rule>/...``. Two runs
of one tier on one host, one after the other, differ by the host's hour as well as by the code: this script lists
each job of both runs side by side with its ratio, so that jobs whose code changed can be read beside jobs whose
code did not (the host's drift).

    python benchmarks/job_usage.py BEFORE_RESULTS AFTER_RESULTS --label "81e38b6 -> 732b2f1" \
        [--out benchmarks/results/job_usage.tsv]

Appends one row per job found in both runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from kgeval.io import read_tsv, write_tsv
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)


def usage(results: Path) -> pd.DataFrame:
    """``job`` (the record's path under ``benchmarks/``), ``rule``, ``seconds`` and ``cpu_seconds`` of one run."""
    rows = []
    for path in sorted((results / "benchmarks").rglob("*.tsv")):
        record = read_tsv(path)
        if record.empty or "s" not in record.columns:
            continue
        job = str(path.relative_to(results / "benchmarks").with_suffix(""))
        rows.append({"job": job, "rule": job.split("/")[0], "seconds": float(record["s"].iloc[-1]),
                     "cpu_seconds": float(record["cpu_time"].iloc[-1])})
    return pd.DataFrame(rows, columns=["job", "rule", "seconds", "cpu_seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--label", required=True)
    parser.add_argument("--out", type=Path, default=RESULTS / "job_usage.tsv")
    args = parser.parse_args()
    table = usage(args.before).merge(usage(args.after), on=["job", "rule"], suffixes=("_before", "_after"))
    table["ratio"] = (table["seconds_after"] / table["seconds_before"]).round(4)
    table = stamp(table.round({"seconds_before": 2, "seconds_after": 2, "cpu_seconds_before": 2, "cpu_seconds_after": 2}))
    table.insert(0, "label", args.label)
    print(table.drop(columns=["host", "cores", "date", "commit"]).to_string(index=False))
    if args.out.exists():
        table = pd.concat([read_tsv(args.out), table], ignore_index=True)
    write_tsv(table, args.out, sort_by=["date", "label", "job"])


if __name__ == "__main__":
    main()
