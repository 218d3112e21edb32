"""kgeval.lp.sources: the runs each model source has and the files it reads."""

from __future__ import annotations

from conftest import REPO
from kgeval.config import validate_config
from kgeval.lp.sources import (
    CHECKPOINT_MODEL_FILE,
    model_runs,
    models_of_source,
    run_seed,
    scored_models,
    source_files,
)

TINY = {"source": "files", **{s: str(REPO / "tests" / "data" / "tiny" / f"{s}.txt") for s in ("train", "valid", "test")}}


def _config(tmp_path, **models) -> dict:
    config = {
        "datasets": {"nations": {"source": "pykeen", "name": "Nations"}, "tiny": dict(TINY)},
        "models": {"transe": {"model": "TransE"}, **models},
        "seeds": [0, 1],
    }
    return validate_config(config, check_pykeen=False)


def test_runs_of_each_source(tmp_path):
    config = _config(
        tmp_path,
        mine={"source": "checkpoint", "path": "ck", "dataset": "tiny"},
        theirs={"source": "ranks", "path": "r.tsv", "dataset": "nations", "seed": 1},
    )
    assert model_runs(config) == [
        ("nations", "transe", "0"), ("nations", "transe", "1"), ("nations", "theirs", "1"),
        ("tiny", "transe", "0"), ("tiny", "transe", "1"), ("tiny", "mine", "0"),
    ]
    assert model_runs(config, datasets=["nations"], seeds=[0]) == [("nations", "transe", "0")]
    assert model_runs(config, models=["mine"], seeds=["0"]) == [("tiny", "mine", "0")]
    assert model_runs(config, models=[]) == []
    assert run_seed(config, "mine") == 0 and run_seed(config, "theirs") == 1
    assert scored_models(config) == (["transe", "mine"], ["theirs"])
    assert models_of_source(config, ["checkpoint", "ranks"]) == ["mine", "theirs"]


def test_source_files(tmp_path):
    folder = tmp_path / "saved"
    (folder / "training_triples").mkdir(parents=True)
    (folder / "training_triples" / "base.pth").write_text("x")
    config = _config(
        tmp_path,
        mine={"source": "checkpoint", "path": str(folder), "dataset": "tiny"},
        theirs={"source": "ranks", "path": str(tmp_path / "r.tsv"), "dataset": "tiny"},
    )
    assert source_files(config, "mine") == [str(folder / CHECKPOINT_MODEL_FILE), str(folder / "training_triples" / "base.pth")]
    assert source_files(config, "theirs") == [str(tmp_path / "r.tsv")]
    assert source_files(config, "transe") == []
