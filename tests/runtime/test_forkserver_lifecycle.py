"""kgeval.runtime.forkserver.lifecycle: start_server / stop_server (the Snakefile's hooks) and the server's log path."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

from kgeval.runtime import forkserver
from kgeval.runtime.forkserver import lifecycle


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


def test_start_and_stop_server(monkeypatch, tmp_path):
    """The address goes into os.environ, the server runs with one thread per pool, stop_server ends it and cleans up."""
    monkeypatch.delenv(forkserver.ENV, raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    log = tmp_path / "server.log"
    path = forkserver.start_server(modules=("json",), log_path=str(log))
    try:
        assert path is not None and Path(path).is_socket()
        assert os.environ[forkserver.ENV] == f"{socket.gethostname()}|{sys.prefix}|{path}"
        process = lifecycle._SERVER
        environ = dict(
            item.split("=", 1) for item in Path(f"/proc/{process.pid}/environ").read_text().split("\0") if "=" in item
        )
        assert all(environ[name] == "1" for name in lifecycle.THREAD_VARIABLES)
        assert forkserver.ENV not in environ  # the server itself is no job of a server
        assert os.getsid(process.pid) == process.pid  # its own session: a Ctrl-C reaches the jobs, not the server
    finally:
        forkserver.stop_server()
    assert process.poll() is not None, "stop_server left the server running"
    assert not Path(path).parent.exists()
    assert forkserver.ENV not in os.environ and lifecycle._SERVER is None
    assert log.exists()


def test_a_server_that_does_not_start_gives_none(monkeypatch, capsys):
    monkeypatch.delenv(forkserver.ENV, raising=False)
    monkeypatch.setattr(sys, "executable", "/bin/false")  # the server command exits at once
    assert forkserver.start_server(modules=()) is None
    assert "did not start" in capsys.readouterr().err
    assert forkserver.ENV not in os.environ and lifecycle._SERVER is None


def test_stop_without_a_server_is_harmless(monkeypatch, tmp_path):
    folder = tmp_path / "kgeval-forkserver-x"
    folder.mkdir()
    monkeypatch.setenv(forkserver.ENV, f"host|prefix|{folder / 'socket'}")
    monkeypatch.setattr(lifecycle, "_SERVER", None)
    forkserver.stop_server()
    assert not folder.exists() and forkserver.ENV not in os.environ
