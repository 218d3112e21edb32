"""What both sides of the fork server share: the server's address, the message framing and the forked-job flag.

A request is a length-prefixed (:data:`HEADER`) JSON header sent with the job's stdio descriptors; the forked process
answers its pid and, at the end, the job's exit status (:data:`STATUS`).
"""

from __future__ import annotations

import os
import signal
import socket
import struct

__all__ = [
    "ACCEPT_TIMEOUT_SECONDS",
    "ENV",
    "FORWARDED",
    "HEADER",
    "STATUS",
    "server_address",
    "in_forked_job",
    "mark_forked_job",
    "recv_exact",
]

#: environment variable holding the server's address, ``<host>|<sys.prefix>|<socket path>``; ``off`` disables it
ENV = "KGEVAL_FORKSERVER"

#: how long a job waits for the server to take it (the server may still be importing when the first jobs start)
ACCEPT_TIMEOUT_SECONDS = 300.0

#: signals the job's own process passes on to the forked process (unless it ignores them, as the forked one then does)
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

HEADER = struct.Struct("!I")
STATUS = struct.Struct("!i")
#: set in a forked job process, so that the script's own call of run_in_forkserver() returns there
_IN_FORKED_JOB = False


def in_forked_job() -> bool:
    """Whether this process is a job forked from the server (else the job's own process, or no job at all)."""
    return _IN_FORKED_JOB


def mark_forked_job() -> None:
    """Mark this process as a forked job (the server's forked process, before it runs the job's script)."""
    global _IN_FORKED_JOB
    _IN_FORKED_JOB = True


def server_address() -> tuple[str, str, str] | None:
    value = os.environ.get(ENV, "")
    if not value or value == "off":
        return None
    parts = value.split("|", 2)
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 else None


def recv_exact(conn: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data

