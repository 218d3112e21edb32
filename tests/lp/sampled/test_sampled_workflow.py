"""A dataset evaluated with sampled candidates (ranking.candidates), end to end on config/test.yaml: the evaluate
target writes tables/metrics_sampled.tsv for it and no ranks tables, every other dataset keeps its full ranking, no
study reads it, and a study that names it stops the run naming the key."""

import copy

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import REPO, copy_workflow, run_snakemake
from kgeval.config import ConfigError, read_yaml, validate_config
from kgeval.io import read_tsv

OVERLAY = {"results_dir": "results/sampled", "ranking": {"candidates": {"tiny": {"k": 4, "seed": 1}}}}


@pytest.fixture(scope="module")
def sampled_run(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("sampled"))
    (workdir / "overlay.yaml").write_text(yaml.safe_dump(OVERLAY))
    run_snakemake(workdir, "--cores", "2", "evaluate", "--configfile", "config/test.yaml", "overlay.yaml", "--quiet",
                  "rules")
    return workdir / "results" / "sampled"


@pytest.mark.slow
def test_the_sampled_dataset_gets_estimates_and_no_ranks(sampled_run):
    table = read_tsv(sampled_run / "tables" / "metrics_sampled.tsv")
    assert set(table["dataset"]) == {"tiny"} and set(table["k"]) == {4} and set(table["sampler"]) == {"uniform"}
    assert set(table["model"]) == {"transe", "distmult", "complex"} and set(table["split"]) == {"valid", "test"}
    assert set(table["estimator"]) == {"naive", "scaled"}
    assert not (sampled_run / "ranks" / "tiny").exists()
    assert set(read_tsv(sampled_run / "tables" / "metrics.tsv")["dataset"]) == {"nations"}
    # the counts behind the table: the scaled MR is the mean of 1 + (N - 1) b / d over both sides' queries
    counts = pd.read_parquet(sampled_run / "sampled" / "tiny" / "transe" / "0" / "test.parquet")
    ranks = 1 + (counts["num_candidates"] - 1) * (counts["greater"] + 0.5 * counts["equal"]) / counts["drawn"]
    row = table[(table.model == "transe") & (table.split == "test") & (table.side == "both")
                & (table.rank_type == "realistic") & (table.estimator == "scaled") & (table.metric == "mr")]
    assert np.isclose(float(row["value"].iloc[0]), ranks.mean())
    assert bool(row["unbiased"].iloc[0])


@pytest.mark.slow
def test_no_study_plans_a_job_on_the_sampled_dataset(sampled_run):
    workdir = sampled_run.parents[1]
    proc = run_snakemake(workdir, "-n", "--forceall", "--configfile", "config/test.yaml", "overlay.yaml")
    jobs = [line for line in proc.stdout.splitlines() if "tiny" in line and ("output:" in line or "input:" in line)]
    # the sampled dataset appears only in its data, training and sampled-evaluation jobs and in the expectations
    assert any("/sampled/tiny/" in line for line in jobs) and any("/models/tiny/" in line for line in jobs)
    assert not [line for line in jobs if "/ranks/tiny" in line or "/s1/" in line or "/s5/tiny" in line
                or "/s6/tiny" in line or "/s4/tiny" in line]


def test_a_study_naming_a_sampled_dataset_names_the_key():
    config = read_yaml(REPO / "config" / "test.yaml")
    config["ranking"]["candidates"] = {"tiny": {}}
    config["studies"]["s5"]["datasets"] = ["tiny"]
    with pytest.raises(ConfigError, match=r"config key studies.s5.datasets: \['tiny'\] is evaluated with sampled"):
        validate_config(copy.deepcopy(config), check_pykeen=False)
    config["ranking"]["candidates"] = {"tiny": {"mode": "full"}}
    validate_config(copy.deepcopy(config), check_pykeen=False)  # switched back to the full ranking
    config["ranking"]["candidates"] = {"tyni": {}}
    with pytest.raises(ConfigError, match=r"config key ranking.candidates: \['tyni'\] not among the configured"):
        validate_config(config, check_pykeen=False)
