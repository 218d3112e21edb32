"""Fork server for local runs: each job starts as a fork of one interpreter that has already imported the libraries.

Every Snakemake job is a fresh Python process, and most of them spend more CPU importing torch, PyKEEN, scikit-learn
and matplotlib (0.5-3 s each) than on their own work: on the default config these imports were about 40 % of the
run's CPU time. In a local run (``snakemake --cores N``, no cluster executor) the Snakefile's ``onstart`` hook starts
one server process (:func:`start_server`) that imports those libraries once (:data:`PRELOAD`), and each job's script
hands itself to that server (:func:`run_in_forkserver`), which forks a process that runs the script. Each job is
still one Snakemake job with its own inputs, outputs, log and exit status, so the same rules spread over a cluster,
where no server runs and every job starts cold as before.

The forked process takes over everything of the job's own process that the script can see: working directory,
environment (``OMP_NUM_THREADS`` and the other thread counts Snakemake sets per job are applied to torch and to the
BLAS/OpenMP pools with threadpoolctl), umask, standard input/output/error (the descriptors are passed over the socket),
``sys.argv`` and a freshly seeded ``random``/``numpy.random``. The job's own process waits for it, forwards
SIGINT/SIGTERM/SIGHUP to its process group and exits with its status; if the job's process dies, the forked process
kills itself, so an interrupted job leaves nothing running that could write an output later.

A job starts cold, exactly as without the server, when any of these holds (the first one found is logged on stderr
only when it is a failure): ``KGEVAL_FORKSERVER=off``; no server address in the environment (no ``onstart``: cluster
jobs, ``--no-hooks``, a script run outside Snakemake); another host or Python environment (``--use-conda``); a job
that Snakemake benchmarks (``benchmark:`` measures the job's own process, so its work must happen there); a job that
asks for a GPU (CUDA must not be initialised in a forked process); or the server cannot be reached or does not answer.

The server holds about 450 MB after importing :data:`PRELOAD` (3.4 s of CPU, once per run); the forked jobs share
those pages until they write them. Besides its main thread it has one native thread: the jemalloc background thread
of pyarrow, which pandas imports. jemalloc takes its locks around ``fork()`` (``pthread_atfork``) and resets that
thread in the child, as in any forked process that has imported pandas; the server runs nothing else in parallel
(it starts with every thread-count variable at 1), and it never initialises CUDA.

Python's :mod:`multiprocessing.forkserver` serves only the process that started it and runs pickled callables, not
independent processes started by Snakemake, so this small protocol is written by hand:

1. the job connects to the server's Unix socket; the server forks, and the new process reads the request (a
   length-prefixed JSON header with argv, cwd, environment and umask, and the job's stdio descriptors);
2. it answers with its pid; the job answers ``go`` (or hangs up: the forked process then exits without running);
3. it runs the script file (the temporary file Snakemake wrote, preamble included) as ``__main__`` and sends the
   4-byte exit status.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import Any

__all__ = [
    "ENV",
    "PRELOAD",
    "cold_start_reason",
    "in_forked_job",
    "run_in_forkserver",
    "serve",
    "server_log_path",
    "start_server",
    "stop_server",
]

#: environment variable holding the server's address, ``<host>|<sys.prefix>|<socket path>``; ``off`` disables it
ENV = "KGEVAL_FORKSERVER"

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
    "kgeval.lp.training",
    "kgeval.lp.datasets",
)

#: how long a job waits for the server to take it (the server may still be importing when the first jobs start)
ACCEPT_TIMEOUT_SECONDS = 300.0

#: thread-count variables Snakemake sets for every job; the server itself starts with them at 1 (no thread pools)
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "GOTO_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)

#: signals the job's own process passes on to the forked process (unless it ignores them, as the forked one then does)
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_HEADER = struct.Struct("!I")
_STATUS = struct.Struct("!i")
#: set in a forked job process, so that the script's own call of run_in_forkserver() returns there
_IN_FORKED_JOB = False
#: the server process that start_server() started in this process
_SERVER: Any = None


# --------------------------------------------------------------------------------------------------------------------
# the job's side


def in_forked_job() -> bool:
    """Whether this process is a job forked from the server (else the job's own process, or no job at all)."""
    return _IN_FORKED_JOB


def _address() -> tuple[str, str, str] | None:
    value = os.environ.get(ENV, "")
    if not value or value == "off":
        return None
    parts = value.split("|", 2)
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 else None


def _snakemake_job() -> Any | None:
    """The ``snakemake`` object of the running Snakemake script, or ``None`` outside one."""
    main = sys.modules.get("__main__")
    return getattr(main, "snakemake", None)


def cold_start_reason(job: Any | None = None) -> str | None:
    """Why this process must run its job itself (``None``: it may hand it to the server).

    :param job: the Snakemake script object (default: ``__main__.snakemake``)
    """
    if _IN_FORKED_JOB:
        return "already in a forked job"
    address = _address()
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


def _recv_exact(conn: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def run_in_forkserver(argv: Sequence[str] | None = None) -> None:
    """Hand this Snakemake job to the local fork server and exit with its status; return to run it here otherwise.

    Call it first in a Snakemake script, before anything else is imported. It returns (and the script runs in this
    process, as without the server) whenever :func:`cold_start_reason` gives a reason or the server cannot take the
    job; once the server has taken it, this process only waits and never returns.

    :param argv: the script file and its arguments (default: ``sys.argv``, i.e. Snakemake's temporary script)
    """
    if cold_start_reason() is not None:
        return
    _, _, path = _address()  # type: ignore[misc]
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
                "ignored_signals": [int(s) for s in _FORWARDED if signal.getsignal(s) == signal.SIG_IGN],
            }
        ).encode()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        socket.send_fds(conn, [_HEADER.pack(len(header)) + header], stdio)
        reply = _recv_exact(conn, _STATUS.size)
        if reply is None:
            raise ConnectionError("the server closed the connection before it took the job")
        (pid,) = _STATUS.unpack(reply)
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

    for signum in _FORWARDED:
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, forward)
    reply = _recv_exact(conn, _STATUS.size)
    if reply is None:
        print(
            f"kgeval.runtime.forkserver: the job's process {pid} ended without reporting a status (killed?)",
            file=sys.stderr,
            flush=True,
        )
        os._exit(1)
    (status,) = _STATUS.unpack(reply)
    os._exit(status & 0xFF)


