"""kgeval.runtime.forkserver: a job handed to the server runs in a forked process that takes over the job's whole process state,
reports its exit status, dies with the job's own process, and every case that must start cold does.

The jobs here are small script files that play a Snakemake script (a ``snakemake`` object in ``__main__``) and write
what they see (pid, parent, cwd, environment, threads, argv) to a JSON file, so each check compares the forked process
with what the job's own process would have had.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kgeval.runtime import forkserver
from kgeval.runtime.forkserver import client, lifecycle, protocol

JOB = textwrap.dedent(
    """
    import sys, types
    snakemake = types.SimpleNamespace(bench_iteration=BENCH, resources=RESOURCES)
    from kgeval.runtime.forkserver import run_in_forkserver
    run_in_forkserver()

    import json, os, time
    import threadpoolctl
    blas = [pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"]
    mask = os.umask(0)
    import tempfile
    seen = {
        "tmpdir": tempfile.gettempdir(),
        "pid": os.getpid(), "ppid": os.getppid(), "cwd": os.getcwd(), "mark": os.environ.get("MARK"),
        "argv": sys.argv, "umask": mask, "blas_threads": blas, "pgid": os.getpgid(0),
    }
    with open(sys.argv[1], "w") as handle:
        json.dump(seen, handle)
    print("to stdout", flush=True)
    print("to stderr", file=sys.stderr, flush=True)
    action = sys.argv[2]
    if action == "raise":
        raise ValueError("boom in the job")
    if action == "sleep":
        time.sleep(60)
    if action == "nap":
        time.sleep(2)
        action = "0"
    sys.exit(int(action))
    """
)


def write_job(tmp_path: Path, bench: str = "None", resources: str = "{}") -> Path:
    path = tmp_path / "job.py"
    path.write_text(JOB.replace("BENCH", bench).replace("RESOURCES", resources))
    return path


@pytest.fixture
def server(monkeypatch, tmp_path):
    """A server (numpy and threadpoolctl preloaded) for this test process; its address in os.environ while it runs.

    Its own log is ``tmp_path / "server.log"``.
    """
    monkeypatch.delenv(forkserver.ENV, raising=False)
    # a preloaded module that computes (and so caches) the server's temporary folder before any fork
    (tmp_path / "preload").mkdir()
    (tmp_path / "preload" / "cache_tmpdir.py").write_text("import tempfile\ntempfile.gettempdir()\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path / "preload"), os.environ.get("PYTHONPATH")])))
    modules = ("numpy", "threadpoolctl", "cache_tmpdir")
    path = forkserver.start_server(modules=modules, log_path=str(tmp_path / "server.log"))
    assert path is not None and os.path.exists(path)
    yield lifecycle._SERVER
    forkserver.stop_server()
    assert not os.path.exists(path), "stop_server leaves the socket behind"


def job_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(forkserver.__file__).parents[3]), env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def run_job(job: Path, out: Path, action: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(job), str(out), action],
        cwd=cwd,
        env=job_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_job_runs_forked_with_the_job_process_state(server, tmp_path):
    job, out, work, scratch = write_job(tmp_path), tmp_path / "seen.json", tmp_path / "work", tmp_path / "scratch"
    work.mkdir()
    scratch.mkdir()
    # the server runs with one BLAS thread; the job's OMP_NUM_THREADS (as Snakemake sets it) must win
    proc = run_job(
        job, out, "3", work, MARK="job-env", OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2", TMPDIR=str(scratch)
    )
    assert proc.returncode == 3, proc.stderr
    seen = json.loads(out.read_text())
    assert seen["ppid"] == server.pid, "the job did not run in a process forked by the server"
    assert seen["cwd"] == str(work)
    assert seen["mark"] == "job-env"
    assert seen["tmpdir"] == str(scratch), "the forked job kept the server's temporary folder"
    assert seen["argv"] == [str(job), str(out), "3"]
    assert seen["umask"] == client._umask()
    assert seen["pgid"] == seen["pid"], "the forked job leads its own process group"
    if seen["blas_threads"]:  # numpy's OpenBLAS
        assert set(seen["blas_threads"]) == {2}
    assert proc.stdout == "to stdout\n"
    assert proc.stderr == "to stderr\n"
    # the server collects the job and logs how it ended: by its own exit, not killed once its status was sent
    log, deadline = tmp_path / "server.log", time.monotonic() + 10
    while f"job {seen['pid']} ended" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert f"job {seen['pid']} ended, status 3" in log.read_text()


def test_uncaught_exception_is_status_1_with_its_traceback(server, tmp_path):
    proc = run_job(write_job(tmp_path), tmp_path / "seen.json", "raise", tmp_path)
    assert proc.returncode == 1
    assert "ValueError: boom in the job" in proc.stderr
    assert json.loads((tmp_path / "seen.json").read_text())["ppid"] == server.pid


@pytest.mark.parametrize(
    ("bench", "resources", "extra_env"),
    [
        ("0", "{}", {}),  # benchmarked: Snakemake measures the job's own process
        ("None", "{'gpu': 1}", {}),  # CUDA must not start in a forked process
        ("None", "{}", {forkserver.ENV: "off"}),
    ],
    ids=["benchmarked", "gpu", "switched-off"],
)
def test_cold_jobs_run_in_their_own_process(server, tmp_path, bench, resources, extra_env):
    proc = run_job(write_job(tmp_path, bench, resources), tmp_path / "seen.json", "0", tmp_path, **extra_env)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["ppid"] == os.getpid(), "a job that must start cold ran in the server"


def test_unreachable_server_runs_the_job_cold(tmp_path):
    address = f"{socket.gethostname()}|{sys.prefix}|{tmp_path / 'no-socket'}"
    proc = run_job(write_job(tmp_path), tmp_path / "seen.json", "0", tmp_path, **{forkserver.ENV: address})
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "seen.json").read_text())["ppid"] == os.getpid()
    assert "starting this job cold" in proc.stderr


def test_cold_start_reasons(monkeypatch):
    job = type("Job", (), {"bench_iteration": None, "resources": {}})()
    here = f"{socket.gethostname()}|{sys.prefix}|/tmp/x"
    monkeypatch.setenv(forkserver.ENV, here)
    assert forkserver.cold_start_reason(job) is None
    monkeypatch.setenv(forkserver.ENV, f"elsewhere|{sys.prefix}|/tmp/x")
    assert "runs on elsewhere" in forkserver.cold_start_reason(job)
    monkeypatch.setenv(forkserver.ENV, f"{socket.gethostname()}|/other/env|/tmp/x")
    assert "another Python environment" in forkserver.cold_start_reason(job)
    monkeypatch.delenv(forkserver.ENV)
    assert "no server" in forkserver.cold_start_reason(job)
    monkeypatch.setenv(forkserver.ENV, here)
    monkeypatch.setattr(protocol, "_IN_FORKED_JOB", True)
    assert forkserver.cold_start_reason(job) == "already in a forked job"


def _gone(pid: int, timeout: float = 10.0) -> bool:
    """Whether ``pid`` has ended (or is a zombie waiting for the server to collect it) within ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def _start_sleeping_job(tmp_path: Path, action: str = "sleep", **popen: object) -> tuple[subprocess.Popen[str], int]:
    out = tmp_path / "seen.json"
    proc = subprocess.Popen(
        [sys.executable, str(write_job(tmp_path)), str(out), action],
        cwd=tmp_path,
        env=job_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )
    deadline = time.monotonic() + 60
    while not out.exists() or not out.read_text():
        assert time.monotonic() < deadline and proc.poll() is None, "the job never started"
        time.sleep(0.05)
    return proc, json.loads(out.read_text())["pid"]


def test_killing_the_job_process_kills_the_forked_job(server, tmp_path):
    proc, forked = _start_sleeping_job(tmp_path)
    assert forked != proc.pid
    proc.kill()  # SIGKILL: nothing can be forwarded, the forked job must notice the hang-up itself
    proc.wait(timeout=10)
    assert _gone(forked), "the forked job outlived its job process"


def test_sigterm_is_forwarded_to_the_forked_job(server, tmp_path):
    proc, forked = _start_sleeping_job(tmp_path)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) != 0
    assert _gone(forked)


