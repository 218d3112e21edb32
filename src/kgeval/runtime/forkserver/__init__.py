"""Fork server for local runs: each job starts as a fork of one interpreter that has already imported the libraries.

Every Snakemake job is a fresh Python process, and most of them spend more CPU importing torch, PyKEEN, scikit-learn and
matplotlib than on their own work. In a local run (``snakemake --cores N``, no cluster executor) the Snakefile's
``onstart`` hook starts one server process (:func:`~kgeval.runtime.forkserver.lifecycle.start_server`) that imports
those libraries once (:data:`PRELOAD`), and each job's script hands itself to that server (:func:`run_in_forkserver`),
which forks a process that runs the script. Each job is still one Snakemake job with its own inputs, outputs, log and
exit status, so the same rules spread over a cluster, where no server runs and every job starts cold.

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

The server imports :data:`PRELOAD` once per run and holds the imported libraries' memory; the forked jobs share
those pages until they write them. Besides its main thread it has one native thread: the jemalloc background thread
of pyarrow, which pandas imports. jemalloc takes its locks around ``fork()`` (``pthread_atfork``) and resets that
thread in the child, as in any forked process that has imported pandas; the server runs nothing else in parallel
(it starts with every thread-count variable at 1). It and its forked jobs see no GPU (``CUDA_VISIBLE_DEVICES`` is
empty in both): a CUDA driver initialised before a fork fails every CUDA call in the forked process, and even a CPU
job's torch asks CUDA questions where a GPU is visible (Adam's step checks for CUDA graph capture), which would fail
every forked training job on a GPU host; jobs that ask for a GPU start cold with the GPUs they were given.

Python's :mod:`multiprocessing.forkserver` serves only the process that started it and runs pickled callables, not
independent processes started by Snakemake, so this small protocol is written by hand:

1. the job connects to the server's Unix socket; the server forks, and the new process reads the request (a
   length-prefixed JSON header with argv, cwd, environment and umask, and the job's stdio descriptors);
2. it answers with its pid; the job answers ``go`` (or hangs up: the forked process then exits without running);
3. it runs the script file (the temporary file Snakemake wrote, preamble included) as ``__main__`` and sends the
   4-byte exit status.

The package holds one concern per module: :mod:`~kgeval.runtime.forkserver.protocol` (the wire format and the flag
both sides share), :mod:`~kgeval.runtime.forkserver.client` (the job's side, :func:`run_in_forkserver`),
:mod:`~kgeval.runtime.forkserver.server` (the server and the forked job's process) and
:mod:`~kgeval.runtime.forkserver.lifecycle` (starting and stopping the server from the Snakefile's hooks).
"""

from __future__ import annotations

from kgeval.runtime.forkserver.client import cold_start_reason, run_in_forkserver
from kgeval.runtime.forkserver.lifecycle import server_log_path, start_server, stop_server
from kgeval.runtime.forkserver.protocol import ENV, in_forked_job
from kgeval.runtime.forkserver.server import PRELOAD, serve

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
