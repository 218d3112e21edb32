"""The GPU path end to end (#36): the one-dataset cut of config/test.yaml (every rule kind) with training and ranking
on CUDA, as the README's ``--set-resources train_model:gpu=1 compute_ranks:gpu=1`` runs it, against the CPU run of
config/test.yaml; the comparison and its tolerance are in tests/gpu_comparison.py. The run itself is skipped without
CUDA; the comparison is checked here on the CPU run's own tables and on a perturbed copy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import torch

from conftest import copy_workflow, run_snakemake
from gpu_comparison import COMPARED_METRICS, metric_differences, metrics_tables
from workflow_cut import small_config

pytestmark = pytest.mark.slow

#: what the README gives for training and ranking on a local GPU
GPU_RESOURCES = ("--set-resources", "train_model:gpu=1", "compute_ranks:gpu=1")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: the GPU path runs only on a GPU host")
def test_test_config_trains_and_ranks_on_the_gpu(tmp_path, test_workflow):
    workdir = copy_workflow(tmp_path / "workflow")
    configfile = small_config(workdir)
    run_snakemake(workdir, "--cores", "2", *GPU_RESOURCES, "--configfile", configfile, timeout=3600)
    results = workdir / "results" / "test"
    devices = {
        str(path.relative_to(results)): json.loads(path.read_text())["device"]
        for path in (results / "models").glob("*/*/*/config.json")
    }
    assert devices and all(device.startswith("cuda") for device in devices.values()), devices
    differences = metric_differences(test_workflow / "results" / "test", results)
    print(differences.to_string(index=False))
    assert len(differences) == len(metrics_tables(results)) * len(COMPARED_METRICS)
    outside = differences[~differences["within"]]
    assert outside.empty, f"GPU metrics outside the CPU run's tolerance:\n{outside.to_string(index=False)}"


def test_comparison_on_the_cpu_runs_tables(test_workflow, tmp_path):
    """The comparison reads the test config's real metrics tables: a run against itself is within, every compared
    metric present; moving one model's MRR by more than its interval's width is caught, and only that."""
    cpu = test_workflow / "results" / "test"
    same = metric_differences(cpu, cpu)
    assert len(same) == len(metrics_tables(cpu)) * len(COMPARED_METRICS) and same["within"].all()
    assert (same["difference"] == 0).all()
    moved = tmp_path / "moved"
    shutil.copytree(cpu / "metrics", moved / "metrics")
    name = sorted(metrics_tables(moved))[0]
    path = moved / name
    table = pd.read_csv(path, sep="\t")
    row = (table["side"] == "both") & (table["rank_type"] == "realistic") & (table["metric"] == "mrr")
    width = float((table.loc[row, "ci_high"] - table.loc[row, "ci_low"]).iloc[0])
    table.loc[row, "value"] += max(width, 0.02) * 1.5
    table.to_csv(path, sep="\t", index=False)
    found = metric_differences(cpu, moved)
    assert found.loc[~found["within"], ["table", "metric"]].values.tolist() == [[name, "mrr"]]


def test_comparison_rejects_runs_of_other_configs(test_workflow, tmp_path):
    cpu = test_workflow / "results" / "test"
    extra = tmp_path / "extra"
    shutil.copytree(cpu / "metrics", extra / "metrics")
    (extra / "metrics" / "other" / "transe" / "0").mkdir(parents=True)
    shutil.copy(next(iter(metrics_tables(cpu).values())), extra / "metrics" / "other" / "transe" / "0" / "test.tsv")
    with pytest.raises(ValueError, match="missing from the CPU run"):
        metric_differences(cpu, extra)
    with pytest.raises(ValueError, match="no metrics tables"):
        metric_differences(cpu, tmp_path / "empty")
