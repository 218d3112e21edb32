"""Where a tier's time goes: job seconds per rule from a Snakemake log (``default_run.job_seconds``), with the run's
wall time, beside an earlier run's log when one is given.

Job seconds are the summed start-to-end seconds of each rule's jobs (one-second stamps); for single-threaded jobs they
approach CPU seconds, and their total divided by the wall time is how many cores were kept busy.

    python benchmarks/tier_jobs.py LOG [--before LOG] [--label real] [--out benchmarks/results/real_tier_jobs.tsv]

Writes one row per (run, rule) and a ``total`` row per run, each with the host columns (``benchmarks/host.py``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
from pathlib import Path

import pandas as pd
from default_run import job_seconds  # noqa: E402  (benchmarks/default_run.py)
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py)

_ELAPSED = re.compile(r"^Elapsed time: (\d+):(\d\d):(\d\d)", re.MULTILINE)


def wall_seconds(log: str) -> float | None:
    """The ``Elapsed time`` Snakemake prints at the end of a completed run, in seconds (``None`` if absent)."""
    match = _ELAPSED.search(log)
    if match is None:
        return None
    hours, minutes, seconds = (int(g) for g in match.groups())
    return float(dt.timedelta(hours=hours, minutes=minutes, seconds=seconds).total_seconds())


def tier_table(log: str, run: str) -> pd.DataFrame:
    """Per rule the jobs and job seconds of one run, its share, and a ``total`` row with the wall seconds."""
    table = job_seconds(log)
    total = float(table["job_seconds"].sum())
    table["share"] = table["job_seconds"] / total if total else 0.0
    wall = wall_seconds(log)
    total_row = {"rule": "total", "jobs": int(table["jobs"].sum()), "job_seconds": total, "share": 1.0,
                 "wall_seconds": wall, "busy_cores": total / wall if wall else None}
    table = pd.concat([table, pd.DataFrame([total_row])], ignore_index=True)
    table.insert(0, "run", run)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("log", type=Path, help="the Snakemake log of the run (its console output)")
    parser.add_argument("--before", type=Path, help="an earlier run's log, tabled beside it")
    parser.add_argument("--label", default="after", help="the run's name in the table")
    parser.add_argument("--before-label", default="before")
    parser.add_argument("--out", type=Path, default=RESULTS / "tier_jobs.tsv")
    args = parser.parse_args()
    tables = [tier_table(args.log.read_text(), args.label)]
    if args.before is not None:
        tables.insert(0, tier_table(args.before.read_text(), args.before_label))
    table = stamp(pd.concat(tables, ignore_index=True))
    table.to_csv(args.out, sep="\t", index=False, float_format="%.4g")
    print(table.to_string(index=False))


if __name__ == "__main__":
    main()
