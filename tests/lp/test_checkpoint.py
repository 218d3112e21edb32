"""kgeval.lp.checkpoint: a model trained and saved by PyKEEN's own ``pipeline()``, read through a config entry
(``source: checkpoint``), ranks exactly as the same model ranked in-process; a checkpoint that does not fit its
dataset fails naming the first mismatch and the fix."""

from __future__ import annotations

import gzip
import json

import pandas as pd
import pytest
import torch

from kgeval.config import validate_config
from kgeval.lp.byo_example import train_elsewhere
from kgeval.lp.checkpoint import CheckpointError, import_checkpoint, load_checkpoint, saved_labels
from kgeval.lp.datasets import load_dataset
from kgeval.lp.ranks import TrainedModel, compute_ranks, rank_triples

NATIONS = {"source": "pykeen", "name": "Nations"}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A TransE trained for one epoch by pipeline() and saved both ways: save_to_directory() and torch.save."""
    folder = tmp_path_factory.mktemp("elsewhere")
    result = train_elsewhere("TransE", num_epochs=1)
    result.save_to_directory(folder / "saved")
    torch.save(result.model, folder / "model.pt")
    return result, folder


@pytest.fixture(scope="module")
def nations():
    return load_dataset("nations", NATIONS)


def _config(path, **extra) -> dict:
    config = {"datasets": {"nations": dict(NATIONS)},
              "models": {"mine": {"source": "checkpoint", "path": str(path), "dataset": "nations", **extra}}}
    return validate_config(config)


@pytest.mark.parametrize("saved", ["saved", "model.pt"])
def test_checkpoint_ranks_equal_in_process_ranks(tmp_path, trained, nations, saved):
    """Through the config entry and the functions the rules call (import_checkpoint, then compute_ranks)."""
    result, folder = trained
    config = _config(folder / saved, **({} if saved == "saved" else {"ids": "dataset"}))
    entry = config["models"]["mine"]
    import_checkpoint(entry, config["datasets"]["nations"], None, str(tmp_path / "model.pt"), str(tmp_path / "s.json"))
    splits = ["valid", "test"]
    tables = compute_ranks(
        TrainedModel(str(tmp_path / "model.pt"), "nations", config["datasets"]["nations"], None), splits,
        [str(tmp_path / f"{s}.parquet") for s in splits], str(tmp_path / "topk.parquet"), str(tmp_path / "t.json"),
    )
    model = result.model.cpu().eval()
    for split in splits:
        direct, _, _ = rank_triples(nations, model, nations.factory(split).mapped_triples, str(tmp_path / "direct.parquet"),
                                    filter_triples=nations.all_mapped_triples())
        pd.testing.assert_frame_equal(tables[split], direct)
    info = json.loads((tmp_path / "s.json").read_text())
    assert info["model_class"] == "TransE" and info["labels_checked"] == (saved == "saved")


def test_saved_labels_are_the_datasets(trained, nations):
    labels = saved_labels(trained[1] / "saved")
    assert labels["entity"] == sorted(nations.training.entity_to_id)
    assert saved_labels(trained[1] / "model.pt") is None


def test_model_trained_on_another_dataset_fails(trained):
    kinships = load_dataset("kinships", {"source": "pykeen", "name": "Kinships"})
    with pytest.raises(CheckpointError, match=r"saved: the model has 14 entity ids but dataset 'kinships' has 104; it "
                                              r"was trained on other triples\. Point the entry's dataset at"):
        load_checkpoint(trained[1] / "saved", kinships)


def test_other_label_order_is_renumbered_and_unknown_labels_fail(tmp_path, trained, nations):
    """Two entity labels swapped in the saved maps: the model's rows for them swap; a label the dataset lacks fails."""
    import shutil

    folder = tmp_path / "swapped"
    shutil.copytree(trained[1] / "saved", folder)
    path = folder / "training_triples" / "entity_to_id.tsv.gz"
    frame = pd.read_csv(path, sep="\t")
    frame.loc[[2, 3], "label"] = frame.loc[[3, 2], "label"].to_numpy()
    with gzip.open(path, "wt") as handle:
        frame.to_csv(handle, sep="\t", index=False)
    original = trained[0].model.entity_representations[0]._embeddings.weight.detach()
    renumbered = load_checkpoint(folder, nations).entity_representations[0]._embeddings.weight.detach()
    assert torch.equal(renumbered[[2, 3]], original[[3, 2]]) and torch.equal(renumbered[4:], original[4:])
    frame.loc[2, "label"] = "atlantis"
    with gzip.open(path, "wt") as handle:
        frame.to_csv(handle, sep="\t", index=False)
    with pytest.raises(CheckpointError, match=r"the dataset's entity '.*' has no id in the model's map .*the model "
                                              r"was trained on other triples"):
        load_checkpoint(folder, nations)


def test_other_class_and_non_models_fail(tmp_path, trained, nations):
    with pytest.raises(CheckpointError, match=r"holds a TransE, but the config names model 'DistMult'; set model: TransE"):
        load_checkpoint(trained[1] / "saved", nations, expected_class="DistMult")
    load_checkpoint(trained[1] / "saved", nations, expected_class="transe")  # PyKEEN's spellings
    torch.save({"state": 1}, tmp_path / "dict.pt")
    with pytest.raises(CheckpointError, match=r"dict\.pt: holds a dict, not a PyKEEN model; save the model itself"):
        load_checkpoint(tmp_path / "dict.pt", nations)
    (tmp_path / "text.pt").write_text("not a pickle")
    with pytest.raises(CheckpointError, match=r"text\.pt: cannot be read by torch\.load"):
        load_checkpoint(tmp_path / "text.pt", nations)
