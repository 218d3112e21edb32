"""Config errors that name the file, line or key before any job runs, and studies skipped with their reason
(issue #18; the reruns themselves are in tests/test_reruns.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from example_workflow import example_config, snakemake, workdir, write_config  # noqa: F401  (workdir: a fixture)
from kgeval.config import ConfigError, check_input_files, read_yaml, validate_config


def test_a_misspelled_path_fails_the_dry_run_naming_the_key(workdir):
    config = example_config()
    config["datasets"]["mykg"]["train"] = "tests/data/tiny/trian.txt"
    proc = snakemake(workdir, "-n", "--configfile", write_config(workdir, "typo.yaml", config), check=False)
    assert proc.returncode != 0
    assert "config key datasets.mykg.train: file tests/data/tiny/trian.txt does not exist" in proc.stdout + proc.stderr


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


def test_a_config_error_starts_with_its_message(workdir):
    """No Snakemake preamble ("ConfigError in file ..., line ...") and no traceback before or after the message."""
    config = example_config()
    config["models"]["transe"]["bogus"] = 1
    proc = snakemake(workdir, "-n", "--configfile", write_config(workdir, "bogus.yaml", config), check=False)
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if not line.startswith("Using workflow specific profile")]
    assert lines[0].startswith("unknown config key models.transe.bogus; allowed keys here:"), proc.stderr
    assert "Traceback" not in proc.stderr and "ConfigError in file" not in proc.stderr


def test_one_model_says_the_comparisons_are_empty(workdir):
    config = example_config()
    proc = snakemake(workdir, "-n", "evaluate", "--configfile", write_config(workdir, "one.yaml", config))
    assert len(config["models"]) == 1
    assert proc.stderr.count("kgeval: tables/model_comparisons.tsv will hold its header only: no dataset and seed "
                             "has the ranks of two models") == 1
    config["models"]["distmult"] = {"model": "DistMult"}
    proc = snakemake(workdir, "-n", "evaluate", "--configfile", write_config(workdir, "two.yaml", config))
    assert "model_comparisons.tsv will hold its header only" not in proc.stderr
