"""kgeval.lp.byo_example and config/byo.yaml: the example inputs are built offline from Nations; a dry run plans the
evaluation of the two models trained elsewhere and no training job for them; a bad input stops it before any job."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import copy_workflow
from kgeval.cli import main
from kgeval.lp.byo_example import CHECKPOINT_NAME, EXAMPLE_DIR, RANKS_NAME, build_example

CONFIG = "config/byo.yaml"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A copy of the workflow with the example inputs where config/byo.yaml reads them."""
    workdir = copy_workflow(tmp_path_factory.mktemp("byo") / "wf")
    build_example(workdir / EXAMPLE_DIR, num_epochs=1)
    return workdir


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=workdir, capture_output=True, text=True,
                          timeout=600)


def planned_jobs(stdout: str) -> list[tuple[str, dict[str, str]]]:
    """(rule, wildcards) of every job a dry run prints."""
    jobs = []
    for block in re.split(r"^(?=(?:local)?rule \w+:)", stdout, flags=re.M):
        rule = re.match(r"(?:local)?rule (\w+):", block)
        if rule:
            found = re.search(r"^\s+wildcards: (.*)$", block.split("\n\n")[0], flags=re.M)
            wildcards = dict(item.split("=", 1) for item in found.group(1).split(", ")) if found else {}
            jobs.append((rule.group(1), wildcards))
    return jobs


def test_example_inputs(workdir):
    folder = workdir / EXAMPLE_DIR
    assert (folder / CHECKPOINT_NAME / "trained_model.pkl").is_file()
    assert (folder / CHECKPOINT_NAME / "training_triples" / "entity_to_id.tsv.gz").is_file()
    ranks = pd.read_csv(folder / RANKS_NAME, sep="\t")
    assert list(ranks.columns) == ["head", "relation", "tail", "side", "split", "rank_optimistic", "rank_pessimistic"]
    assert set(ranks["split"]) == {"valid", "test"} and len(ranks) == 2 * (199 + 201)


def test_dry_run_plans_evaluation_and_no_training_for_models_trained_elsewhere(workdir):
    proc = snakemake(workdir, "-n", "--configfile", CONFIG)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    jobs = planned_jobs(proc.stdout)
    by_rule: dict[str, set[str]] = {}
    for rule, wildcards in jobs:
        by_rule.setdefault(rule, set()).add(wildcards.get("model", ""))
    assert by_rule["train_model"] == {"transe"}
    assert by_rule["import_checkpoint"] == {"mine"} and by_rule["import_ranks"] == {"theirs"}
    assert by_rule["compute_ranks"] == {"transe", "mine"}
    assert by_rule["compute_metrics"] == {"transe", "mine", "theirs"}
    assert by_rule["assess_calibration"] == {"transe", "mine"}  # S5: the checkpoint names its class
    for rule in ("table_model_comparisons", "collate_metrics", "evaluate_s4_levels_each", "table_s1_permutations"):
        assert rule in by_rule, rule
    for study in ("S5", "S1's permutations", "S4's pool"):
        assert f"kgeval: leaving theirs (source: ranks) out of {study}: " in proc.stderr
    assert not (workdir / "results" / "byo" / "ranks").exists()


def test_evaluate_target_plans_no_ea_or_study_job(workdir):
    """`snakemake evaluate` builds ranks, metrics, per-relation tables and comparisons of every model, nothing else."""
    proc = snakemake(workdir, "-n", "evaluate", "--configfile", CONFIG)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rules = {rule for rule, _ in planned_jobs(proc.stdout)}
    for rule in ("train_model", "import_checkpoint", "import_ranks", "compute_ranks", "compute_metrics",
                 "collate_metrics", "tabulate_expectations", "table_metrics_by_relation", "plot_metrics_by_relation",
                 "table_model_comparisons", "table_model_comparisons_over_seeds", "plot_model_comparisons_each"):
        assert rule in rules, rule
    study_rules = {name for path in (workdir / "workflow" / "rules").glob("s[1-5]*.smk")
                   for name in re.findall(r"^rule (\w+):", path.read_text(), flags=re.M)}
    assert {"assess_calibration", "train_ea_model"} <= study_rules
    assert not rules & study_rules, sorted(rules & study_rules)


def test_check_config_reads_the_example(workdir, capsys, monkeypatch):
    monkeypatch.chdir(workdir)
    assert main(["check-config", CONFIG]) == 0
    assert "config/byo.yaml: ok" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        ("ranks", r"config key models\.theirs\.path: results/byo/inputs/distmult_ranks\.tsv, line 2: rank 999 is above "
                  r"its \d+ candidates"),
        ("checkpoint", r"config key models\.mine\.path: results/byo/inputs/transe_checkpoint: the model has 14 entity ids "
                       r"but dataset 'kinships' has 104"),
    ],
)
def test_bad_input_stops_the_dry_run_before_any_job(tmp_path, workdir, spoil, message):
    bad = copy_workflow(tmp_path / "wf")
    shutil.copytree(workdir / EXAMPLE_DIR, bad / EXAMPLE_DIR)
    config = (bad / CONFIG).read_text()
    if spoil == "ranks":
        path = bad / EXAMPLE_DIR / RANKS_NAME
        frame = pd.read_csv(path, sep="\t")
        frame.loc[0, "rank_pessimistic"] = 999
        frame.to_csv(path, sep="\t", index=False)
    else:
        config = config.replace("nations: {source: pykeen, name: Nations}",
                                "nations: {source: pykeen, name: Nations}\n  kinships: {source: pykeen, name: Kinships}")
        config = config.replace("path: results/byo/inputs/transe_checkpoint\n    dataset: nations",
                                "path: results/byo/inputs/transe_checkpoint\n    dataset: kinships")
    (bad / CONFIG).write_text(config)
    proc = snakemake(bad, "-n", "--configfile", CONFIG)
    assert proc.returncode != 0
    assert re.search(message, proc.stdout + proc.stderr), (proc.stdout + proc.stderr)[-3000:]


@pytest.mark.slow
def test_import_jobs_give_the_ranks_of_the_inputs(workdir):
    """The import jobs run for real: the checkpoint's ranks equal the model's ranked in-process, the ranks file's
    tables hold its ranks."""
    import torch

    from kgeval.lp.datasets import load_dataset
    from kgeval.lp.ranks import ranks_frame
    from kgeval.lp.ranking import rank_lp

    targets = [f"results/byo/ranks/nations/{m}/0/test.parquet" for m in ("mine", "theirs")]
    proc = snakemake(workdir, *targets, "--cores", "1", "--configfile", CONFIG)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = load_dataset("nations", {"source": "pykeen", "name": "Nations"})
    model = torch.load(workdir / EXAMPLE_DIR / CHECKPOINT_NAME / "trained_model.pkl", weights_only=False).eval()
    with torch.no_grad():
        results = rank_lp(model, data.testing.mapped_triples, filter_triples=data.all_mapped_triples())
    pd.testing.assert_frame_equal(pd.read_parquet(workdir / targets[0]), ranks_frame(data, data.testing.mapped_triples,
                                                                                         results))
    theirs = pd.read_parquet(workdir / targets[1])
    given = pd.read_csv(workdir / EXAMPLE_DIR / RANKS_NAME, sep="\t").query("split == 'test'")
    merged = theirs.merge(given, on=["head", "relation", "tail", "side"], suffixes=("", "_given"))
    assert len(merged) == len(theirs) == len(given)
    assert (merged["rank_optimistic"] == merged["rank_optimistic_given"]).all()
