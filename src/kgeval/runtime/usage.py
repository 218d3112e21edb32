"""What a job used, recorded by the job itself: wall and CPU seconds and peak memory, in Snakemake's benchmark columns.

Snakemake's ``benchmark:`` directive measures the job's own process (and its children) from outside. That rules out the
fork server (:mod:`kgeval.runtime.forkserver`), whose forked process does the work while the job's own process only
waits, so the long rules (``train_model``, ``train_ea_model``, ``evaluate_s3_model``) would each pay the imports of a
cold interpreter just to be measured. Instead, their scripts wrap the work in :func:`record_usage`, which measures the
process that does the work, forked or not, and writes the same kind of table to the same place
(``<results>/benchmarks/<rule>/...tsv``): a cluster user sizes ``mem_mb`` and ``runtime`` from it as from Snakemake's.

Differences from Snakemake's benchmark: seconds count from the start of the work (the ``with`` block), so they leave out
the interpreter's start and the imports a cold job pays before it; memory is the peak resident set size of the process
(``getrusage``), which includes the imported libraries (in a forked job, those the server had imported, shared with it),
and of its waited-for child processes; there are no I/O or load columns.
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
import time
from collections.abc import Iterator

__all__ = ["USAGE_COLUMNS", "record_usage", "usage_row"]

#: columns of the table :func:`record_usage` writes (Snakemake's benchmark names where they mean the same)
USAGE_COLUMNS = ("s", "h:m:s", "max_rss", "cpu_time", "cpu_user", "cpu_system", "process")


def _max_rss_mb(usage: resource.struct_rusage) -> float:
    """``ru_maxrss`` in MB (Linux reports KiB, macOS bytes)."""
    scale = 1 if sys.platform == "darwin" else 1024
    return usage.ru_maxrss * scale / 2**20


def usage_row(
    wall: float,
    start_self: resource.struct_rusage,
    start_children: resource.struct_rusage,
    process: str,
) -> dict[str, object]:
    """One row of usage since ``start_*`` (``getrusage`` of this process and of its children), ``wall`` seconds long.

    :param process: how the job's work ran, ``forked`` (from the fork server) or ``own`` (in the job's own process)
    """
    now_self = resource.getrusage(resource.RUSAGE_SELF)
    now_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    user = (now_self.ru_utime - start_self.ru_utime) + (now_children.ru_utime - start_children.ru_utime)
    system = (now_self.ru_stime - start_self.ru_stime) + (now_children.ru_stime - start_children.ru_stime)
    whole = int(wall)
    return {
        "s": round(wall, 4),
        "h:m:s": f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}",
        "max_rss": round(max(_max_rss_mb(now_self), _max_rss_mb(now_children)), 2),
        "cpu_time": round(user + system, 4),
        "cpu_user": round(user, 4),
        "cpu_system": round(system, 4),
        "process": process,
    }


@contextlib.contextmanager
def record_usage(path: str | os.PathLike) -> Iterator[None]:
    """Measure the block and write its usage to ``path`` (a one-row TSV, :data:`USAGE_COLUMNS`) if it succeeds.

    The file is written atomically and only when the block ends without an exception, so a failed or interrupted job
    leaves no record that a later run could take for a finished one.
    """
    from kgeval.runtime.forkserver import in_forked_job
    from kgeval.io import write_tsv

    import pandas as pd

    start_self = resource.getrusage(resource.RUSAGE_SELF)
    start_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    yield
    row = usage_row(time.perf_counter() - start, start_self, start_children, "forked" if in_forked_job() else "own")
    write_tsv(pd.DataFrame([row], columns=list(USAGE_COLUMNS)), path, sort_by=[])
