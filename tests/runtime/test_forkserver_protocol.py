"""kgeval.runtime.forkserver.protocol: the server address, the message framing and the forked-job flag."""

from __future__ import annotations

import socket
import threading

import pytest

from kgeval.runtime.forkserver import protocol


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("", None),
        ("off", None),
        ("host|/env", None),
        ("host|/env|/tmp/s", ("host", "/env", "/tmp/s")),
        ("host|/env|/tmp/a|b", ("host", "/env", "/tmp/a|b")),  # the path is the rest, '|' and all
    ],
)
def test_server_address(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv(protocol.ENV, raising=False)
    else:
        monkeypatch.setenv(protocol.ENV, value)
    assert protocol.server_address() == expected


def test_framing_is_network_byte_order():
    assert protocol.HEADER.pack(258) == (258).to_bytes(4, "big")
    assert protocol.STATUS.pack(-1) == (-1).to_bytes(4, "big", signed=True)
    assert protocol.STATUS.unpack((70000).to_bytes(4, "big", signed=True)) == (70000,)


def test_recv_exact_collects_pieces_and_reports_a_hang_up():
    left, right = socket.socketpair()
    payload = bytes(range(256)) * 40
    sender = threading.Thread(target=lambda: [right.sendall(payload[i : i + 1000]) for i in range(0, len(payload), 1000)])
    sender.start()
    try:
        assert protocol.recv_exact(left, len(payload)) == payload
        sender.join()
        right.sendall(b"abc")
        right.close()
        assert protocol.recv_exact(left, 5) is None  # closed after 3 of 5 bytes
    finally:
        left.close()
        right.close()


def test_forked_job_flag(monkeypatch):
    monkeypatch.setattr(protocol, "_IN_FORKED_JOB", False)
    assert protocol.in_forked_job() is False
    protocol.mark_forked_job()
    assert protocol.in_forked_job() is True
