"""kgeval.logs.log_to: a job's logging, warnings and output go to its log file, not to the console."""

from __future__ import annotations

import logging
import os
import sys
import warnings

import pytest

from kgeval.logs import log_to


def test_everything_goes_to_the_file(tmp_path, capfd):
    path = tmp_path / "logs" / "job.log"
    with log_to(path) as logger:
        logger.info("epoch 1/3 loss 0.5")
        logging.getLogger("pykeen.training").warning("a library warning")
        warnings.warn("a Python warning", UserWarning)
        print("printed to stdout")
        print("printed to stderr", file=sys.stderr)
        os.write(2, b"written to file descriptor 2\n")
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    text = path.read_text()
    for line in ("epoch 1/3 loss 0.5", "a library warning", "a Python warning", "printed to stdout",
                 "printed to stderr", "written to file descriptor 2"):
        assert line in text
    # the console is back after the block
    print("after")
    assert capfd.readouterr().out == "after\n"


def test_failure_is_logged_and_raised(tmp_path, capfd):
    path = tmp_path / "job.log"
    with pytest.raises(ValueError, match="bad triple"):
        with log_to(path):
            raise ValueError("bad triple")
    assert "step failed" in path.read_text() and "ValueError: bad triple" in path.read_text()
    assert capfd.readouterr().err == ""


def test_without_path_logs_to_stderr(capfd):
    with log_to(None) as logger:
        logger.info("to the console")
    assert "to the console" in capfd.readouterr().err
