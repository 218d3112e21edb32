"""kgeval.lp.source_checks: a missing or unfit checkpoint or ranks file fails before any job, naming the config key,
the file (and line) and the fix."""

from __future__ import annotations

import pytest
import torch

from conftest import REPO
from kgeval.config import ConfigError, validate_config
from kgeval.lp.datasets import load_dataset
from kgeval.lp.source_checks import check_source_files

TINY = {"source": "files", **{s: str(REPO / "tests" / "data" / "tiny" / f"{s}.txt") for s in ("train", "valid", "test")}}


def _config(tmp_path, **models) -> dict:
    config = {"datasets": {"nations": {"source": "pykeen", "name": "Nations"}, "tiny": dict(TINY)},
              "models": {"transe": {"model": "TransE"}, **models}}
    return validate_config(config, check_pykeen=False)


def test_missing_files_fail_before_any_job(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no example inputs here
    (tmp_path / "empty").mkdir()
    config = _config(tmp_path, mine={"source": "checkpoint", "path": str(tmp_path / "empty"), "dataset": "tiny"})
    with pytest.raises(ConfigError, match=r"models\.mine\.path: folder .*empty has no trained_model\.pkl; point path"):
        check_source_files(config, deep=False)
    config = _config(tmp_path, theirs={"source": "ranks", "path": "nowhere.tsv", "dataset": "tiny"})
    with pytest.raises(ConfigError, match=r"models\.theirs\.path: nowhere\.tsv does not exist .*fix the path"):
        check_source_files(config, deep=False)
    config = _config(tmp_path, theirs={"source": "ranks", "path": "results/byo/inputs/distmult_ranks.tsv",
                                       "dataset": "tiny"})
    with pytest.raises(ConfigError, match=r"does not exist .*; build the example inputs of config/byo\.yaml first: "
                                          r"kgeval byo-example"):
        check_source_files(config, deep=False)


def test_deep_check_reads_the_files_and_names_the_key(tmp_path):
    """A checkpoint of another dataset, and a ranks file with an unknown label, fail with the key, file and line."""
    from pykeen.models import TransE

    data = load_dataset("tiny", TINY)
    torch.save(TransE(triples_factory=data.training, embedding_dim=4), tmp_path / "tiny.pt")
    config = _config(tmp_path, mine={"source": "checkpoint", "path": str(tmp_path / "tiny.pt"), "dataset": "nations",
                                          "ids": "dataset"})
    check_source_files(config, deep=False)  # the file exists
    with pytest.raises(ConfigError, match=r"models\.mine\.path: .*tiny\.pt: the model has \d+ entity ids but dataset "
                                          r"'nations' has 14"):
        check_source_files(config)
    config["models"]["mine"]["dataset"] = "tiny"
    check_source_files(config)
    (tmp_path / "r.tsv").write_text("head\trelation\ttail\tside\trank\nnobody\tr\tx\thead\t1\n")
    config = _config(tmp_path, theirs={"source": "ranks", "path": str(tmp_path / "r.tsv"), "dataset": "tiny"})
    with pytest.raises(ConfigError, match=r"models\.theirs\.path: .*r\.tsv, line 2: head 'nobody' is not an entity"):
        check_source_files(config)
