"""A PyKEEN model trained elsewhere (``source: checkpoint``), checked against its dataset and filed like a trained one.

The path is either the folder :meth:`pykeen.pipeline.PipelineResult.save_to_directory` writes (``trained_model.pkl``,
the model saved by :func:`torch.save`, and ``training_triples/`` with the label-to-id maps when the training triples
were saved) or a file written by ``torch.save(model)``. Ids must mean the same entities and relations as in the
dataset kgeval loads: the model's entity and relation counts must equal the dataset's, and where the label maps were
saved every id must carry the same label (PyKEEN and kgeval both number labels in sorted order, so a model trained on
the same triples files matches). The checked model is written to ``results/models/{dataset}/{model}/{seed}/model.pt``,
where the ranks step, S1's permutations, S4 and S5 read a trained model.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from kgeval.io import atomic_path, write_json
from kgeval.lp.datasets import LPData, load_dataset
from kgeval.lp.sources import CHECKPOINT_MODEL_FILE, TRAINING_TRIPLES_DIR

__all__ = ["CheckpointError", "load_checkpoint", "saved_labels", "check_against_dataset", "import_checkpoint"]

logger = logging.getLogger(__name__)

#: the label-map files of a saved TriplesFactory (``to_path_binary``), by kind
_LABEL_FILES = {"entity": "entity_to_id.tsv.gz", "relation": "relation_to_id.tsv.gz"}
_PLURAL = {"entity": "entities", "relation": "relations"}


class CheckpointError(ValueError):
    """A checkpoint cannot be read, or does not fit its dataset; the message names the file and the fix."""


def _model_file(path: str | os.PathLike) -> Path:
    path = Path(path)
    return path / CHECKPOINT_MODEL_FILE if path.is_dir() else path


def saved_labels(path: str | os.PathLike) -> dict[str, list[str]] | None:
    """The entity and relation labels by id saved beside a model (``training_triples/``), or ``None`` when absent.

    :param path: the checkpoint folder (a file has no saved labels)
    :return: ``{"entity": [label of id 0, ...], "relation": [...]}``
    """
    folder = Path(path) / TRAINING_TRIPLES_DIR
    if not Path(path).is_dir() or not all((folder / name).is_file() for name in _LABEL_FILES.values()):
        return None
    labels = {}
    for kind, name in _LABEL_FILES.items():
        frame = pd.read_csv(folder / name, sep="\t", dtype={"label": str}, keep_default_na=False)
        frame = frame.sort_values("id", kind="stable")
        if frame["id"].tolist() != list(range(len(frame))):
            raise CheckpointError(f"{folder / name}: the ids are not 0 .. {len(frame) - 1}; the file is damaged")
        labels[kind] = frame["label"].tolist()
    return labels


def _dataset_labels(data: LPData) -> dict[str, list[str]]:
    out = {}
    for kind, mapping in (("entity", data.training.entity_to_id), ("relation", data.training.relation_to_id)):
        labels = [""] * len(mapping)
        for label, index in mapping.items():
            labels[index] = label
        out[kind] = labels
    return out


def check_against_dataset(
    model: torch.nn.Module, labels: Mapping[str, list[str]] | None, data: LPData, where: str
) -> None:
    """The model's ids must mean the dataset's entities and relations.

    :param model: the loaded PyKEEN model
    :param labels: its saved labels by id (:func:`saved_labels`), or ``None`` (then only the counts are compared)
    :param data: the dataset kgeval loads for it
    :param where: the checkpoint's path, for messages
    :raises CheckpointError: naming the first mismatch and the fix
    """
    counts = {"entity": (int(model.num_entities), data.num_entities),
              "relation": (int(model.num_real_relations), data.num_relations)}
    for kind, (ours, theirs) in counts.items():
        if ours != theirs:
            raise CheckpointError(
                f"{where}: the model has {ours} {kind} ids but dataset {data.name!r} has {theirs}; it was trained on "
                "other triples. Point the entry's dataset at the dataset it was trained on (the same train file: "
                "ids follow the training triples' labels)"
            )
    if labels is None:
        logger.info("%s: no training_triples/ saved beside the model; checked the entity and relation counts only",
                    where)
        return
    expected = _dataset_labels(data)
    for kind in ("entity", "relation"):
        for index, (ours, theirs) in enumerate(zip(labels[kind], expected[kind], strict=True)):
            if ours != theirs:
                raise CheckpointError(
                    f"{where}: {kind} id {index} is {ours!r} in the model's {TRAINING_TRIPLES_DIR}/ but {theirs!r} "
                    f"in dataset {data.name!r}; the model numbers {_PLURAL[kind]} differently. Train it on the "
                    "dataset's own train file (PyKEEN and kgeval number labels in sorted order), or point dataset "
                    "at the one it was trained on"
                )


def load_checkpoint(path: str | os.PathLike, data: LPData, expected_class: str | None = None) -> torch.nn.Module:
    """Load a saved PyKEEN model on the CPU, in evaluation mode, after checking it against its dataset.

    :param path: the folder ``save_to_directory()`` wrote, or a ``torch.save(model)`` file
    :param data: the dataset it was trained on
    :param expected_class: the PyKEEN class the config names for it (``None``: any)
    :raises CheckpointError: a file that is not a PyKEEN model, another class, or ids that do not fit the dataset
    """
    from pykeen.models import Model, model_resolver

    model_file = _model_file(path)
    try:
        model = torch.load(model_file, map_location="cpu", weights_only=False)
    except Exception as error:  # noqa: BLE001 - any unpickling failure means the same to the user
        raise CheckpointError(
            f"{model_file}: cannot be read by torch.load ({type(error).__name__}: {error}); save the model with "
            "torch.save(result.model, path) or result.save_to_directory(folder)"
        ) from None
    if not isinstance(model, Model):
        raise CheckpointError(
            f"{model_file}: holds a {type(model).__name__}, not a PyKEEN model; save the model itself with "
            "torch.save(result.model, path), or the whole result with result.save_to_directory(folder)"
        )
    if expected_class and model_resolver.normalize_cls(type(model)) != model_resolver.normalize(expected_class):
        raise CheckpointError(
            f"{model_file}: holds a {type(model).__name__}, but the config names model {expected_class!r}; set "
            f"model: {type(model).__name__} (or leave model out)"
        )
    check_against_dataset(model, saved_labels(path), data, str(path))
    model.eval()
    return model


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def import_checkpoint(spec: Mapping[str, Any], dataset_spec: Mapping[str, Any], data_dir: str | None,
                      model_out: str, info_out: str) -> torch.nn.Module:
    """Check a checkpoint against its dataset and file it as ``model.pt`` (as the training step writes it).

    :param spec: the model's config entry (``path``, ``dataset``, ``model``)
    :param dataset_spec: the config entry of its dataset
    :param data_dir: the config's ``data_dir``
    :param model_out: where the model goes (``results/models/{dataset}/{model}/{seed}/model.pt``)
    :param info_out: a JSON record of what was imported (path, class, counts, the model file's SHA-256)
    :return: the model
    """
    data = load_dataset(spec["dataset"], dict(dataset_spec), data_dir)
    model = load_checkpoint(spec["path"], data, expected_class=spec["model"] or None)
    with atomic_path(model_out) as tmp:
        torch.save(model.cpu(), tmp)
    write_json(
        {
            "source": "checkpoint",
            "path": str(spec["path"]),
            "model_file": str(_model_file(spec["path"])),
            "sha256": _sha256(_model_file(spec["path"])),
            "model_class": type(model).__name__,
            "dataset": spec["dataset"],
            "num_entities": int(model.num_entities),
            "num_relations": int(model.num_real_relations),
            "labels_checked": saved_labels(spec["path"]) is not None,
        },
        info_out,
    )
    logger.info("imported %s (%s) for dataset %s", spec["path"], type(model).__name__, spec["dataset"])
    return model
