"""Where a benchmark ran: the columns every committed benchmark table carries (benchmarks/results/).

A ratio means something only with its host: the same commands read 1.5x apart on two 2-core VMs. Every benchmark
stamps its table with the host's CPU model and core count, the date and the commit it measured, so that
docs/performance.md can quote a row and a reader can tell which machine it came from.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from pathlib import Path

import pandas as pd

#: committed benchmark outputs (small TSVs); scratch output of a run goes elsewhere with --out
RESULTS = Path(__file__).resolve().parent / "results"


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (the machine architecture where that file is absent)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def host_columns() -> dict[str, str | int]:
    """``host`` (CPU model), ``cores`` (usable by this process), ``date`` (UTC) and ``commit`` (``$KGEVAL_COMMIT``
    where set, for a copy of the tree whose git state is not the measured commit's; else HEAD, short)."""
    commit = os.environ.get("KGEVAL_COMMIT", "")
    try:
        commit = commit or subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=RESULTS.parent, capture_output=True, text=True
        ).stdout.strip()
    except OSError:  # no git on the host
        pass
    return {
        "host": cpu_model(),
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "commit": commit,
    }


def stamp(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the host columns appended (the same value in every row)."""
    return table.assign(**host_columns())