def test_a_signal_the_job_ignores_is_ignored_in_the_forked_job(server, tmp_path):
    """A non-interactive shell starts background jobs with SIGINT ignored: a cold job then runs on after a SIGINT,
    and so must the forked one (nothing is forwarded, and the forked process ignores it too)."""
    ignore = lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)  # noqa: E731
    proc, forked = _start_sleeping_job(tmp_path, "nap", preexec_fn=ignore)
    proc.send_signal(signal.SIGINT)
    os.kill(forked, signal.SIGINT)  # as a Ctrl-C that reached it directly would
    assert proc.wait(timeout=30) == 0, proc.stderr.read()


def test_server_stops_when_its_parent_ends(tmp_path):
    path = tmp_path / "socket"
    # a parent that starts the server and ends at once: the server must notice, remove its socket and exit
    code = (
        "import os, subprocess, sys; "
        f"p = subprocess.Popen([sys.executable, '-m', 'kgeval.runtime.forkserver', {str(path)!r}, str(os.getpid()), 'json'], "
        "start_new_session=True); print(p.pid)"
    )
    done = subprocess.run([sys.executable, "-c", code], env=job_env(), check=True, timeout=60, capture_output=True)
    server_pid = int(done.stdout)
    assert _gone(server_pid, timeout=15), "the server outlived its parent"
    assert not path.exists()


