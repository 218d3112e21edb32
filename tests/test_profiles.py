"""The workflow-specific default profile: read by every plain `snakemake` call, scheduling settings only."""

from __future__ import annotations

from pathlib import Path

import yaml

from conftest import REPO, copy_workflow, run_snakemake

DEFAULT = REPO / "profiles" / "default" / "config.yaml"


def test_default_profile_holds_only_the_scheduler_timespan():
    from snakemake.settings.types import MaxJobsPerTimespan

    settings = yaml.safe_load(DEFAULT.read_text())
    assert set(settings) == {"max-jobs-per-timespan"}, "science goes to config/, resources to rules and profiles"
    limit = MaxJobsPerTimespan.parse_choice(settings["max-jobs-per-timespan"])
    assert limit.timespan == 10 and limit.max_jobs >= 100


def test_plain_snakemake_reads_the_default_profile(tmp_path: Path):
    workdir = copy_workflow(tmp_path / "workflow")
    proc = run_snakemake(
        workdir, "-n", "--cores", "1", "results/test/datasets/nations/summary.tsv", "--configfile", "config/test.yaml"
    )
    assert "workflow specific profile profiles/default" in proc.stdout + proc.stderr


def test_a_named_profile_replaces_the_default(tmp_path: Path):
    workdir = copy_workflow(tmp_path / "workflow")
    proc = run_snakemake(
        workdir, "-n", "--workflow-profile", "workflow/profiles/local", "results/test/datasets/nations/summary.tsv",
        "--configfile", "config/test.yaml",
    )
    output = proc.stdout + proc.stderr
    assert "workflow specific profile workflow/profiles/local" in output
    assert "profiles/default" not in output
