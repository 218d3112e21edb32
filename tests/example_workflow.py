"""Helpers of the rerun and config-error tests (tests/test_reruns.py, tests/test_config_errors.py): Snakemake in a
copy of the workflow, the example config and its edits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, copy_workflow

__all__ = ["example_config", "snakemake", "workdir", "write_config"]


def snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Snakemake (this venv's) in ``workdir``; with ``check``, a failure fails the test with its output."""
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", *args], cwd=workdir, capture_output=True, text=True, timeout=1200
    )
    if check and proc.returncode != 0:
        pytest.fail(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def example_config(**changes) -> dict:
    """``config/example.yaml`` with top-level keys replaced by ``changes``."""
    config = yaml.safe_load((REPO / "config" / "example.yaml").read_text())
    config.update(changes)
    return config


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    """A fresh copy of the workflow (no results)."""
    return copy_workflow(tmp_path / "wf")


def write_config(workdir: Path, name: str, config: dict) -> str:
    """Write ``config`` as ``config/<name>`` in ``workdir``; return that relative path (for ``--configfile``)."""
    path = workdir / "config" / name
    path.write_text(yaml.safe_dump(config))
    return f"config/{name}"
