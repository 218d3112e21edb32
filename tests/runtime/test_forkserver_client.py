"""kgeval.runtime.forkserver.client: when a job must start cold, the job's own process runs it; otherwise it hands the
job over, forwards signals to the forked process and exits with its status. Jobs and the ``server`` fixture:
test_forkserver_server.py."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

import pytest

from kgeval.runtime import forkserver
from kgeval.runtime.forkserver import client, protocol
from test_forkserver_server import _gone, _start_sleeping_job, run_job, server, write_job  # noqa: F401  (server: a fixture)


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
    proc = run_job(
        write_job(tmp_path, bench, resources), tmp_path / "seen.json", "0", tmp_path, CUDA_VISIBLE_DEVICES="0",
        **extra_env,
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["ppid"] == os.getpid(), "a job that must start cold ran in the server"
    assert seen["gpus"] == "0", "a cold job (a GPU job among them) keeps the GPUs it was given"


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


def test_open_stdio_lists_the_open_standard_descriptors():
    """Only the descriptors 0-2 that are open are sent (fstat on each, the same check done here independently)."""
    expected = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            expected.append(fd)
        except OSError:
            pass
    assert client._open_stdio() == expected


def test_run_in_forkserver_returns_when_a_job_must_start_cold(monkeypatch):
    """Every cold-start reason makes run_in_forkserver return (the script goes on in this process)."""
    monkeypatch.delenv(forkserver.ENV, raising=False)
    assert client.run_in_forkserver() is None
    monkeypatch.setenv(forkserver.ENV, f"{socket.gethostname()}|{sys.prefix}|/nonexistent/socket")
    # pytest's __main__ has no snakemake object: not a Snakemake script, so it never connects
    assert client.cold_start_reason() == "not a Snakemake script"
    assert client.run_in_forkserver() is None


def test_gpu_resource_zero_is_not_a_gpu_job(monkeypatch):
    monkeypatch.setenv(forkserver.ENV, f"{socket.gethostname()}|{sys.prefix}|/tmp/x")
    job = type("Job", (), {"bench_iteration": None, "resources": {"gpu": 0}})()
    assert client.cold_start_reason(job) is None
    job.resources = {"gpu": 2}
    assert client.cold_start_reason(job) == "GPU job"
