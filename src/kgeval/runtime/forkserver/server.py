"""The fork server: it imports :data:`PRELOAD` once, then forks one process per job, which takes over the job's
process state, runs its script and reports the exit status (:func:`serve`; ``python -m kgeval.runtime.forkserver``).
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import Any

from kgeval.runtime.forkserver.protocol import ACCEPT_TIMEOUT_SECONDS, HEADER, STATUS, mark_forked_job, recv_exact

__all__ = ["PRELOAD", "main", "serve"]

#: what the server imports before it forks: every library a job imports inside its work (kgeval imports them lazily,
#: so a cold job pays only for what it uses); a module that fails to import is skipped (its jobs import it themselves)
PRELOAD: tuple[str, ...] = (
    "numpy",
    "pandas",
    "pyarrow.parquet",
    "threadpoolctl",
    "scipy.special",
    "scipy.stats",
    "scipy.optimize",
    "torch",
    "sklearn.isotonic",
    "sklearn.linear_model",
    "sklearn.decomposition",
    "sklearn.feature_extraction.text",
    "pykeen.models",
    "pykeen.training",
    "pykeen.metrics",
    "pykeen.evaluation",
    "pykeen.datasets",
    "pykeen.sampling",
    "pykeen.losses",
    "pykeen.optimizers",
    "matplotlib.pyplot",
    "matplotlib.lines",
    "matplotlib.ticker",
    "seaborn",
    "ir_measures",
    "pytrec_eval",
    "rapidfuzz",
    "sylloge",
    "kgeval.metrics",
    "kgeval.lp.ranking",
    "kgeval.lp.engine.block_kernels",
    "kgeval.engine.l1_kernel",
    "kgeval.lp.engine.training.embedding_gradients_kernel",
    "kgeval.lp.engine.training.transe_l1_kernel",
    "kgeval.lp.engine.training.transe_lookup_kernel",
    "kgeval.engine.group_sums_kernel",
    "kgeval.engine.calibration_stats_kernel",
    "kgeval.lp.engine.training.complex_interaction_kernel",
    "kgeval.lp.engine.rownorm_kernel",
    "kgeval.lp.training",
    "kgeval.lp.datasets",
    "kgeval.lp.dataset_cache",
)


def _hide_gpus() -> None:
    """Hide every GPU from this process (the server before its preloads, each forked job): see :func:`serve`."""
    os.environ["CUDA_VISIBLE_DEVICES"] = ""


def _preload(modules: Sequence[str]) -> dict[str, str]:
    """Import ``modules``; returns the ones that failed, with the error (the jobs that need them import them)."""
    import importlib

    failed = {}
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as error:  # noqa: BLE001 - any failure just means the job imports it itself
            failed[name] = f"{type(error).__name__}: {error}"
    return failed


def serve(path: str, parent_pid: int, modules: Sequence[str] = PRELOAD) -> None:
    """Listen on the Unix socket ``path``, import ``modules``, then fork one process per connection until told to stop.

    The server stops on SIGTERM or when ``parent_pid`` (the Snakemake process) is gone. The socket listens before the
    imports, so that jobs starting meanwhile queue up.
    """
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    # the server and its jobs see no GPU (GPU jobs start cold): a CUDA driver initialised here would fail every CUDA
    # call in a forked job, and a CPU job's torch calls CUDA where a GPU is visible (Adam's step asks whether a CUDA
    # graph is being captured); on a GPU host that would fail every forked training job
    _hide_gpus()
    failed = _preload(modules)
    for name, error in failed.items():
        print(f"kgeval.runtime.forkserver: could not preload {name} ({error})", file=sys.stderr, flush=True)
    import gc

    # objects that exist now are never collected in the forked jobs: a collection would touch (and copy) their pages
    gc.collect()
    gc.freeze()
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    while not stopping:
        _reap()
        if os.getppid() != parent_pid:
            break
        try:
            ready, _, _ = select.select([listener], [], [], 1.0)
        except InterruptedError:
            continue
        if not ready:
            continue
        try:
            conn, _ = listener.accept()
        except OSError:
            continue
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        pid = os.fork()
        if pid == 0:
            listener.close()
            _run_forked_job(conn)  # never returns
        conn.close()
    listener.close()
    try:
        os.unlink(path)
    except OSError:
        pass
    _reap()


def _reap() -> None:
    """Collect the forked jobs that have ended (their CPU time then counts as this server's children's, and so on up
    to Snakemake and whoever measures it)."""
    while True:
        try:
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _log(f"job {pid} ended, status {os.waitstatus_to_exitcode(wait_status)}")


def _log(message: str) -> None:
    """One time-stamped line on this process's stderr (the server's log), written with one ``write`` call.

    The server and its forked jobs append to the same log; ``print`` writes a line's text and its newline in two calls,
    and another process's line could land between them (seen once: two lines joined, a newline later alone).
    """
    sys.stderr.write(f"{time.strftime('%H:%M:%S')} {message}\n")
    sys.stderr.flush()


def _run_forked_job(conn: socket.socket) -> None:
    """In the forked process: take over the job's process state, run its script, report the status, exit."""
    mark_forked_job()
    status = 1
    finished = None
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        os.setpgid(0, 0)  # the job's process signals this group: the job and whatever it starts
        conn.settimeout(ACCEPT_TIMEOUT_SECONDS)
        message, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
        if len(message) < HEADER.size:
            os._exit(1)
        (size,) = HEADER.unpack(message[: HEADER.size])
        body = message[HEADER.size :]
        if len(body) < size:
            rest = recv_exact(conn, size - len(body))
            if rest is None:
                os._exit(1)
            body += rest
        request = json.loads(body)
        _log(f"job {os.getpid()}: {request['argv'][0]}")
        conn.sendall(STATUS.pack(os.getpid()))
        if conn.recv(1) != b"g":
            os._exit(0)  # the job's process gave up waiting and runs the job itself
        conn.settimeout(None)
        _adopt(request, fds)
        finished = _watch(conn)
        status = _run_script(request["argv"])
    except BaseException:  # noqa: BLE001 - whatever happens, the job's process must get a status
        import traceback

        traceback.print_exc()
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if finished is not None:
        finished.set()  # the job's process hangs up once it has the status: that is no reason to kill this one
    try:
        conn.sendall(STATUS.pack(status))
    finally:
        os._exit(status & 0xFF)


