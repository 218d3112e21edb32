"""kgeval.runtime.usage: a job's own record of its wall and CPU seconds and peak memory."""

from __future__ import annotations

import resource
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from kgeval.runtime.usage import USAGE_COLUMNS, record_usage, usage_row


def _burn(seconds: float) -> None:
    """Keep this thread busy for ``seconds`` of CPU time."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_record_counts_this_process_and_its_children(tmp_path):
    path = tmp_path / "usage" / "job.tsv"
    with record_usage(path):
        _burn(0.3)
        # a waited-for child's CPU counts too (a job may run a tool as a subprocess)
        child = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
        subprocess.run([sys.executable, "-c", child], check=True)
        # ~300 MB touched: the peak resident set grows past it
        block = np.ones(300 * 2**20 // 8)
        del block
    table = pd.read_csv(path, sep="\t")
    assert list(table.columns) == list(USAGE_COLUMNS)
    assert len(table) == 1
    row = table.iloc[0]
    assert row.cpu_time >= 0.55, row.to_dict()
    assert row.cpu_time == pytest.approx(row.cpu_user + row.cpu_system, abs=1e-3)
    assert row.s >= 0.55 and row["h:m:s"] == f"0:00:{int(row.s):02d}"
    assert row.max_rss >= 300, row.to_dict()
    assert row.process == "own"  # not forked from a server


def test_failed_block_leaves_no_record(tmp_path):
    path = tmp_path / "job.tsv"
    with pytest.raises(RuntimeError), record_usage(path):
        raise RuntimeError("the job failed")
    assert list(tmp_path.iterdir()) == []


def test_hours_minutes_seconds():
    start = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    assert usage_row(3725.9, *start, "forked")["h:m:s"] == "1:02:05"
    assert usage_row(59.99, *start, "own")["h:m:s"] == "0:00:59"
