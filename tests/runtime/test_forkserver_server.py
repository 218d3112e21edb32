"""kgeval.runtime.forkserver.server: a job handed to the server runs in a forked process that takes over the job's whole
process state, reports its exit status and dies with the job's own process; the server stops with its parent.

The jobs here are small script files that play a Snakemake script (a ``snakemake`` object in ``__main__``) and write
what they see (pid, parent, cwd, environment, threads, argv) to a JSON file, so each check compares the forked process
with what the job's own process would have had. test_forkserver_client.py and test_forkserver_lifecycle.py import the
job helpers and the ``server`` fixture from here.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kgeval.runtime import forkserver
from kgeval.runtime.forkserver import client, lifecycle, server as server_module

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
        "gpus": os.environ.get("CUDA_VISIBLE_DEVICES", "unset"),
        "server_gpus": getattr(sys.modules.get("cache_tmpdir"), "GPUS", "not preloaded"),
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
    # and records the GPUs the server sees while it preloads
    (tmp_path / "preload" / "cache_tmpdir.py").write_text(
        "import os, tempfile\ntempfile.gettempdir()\nGPUS = os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')\n"
    )
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
        job, out, "3", work, MARK="job-env", OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2", TMPDIR=str(scratch),
        CUDA_VISIBLE_DEVICES="0",
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
    # no GPU in the server while it preloads, nor in a forked (CPU) job, whatever the job's environment says
    assert seen["server_gpus"] == "" and seen["gpus"] == ""
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


@pytest.mark.parametrize(
    ("env", "expected"),
    [({"OMP_NUM_THREADS": "3"}, 3), ({"OMP_NUM_THREADS": "0"}, 1), ({"OMP_NUM_THREADS": "x"}, None), ({}, None)],
)
def test_thread_count_of_a_job(env, expected):
    """Snakemake's OMP_NUM_THREADS, at least 1; every CPU without a usable value (a cold process's default)."""
    assert server_module._thread_count(env) == (os.cpu_count() if expected is None else expected)


def test_preload_reports_what_failed():
    failed = server_module._preload(("json", "kgeval_no_such_module", "csv"))
    assert list(failed) == ["kgeval_no_such_module"] and failed["kgeval_no_such_module"].startswith("ModuleNotFoundError")
    assert "json" in sys.modules and "csv" in sys.modules


@pytest.mark.parametrize(
    ("body", "status", "stderr"),
    [
        ("pass", 0, ""),
        ("import sys; sys.exit()", 0, ""),
        ("import sys; sys.exit(4)", 4, ""),
        ("import sys; sys.exit('bad input')", 1, "bad input"),
        ("raise KeyError('missing')", 1, "KeyError: 'missing'"),
    ],
)
def test_script_exit_status(tmp_path, monkeypatch, capsys, body, status, stderr):
    """The forked process runs the script as ``python script args`` would: same argv, ``__main__``, exit status."""
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(sys, "path", list(sys.path))
    script = tmp_path / "job.py"
    seen = tmp_path / "seen.json"
    script.write_text(
        "import json, sys\n"
        f"json.dump({{'argv': sys.argv, 'name': __name__, 'path0': sys.path[0]}}, open({str(seen)!r}, 'w'))\n" + body + "\n"
    )
    assert server_module._run_script([str(script), "a", "b"]) == status
    assert json.loads(seen.read_text()) == {"argv": [str(script), "a", "b"], "name": "__main__", "path0": str(tmp_path)}
    assert stderr in capsys.readouterr().err


#: what the identity test reruns cold: training of every model (forked in the session's run, cold here) through S1's
#: permutation table (the one job with two threads), and one dataset's ranks, metrics and Monte-Carlo expectations -
#: every kind of forked script, in 16 cold jobs instead of the 25 of both datasets' collated tables
COLD_TARGETS = (
    "results/test/s1/ranks/tables/permutations.tsv",
    "results/test/datasets/tiny/expectations.tsv",
    *(f"results/test/metrics/tiny/{model}/0/test.tsv" for model in ("transe", "distmult", "complex")),
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
    assert compared >= 20
    # the trainings' usage records (kgeval.runtime.usage) measure the process that trained: forked there, the job's own here
    for results, process in ((test_workflow / "results" / "test", "forked"), (cold, "own")):
        records = sorted((results / "benchmarks" / "train_model").rglob("*.tsv"))
        assert records, f"no usage records under {results}"
        for record in records:
            header, row = record.read_text().splitlines()
            usage = dict(zip(header.split("\t"), row.split("\t")))
            assert usage["process"] == process, f"{record}: {usage}"
            assert float(usage["cpu_time"]) > 0 and float(usage["max_rss"]) > 100, f"{record}: {usage}"


def test_log_lines_stay_whole_beside_another_writer(tmp_path):
    """The server and its forked jobs append to one log: each line must go out in one write, or another process's
    line lands between a line and its newline (``print`` writes them apart; seen in a CI run's server log)."""
    path = tmp_path / "shared.log"
    path.write_text("")
    other = (
        "import os, sys\nfd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)\n"
        "for _ in range(100000):\n    os.write(fd, b'other line\\n')\n"
    )
    ours = "from kgeval.runtime.forkserver.server import _log\nfor _ in range(20000):\n    _log('job 1 ended, status 0')\n"
    env = job_env()
    with open(path, "ab") as log:
        writer = subprocess.Popen([sys.executable, "-c", other, str(path)])
        subprocess.run([sys.executable, "-c", ours], stderr=log, env=env, check=True, timeout=120)
        writer.wait(timeout=120)
    lines = path.read_text().splitlines()
    ended = [line for line in lines if line != "other line"]
    assert len(ended) == 20000
    assert all(line.endswith(" job 1 ended, status 0") and len(line) == len("00:00:00 job 1 ended, status 0")
               for line in ended), [line for line in ended if not line.endswith("status 0")][:3]
