"""Starting and stopping the fork server: the Snakefile's ``onstart`` / ``onsuccess`` / ``onerror`` hooks."""

from __future__ import annotations

import os
import socket
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from kgeval.runtime.forkserver.protocol import ENV, server_address
from kgeval.runtime.forkserver.server import PRELOAD

__all__ = ["THREAD_VARIABLES", "server_log_path", "start_server", "stop_server"]

#: thread-count variables Snakemake sets for every job; the server itself starts with them at 1 (no thread pools)
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "GOTO_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)

#: the server process that start_server() started in this process
_SERVER: Any = None


def start_server(
    parent_pid: int | None = None, modules: Sequence[str] = PRELOAD, log_path: str | None = None
) -> str | None:
    """Start a server for the jobs of this Snakemake process; put its address into ``os.environ`` (jobs inherit it).

    Does nothing (returns ``None``) when ``KGEVAL_FORKSERVER=off``. The server is a separate process in its own
    session, so a Ctrl-C in the terminal reaches the jobs, not the server; it stops with :func:`stop_server` or by
    itself when ``parent_pid`` (default: this process) ends.

    :param log_path: where the server writes what it prints itself (import warnings, modules it could not preload);
        nowhere if ``None``. A job's own output goes where that job's output goes.
    :returns: the socket path
    """
    import subprocess

    if os.environ.get(ENV) == "off":
        return None
    folder = tempfile.mkdtemp(prefix="kgeval-forkserver-")
    path = os.path.join(folder, "socket")
    env = dict(os.environ)
    env.pop(ENV, None)
    for name in THREAD_VARIABLES:
        env[name] = "1"  # the server runs nothing in parallel; each job sets its own counts
    env.setdefault("MPLBACKEND", "Agg")
    parent = os.getpid() if parent_pid is None else parent_pid
    command = [sys.executable, "-m", "kgeval.runtime.forkserver", path, str(parent), *modules]
    output = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115 - the child keeps it open
    try:
        process = subprocess.Popen(
            command, env=env, start_new_session=True, stdin=subprocess.DEVNULL, stdout=output, stderr=output
        )
    finally:
        if log_path:
            output.close()
    deadline = time.monotonic() + 30
    while not os.path.exists(path) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if not os.path.exists(path):
        process.kill()
        print("kgeval.runtime.forkserver: the server did not start; every job starts cold", file=sys.stderr)
        return None
    global _SERVER
    _SERVER = process
    os.environ[ENV] = f"{socket.gethostname()}|{sys.prefix}|{path}"
    print(
        f"kgeval.runtime.forkserver: jobs start from one process that imports torch, PyKEEN etc. once (pid {process.pid}"
        + (f", log {log_path}" if log_path else "")
        + f"); {ENV}=off starts each job cold",
        file=sys.stderr,
        flush=True,
    )
    return path


def server_log_path(snakemake_logs: Sequence[str] | str | None) -> str | None:
    """Where the server of a Snakemake run writes its own messages: beside that run's log (``onstart``'s ``log``).

    ``.snakemake/log/<time>.snakemake.log`` gives ``.snakemake/log/<time>.forkserver.log``; ``None`` without a log.
    """
    paths = [snakemake_logs] if isinstance(snakemake_logs, str) else list(snakemake_logs or [])
    paths = [str(p) for p in paths if p]
    if not paths:
        return None
    base = paths[0]
    return base[: -len(".snakemake.log")] + ".forkserver.log" if base.endswith(".snakemake.log") else base + ".forkserver"


def stop_server() -> None:
    """Stop the server that :func:`start_server` started in this process (if any) and remove its socket folder."""
    import shutil
    import subprocess

    global _SERVER
    address = server_address()
    os.environ.pop(ENV, None)
    if _SERVER is not None:
        _SERVER.terminate()
        try:
            _SERVER.wait(timeout=30)  # reaped here, so that its jobs' CPU time counts as this process's children's
        except subprocess.TimeoutExpired:
            _SERVER.kill()
        _SERVER = None
    if address is not None:
        shutil.rmtree(os.path.dirname(address[2]), ignore_errors=True)