def _adopt(request: dict[str, Any], fds: list[int]) -> None:
    """Take the job's stdio, working directory, environment, umask, thread counts and fresh random seeds."""
    for target, fd in zip(request["stdio"], fds):
        os.dup2(fd, target)
        os.close(fd)
    devnull = os.open(os.devnull, os.O_RDWR)
    for target in {0, 1, 2} - set(request["stdio"]):
        os.dup2(devnull, target)
    os.close(devnull)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    _hide_gpus()  # as in the server (serve): a forked job is a CPU job
    tempfile.tempdir = None  # recomputed from the job's TMPDIR (Snakemake's tmpdir resource), not the server's
    os.umask(int(request["umask"]))
    for signum in request.get("ignored_signals", []):
        signal.signal(signum, signal.SIG_IGN)
    threads = _thread_count(request["env"])
    import threadpoolctl

    threadpoolctl.threadpool_limits(limits=threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
    import random

    random.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()


def _thread_count(env: dict[str, str]) -> int:
    """The job's thread count: ``OMP_NUM_THREADS`` as Snakemake sets it, else every CPU (a cold process's default)."""
    try:
        return max(1, int(env["OMP_NUM_THREADS"]))
    except (KeyError, ValueError):
        return os.cpu_count() or 1


def _watch(conn: socket.socket) -> threading.Event:
    """Kill this job (its whole process group) as soon as the job's own process hangs up before the job has finished.

    :returns: the event to set once the job has finished (before its status is sent)
    """
    finished = threading.Event()

    def wait() -> None:
        try:
            while conn.recv(1):
                pass
        except OSError:
            pass
        if not finished.is_set():
            os.killpg(0, signal.SIGKILL)

    threading.Thread(target=wait, name="kgeval-forkserver-watch", daemon=True).start()
    return finished


def _run_script(argv: list[str]) -> int:
    """Run the script file ``argv[0]`` as ``__main__``, as ``python argv...`` would; its exit status."""
    import runpy

    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    try:
        runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exit_:
        code = exit_.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001 - reported as Python reports an uncaught exception
        import traceback

        traceback.print_exc()
        return 1
    return 0


def main(argv: Sequence[str]) -> None:
    """``python -m kgeval.runtime.forkserver SOCKET PARENT_PID [MODULE ...]``: run a server (what
    :func:`~kgeval.runtime.forkserver.lifecycle.start_server` starts)."""
    path, parent = argv[0], int(argv[1])
    serve(path, parent, tuple(argv[2:]))