def test_switched_off_starts_no_server(monkeypatch):
    monkeypatch.setenv(forkserver.ENV, "off")
    assert forkserver.start_server(modules=("json",)) is None
    assert lifecycle._SERVER is None


def test_server_log_path_lies_beside_snakemakes_log():
    log = ".snakemake/log/2026-11-24T234341.476522.snakemake.log"
    assert forkserver.server_log_path([log]) == ".snakemake/log/2026-11-24T234341.476522.forkserver.log"
    assert forkserver.server_log_path(log) == ".snakemake/log/2026-11-24T234341.476522.forkserver.log"
    assert forkserver.server_log_path([]) is None
    assert forkserver.server_log_path(None) is None


#: what the identity test reruns cold: training (forked in the session's run, cold here), ranking, metrics and the
#: collated tables, the Monte-Carlo expectations, and S1's permutation table, the one job with two threads
COLD_TARGETS = (
    "results/test/tables/metrics.tsv",
    "results/test/tables/expectations.tsv",
    "results/test/s1/ranks/tables/permutations.tsv",
)


@pytest.mark.slow
def test_forked_jobs_write_what_cold_jobs_write(test_workflow, tmp_path):
    """The session's test run (its jobs forked from the server) and a cold run of the same targets: same bytes."""
    from conftest import copy_workflow

    logs = list((test_workflow / ".snakemake" / "log").glob("*.forkserver.log"))
    assert logs, "the test run started no fork server"
    served = "".join(log.read_text() for log in logs)
    # training records its own usage (kgeval.runtime.usage) instead of Snakemake's benchmark:, so it is forked too
    for script in ("train_model.py", "compute_ranks.py", "compute_metrics.py", "table_permutations.py"):
        assert script in served, f"no {script} job was forked from the server"
    endings = [line for line in served.splitlines() if " ended, status " in line]
    assert endings and all(line.endswith("ended, status 0") for line in endings), "a forked job did not exit by itself"

    workdir = copy_workflow(tmp_path / "cold")
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", *COLD_TARGETS, "--cores", "2", "--configfile", "config/test.yaml"],
        cwd=workdir,
        env={**os.environ, forkserver.ENV: "off"},
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "kgeval.runtime.forkserver" not in proc.stderr, "KGEVAL_FORKSERVER=off still started a server"
    cold = workdir / "results" / "test"
    compared = 0
    for path in sorted(cold.rglob("*")):
        relative = path.relative_to(cold)
        if path.is_dir() or relative.parts[0] in ("logs", "benchmarks") or path.suffix in (".pt", ".json"):
            continue  # logs and timings hold times; models are compared through their ranks
        warm = test_workflow / "results" / "test" / relative
        assert warm.read_bytes() == path.read_bytes(), f"{relative} differs between forked and cold jobs"
        compared += 1
    assert compared >= 30
    # the trainings' usage records (kgeval.runtime.usage) measure the process that trained: forked there, the job's own here
    for results, process in ((test_workflow / "results" / "test", "forked"), (cold, "own")):
        records = sorted((results / "benchmarks" / "train_model").rglob("*.tsv"))
        assert records, f"no usage records under {results}"
        for record in records:
            header, row = record.read_text().splitlines()
            usage = dict(zip(header.split("\t"), row.split("\t")))
            assert usage["process"] == process, f"{record}: {usage}"
            assert float(usage["cpu_time"]) > 0 and float(usage["max_rss"]) > 100, f"{record}: {usage}"