# --------------------------------------------------------------------------------------------------------------------
# the server's side


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
        print(
            f"{time.strftime('%H:%M:%S')} job {pid} ended, status {os.waitstatus_to_exitcode(wait_status)}",
            file=sys.stderr,
            flush=True,
        )


def _run_forked_job(conn: socket.socket) -> None:
    """In the forked process: take over the job's process state, run its script, report the status, exit."""
    global _IN_FORKED_JOB
    _IN_FORKED_JOB = True
    status = 1
    finished = None
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        os.setpgid(0, 0)  # the job's process signals this group: the job and whatever it starts
        conn.settimeout(ACCEPT_TIMEOUT_SECONDS)
        message, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
        if len(message) < _HEADER.size:
            os._exit(1)
        (size,) = _HEADER.unpack(message[: _HEADER.size])
        body = message[_HEADER.size :]
        if len(body) < size:
            rest = _recv_exact(conn, size - len(body))
            if rest is None:
                os._exit(1)
            body += rest
        request = json.loads(body)
        print(f"{time.strftime('%H:%M:%S')} job {os.getpid()}: {request['argv'][0]}", file=sys.stderr, flush=True)
        conn.sendall(_STATUS.pack(os.getpid()))
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
        conn.sendall(_STATUS.pack(status))
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


# --------------------------------------------------------------------------------------------------------------------
# starting and stopping (the Snakefile's onstart/onsuccess/onerror)


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
    address = _address()
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


def _main(argv: Sequence[str]) -> None:
    """``python -m kgeval.runtime.forkserver SOCKET PARENT_PID [MODULE ...]``: run a server (what :func:`start_server` does)."""
    path, parent = argv[0], int(argv[1])
    serve(path, parent, tuple(argv[2:]))


if __name__ == "__main__":
    # run the server from the module proper, not from this ``__main__`` copy of it: the forked jobs import
    # ``kgeval.runtime.forkserver`` and must find its ``_IN_FORKED_JOB`` flag set
    from kgeval.runtime.forkserver import _main as _module_main

    _module_main(sys.argv[1:])
