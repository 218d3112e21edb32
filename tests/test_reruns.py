"""Trustworthy reruns and extension (issue #18): declared inputs, one results folder per config, small configs,
and config errors that name the key before any job runs."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, copy_workflow
from kgeval.config import ConfigError, check_input_files, read_yaml, validate_config


def snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", *args], cwd=workdir, capture_output=True, text=True, timeout=1200
    )
    if check and proc.returncode != 0:
        pytest.fail(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def example_config(**changes) -> dict:
    config = yaml.safe_load((REPO / "config" / "example.yaml").read_text())
    config.update(changes)
    return config


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    return copy_workflow(tmp_path / "wf")


def write_config(workdir: Path, name: str, config: dict) -> str:
    path = workdir / "config" / name
    path.write_text(yaml.safe_dump(config))
    return f"config/{name}"


def test_editing_a_triples_file_reruns_what_depends_on_it(workdir):
    targets = ["results/example/datasets/mykg/summary.tsv", "results/example/datasets/mykg/expectations.tsv"]
    snakemake(workdir, *targets, "--cores", "1", "--configfile", "config/example.yaml")
    assert "Nothing to be done" in snakemake(workdir, "-n", *targets, "--configfile", "config/example.yaml").stdout
    train = workdir / "tests" / "data" / "tiny" / "train.txt"
    train.write_text("".join(train.read_text().splitlines(keepends=True)[:-10]))
    dry = snakemake(workdir, "-n", *targets, "--configfile", "config/example.yaml").stdout
    assert "summarize_dataset" in dry and "tabulate_dataset_expectations" in dry
    # the triples files are inputs of every job that loads the dataset
    assert "tests/data/tiny/train.txt" in snakemake(
        workdir, "-n", "-p", "results/example/models/mykg/transe/0/model.pt", "--configfile", "config/example.yaml",
        "--forceall",
    ).stdout


def test_a_misspelled_path_fails_the_dry_run_naming_the_key(workdir):
    config = example_config()
    config["datasets"]["mykg"]["train"] = "tests/data/tiny/trian.txt"
    proc = snakemake(workdir, "-n", "--configfile", write_config(workdir, "typo.yaml", config), check=False)
    assert proc.returncode != 0
    assert "config key datasets.mykg.train: file tests/data/tiny/trian.txt does not exist" in proc.stdout + proc.stderr


def test_two_configs_keep_their_own_results(workdir):
    """The default-style example and the test config write to different folders; neither overwrites the other."""
    snakemake(workdir, "results/example/tables/expectations.tsv", "--cores", "1", "--configfile", "config/example.yaml")
    first = workdir / "results" / "example" / "tables" / "expectations.tsv"
    digest = hashlib.sha256(first.read_bytes()).hexdigest()
    snakemake(workdir, "results/test/tables/expectations.tsv", "--cores", "1", "--configfile", "config/test.yaml")
    second = workdir / "results" / "test" / "tables" / "expectations.tsv"
    assert hashlib.sha256(first.read_bytes()).hexdigest() == digest
    assert "mykg" in first.read_text() and "mykg" not in second.read_text()
    assert "nations" in second.read_text()


def test_a_study_that_cannot_run_is_skipped_with_its_reason(workdir):
    proc = snakemake(workdir, "-n", "--configfile", "config/example.yaml")
    console = proc.stderr + proc.stdout
    assert console.count("kgeval: skipping S4: Kendall's tau between system rankings needs at least 3 systems") == 1
    assert "kgeval: skipping S2:" in console
    # rule all collects the jobs of the studies that run: S5's, none of S4's or S2's
    assert "assess_calibration" in proc.stdout
    assert "evaluate_s4_levels_each" not in proc.stdout and "table_s2_grid" not in proc.stdout
    named = snakemake(workdir, "-n", "plot_s4_tau_depth", "--configfile", "config/example.yaml", check=False)
    assert named.returncode != 0
    assert "S4 cannot run with this config: Kendall's tau" in named.stdout + named.stderr


def test_disabled_studies_are_not_validated(workdir):
    config = example_config(studies={"s4": {"enabled": False, "systems": ["nope"]}})
    proc = snakemake(workdir, "-n", "--configfile", write_config(workdir, "off.yaml", config))
    assert "skipping S4" not in proc.stderr and "evaluate_s4_levels_each" not in proc.stdout


@pytest.mark.parametrize(
    ("where", "key", "value", "message"),
    [
        ("model_kwargs", "embeding_dim", 16,
         "config key models.transe.model_kwargs.embeding_dim: PyKEEN model TransE takes no argument 'embeding_dim'; "
         "did you mean 'embedding_dim'?"),
        ("optimizer_kwargs", "learning_rate", 0.1, "config key models.transe.optimizer_kwargs.learning_rate"),
        ("training_kwargs", "num_epoch", 3, "did you mean 'num_epochs'?"),
        ("loss_kwargs", "marginn", 1.0, "config key models.transe.loss_kwargs.marginn: loss MarginRankingLoss"),
        ("negative_sampler_kwargs", "num_negs_per_posi", 2, "did you mean 'num_negs_per_pos'?"),
    ],
)
def test_kwargs_are_checked_against_pykeen(where, key, value, message):
    config = example_config()
    spec = config["models"]["transe"]
    spec.setdefault(where, {})[key] = value
    if where == "loss_kwargs":
        spec["loss"] = "marginranking"
    with pytest.raises(ConfigError) as error:
        validate_config(config)
    assert message in str(error.value)


def test_kwargs_of_per_dataset_overrides_are_checked():
    config = example_config()
    config["models"]["transe"]["overrides"] = {"mykg": {"model_kwargs": {"embedding_dims": 8}}}
    with pytest.raises(ConfigError, match=r"models\.transe\.overrides\.mykg\.model_kwargs\.embedding_dims"):
        validate_config(config)


def test_yaml_syntax_error_names_file_line_and_column(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("datasets:\n  mykg: {source: files\nmodels:\n  transe: {model: TransE}\n")
    with pytest.raises(ConfigError) as error:
        read_yaml(bad)
    assert f"{bad}, line 3, column 7: YAML syntax error" in str(error.value)
    proc = subprocess.run([sys.executable, "-m", "kgeval", "check-config", str(bad)], capture_output=True, text=True)
    assert proc.returncode == 1 and "line 3, column 7" in proc.stderr


def test_missing_data_dir_names_the_key(tmp_path):
    missing = tmp_path / "nowhere"
    entries = [("datasets.fb15k237.local", str(missing / "fb15k237" / "train.txt"))]
    with pytest.raises(ConfigError, match=r"config key data_dir: folder .*nowhere does not exist .* datasets\.fb15k237"):
        check_input_files(entries, missing)


def test_python_dash_m_kgeval():
    proc = subprocess.run([sys.executable, "-m", "kgeval", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "adjust" in proc.stdout and "check-config" in proc.stdout


@pytest.mark.slow
def test_one_dataset_one_model_example_runs_end_to_end(workdir):
    proc = snakemake(workdir, "--cores", "2", "--configfile", "config/example.yaml")
    assert "kgeval: skipping S4" in proc.stderr
    results = workdir / "results" / "example"
    for path in ("tables/metrics.tsv", "s1/ranks/tables/rank_types.tsv", "s5/tables/table1_timing.tsv"):
        assert (results / path).is_file(), path
    assert not (results / "s4").exists()
    assert not (workdir / "results" / "tables").exists()
