"""Trustworthy reruns and extension (issue #18): declared inputs, one results folder per config, small configs.
The config errors that name the key before any job runs are in tests/test_config_errors.py (apart, so that the two
files run on two pytest-xdist workers)."""

from __future__ import annotations

import hashlib

import pytest

from example_workflow import snakemake, workdir  # noqa: F401  (workdir: a fixture)


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


@pytest.mark.slow
def test_one_dataset_one_model_example_runs_end_to_end(workdir):
    proc = snakemake(workdir, "--cores", "2", "--configfile", "config/example.yaml")
    assert "kgeval: skipping S4" in proc.stderr
    results = workdir / "results" / "example"
    for path in ("tables/metrics.tsv", "s1/ranks/tables/rank_types.tsv", "s5/tables/table1_timing.tsv"):
        assert (results / path).is_file(), path
    assert not (results / "s4").exists()
    assert not (workdir / "results" / "tables").exists()
