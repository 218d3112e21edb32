"""A config whose data_dir folder is absent downloads instead of stopping, and says so in one console line."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO, copy_workflow

from kgeval.config import resolve_data_dir


def test_absent_folder_becomes_download(tmp_path):
    config = {"data_dir": str(tmp_path / "nowhere")}
    message = resolve_data_dir(config)
    assert config["data_dir"] is None
    assert message.startswith(f"kgeval: data_dir {tmp_path / 'nowhere'} not found: downloading")
    assert "\n" not in message


def test_existing_folder_is_kept(tmp_path):
    config = {"data_dir": str(tmp_path)}
    assert resolve_data_dir(config) is None and config["data_dir"] == str(tmp_path)


@pytest.mark.parametrize("spelling", ["null", "None", "", None])
def test_null_spellings_mean_download_without_a_message(spelling):
    config = {"data_dir": spelling}
    assert resolve_data_dir(config) is None and config["data_dir"] is None


def test_check_config_agrees_with_the_workflow(tmp_path):
    """``kgeval check-config`` on the released config, run where ../shared/data is absent: the same line, no error."""
    proc = subprocess.run([sys.executable, "-m", "kgeval", "check-config", str(REPO / "config" / "released.yaml")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("data_dir ../shared/data not found: downloading") == 1
    assert "ok" in proc.stdout


@pytest.mark.slow
def test_released_and_real_tiers_plan_without_the_folder(tmp_path):
    """The dry runs of the released and real configs in a clone with no ../shared/data beside it."""
    workdir = copy_workflow(tmp_path / "clone")
    for args in (["study_s2_released", "study_s4_released", "--configfile", "config/released.yaml"],
                 ["--configfile", "config/real.yaml"]):
        proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", *args], cwd=workdir,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        lines = [line for line in proc.stderr.splitlines() if "data_dir ../shared/data not found" in line]
        assert len(lines) == 1, proc.stderr[-3000:]
        assert "does not exist" not in proc.stderr


@pytest.mark.slow
def test_the_released_tier_trains_nothing(tmp_path):
    """The released tier's whole plan reads the authors' results: no training job of any kind, no study that needs one."""
    workdir = copy_workflow(tmp_path / "clone")
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile",
                           "config/released.yaml"], cwd=workdir, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    planned = proc.stdout + proc.stderr
    for rule in ("train_model", "train_ea_model", "evaluate_s6", "evaluate_s3_model", "assess_calibration"):
        assert f"rule {rule}:" not in planned and f"\n{rule} " not in planned, rule
