"""The job's side of the fork server: :func:`run_in_forkserver` hands a Snakemake job to the server and waits.

The job's own process sends its request, waits for the forked process, forwards SIGINT/SIGTERM/SIGHUP to its process
group and exits with its status; it starts the job cold itself whenever :func:`cold_start_reason` gives a reason.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from collections.abc import Sequence
from typing import Any

from kgeval.runtime.forkserver.protocol import (
    ACCEPT_TIMEOUT_SECONDS,
    ENV,
    FORWARDED,
    HEADER,
    STATUS,
    in_forked_job,
    recv_exact,
    server_address,
)

__all__ = ["cold_start_reason", "run_in_forkserver"]


def _snakemake_job() -> Any | None:
    """The ``snakemake`` object of the running Snakemake script, or ``None`` outside one."""
    main = sys.modules.get("__main__")
    return getattr(main, "snakemake", None)


def cold_start_reason(job: Any | None = None) -> str | None:
    """Why this process must run its job itself (``None``: it may hand it to the server).

    :param job: the Snakemake script object (default: ``__main__.snakemake``)
    """
    if in_forked_job():
        return "already in a forked job"
    address = server_address()
    if address is None:
        return f"no server ({ENV} unset or off)"
    host, prefix, _ = address
    if host != socket.gethostname():
        return f"the server runs on {host}"
    if prefix != sys.prefix:
        return f"the server runs in another Python environment ({prefix})"
    job = _snakemake_job() if job is None else job
    if job is None:
        return "not a Snakemake script"
    if getattr(job, "bench_iteration", None) is not None:
        return "benchmarked job (Snakemake measures this process)"
    resources = getattr(job, "resources", None)
    if resources is not None and resources.get("gpu", 0):
        return "GPU job"
    return None


def _open_stdio() -> list[int]:
    """The job's standard descriptors (0, 1, 2) that are open: they are sent, and the forked job takes them over."""
    targets = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            continue
        targets.append(fd)
    return targets


def run_in_forkserver(argv: Sequence[str] | None = None) -> None:
    """Hand this Snakemake job to the local fork server and exit with its status; return to run it here otherwise.

    Call it first in a Snakemake script, before anything else is imported. It returns (and the script runs in this
    process, as without the server) whenever :func:`cold_start_reason` gives a reason or the server cannot take the
    job; once the server has taken it, this process only waits and never returns.

    :param argv: the script file and its arguments (default: ``sys.argv``, i.e. Snakemake's temporary script)
    """
    if cold_start_reason() is not None:
        return
    _, _, path = server_address()  # type: ignore[misc]
    argv = list(sys.argv if argv is None else argv)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(ACCEPT_TIMEOUT_SECONDS)
        conn.connect(path)
        stdio = _open_stdio()
        header = json.dumps(
            {
                "argv": argv,
                "cwd": os.getcwd(),
                "env": dict(os.environ),
                "umask": _umask(),
                "stdio": stdio,
                # a job started with a signal ignored (e.g. SIGINT in a non-interactive shell's background job) keeps
                # ignoring it in the forked process, as the cold process would
                "ignored_signals": [int(s) for s in FORWARDED if signal.getsignal(s) == signal.SIG_IGN],
            }
        ).encode()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        socket.send_fds(conn, [HEADER.pack(len(header)) + header], stdio)
        reply = recv_exact(conn, STATUS.size)
        if reply is None:
            raise ConnectionError("the server closed the connection before it took the job")
        (pid,) = STATUS.unpack(reply)
        conn.sendall(b"g")  # from here on the job runs there, never here
    except OSError as error:
        conn.close()
        print(f"kgeval.runtime.forkserver: starting this job cold ({error})", file=sys.stderr, flush=True)
        return
    conn.settimeout(None)
    _wait_for(conn, pid)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _wait_for(conn: socket.socket, pid: int) -> None:
    """Forward signals to the forked job ``pid`` until it reports its status; exit with that status."""

    def forward(signum: int, frame: object) -> None:
        try:
            os.killpg(pid, signum)
        except ProcessLookupError:
            pass

    for signum in FORWARDED:
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, forward)
    reply = recv_exact(conn, STATUS.size)
    if reply is None:
        print(
            f"kgeval.runtime.forkserver: the job's process {pid} ended without reporting a status (killed?)",
            file=sys.stderr,
            flush=True,
        )
        os._exit(1)
    (status,) = STATUS.unpack(reply)
    os._exit(status & 0xFF)
