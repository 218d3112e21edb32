"""A PyKEEN model trained elsewhere (``source: checkpoint``), checked against its dataset and filed like a trained one.

The path is either the folder :meth:`pykeen.pipeline.PipelineResult.save_to_directory` writes (``trained_model.pkl``,
the model saved by :func:`torch.save`, and ``training_triples/`` with the label-to-id maps when the training triples
were saved) or a file written by ``torch.save(model)``. Ids must mean the same entities and relations as in the
dataset kgeval loads: the model's entity and relation counts must equal the dataset's, and its labels by id (saved in
``training_triples/``, or named by the entry's ``ids``: :mod:`kgeval.lp.id_maps`) must be the dataset's labels; in
another order, the model's embedding rows are renumbered to the dataset's ids. A model without labels is refused
unless its entry says ``ids: dataset``. The checked model is written to
``results/models/{dataset}/{model}/{seed}/model.pt``, where the ranks step, S1's permutations, S4 and S5 read a
trained model.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from kgeval.io import atomic_path, write_json
from kgeval.lp.datasets import LPData, load_dataset
from kgeval.lp.id_maps import (
    IDS_DATASET,
    KINDS,
    IdMapError,
    label_permutation,
    model_labels,
    read_label_folder,
    renumber_model,
)
from kgeval.lp.sources import CHECKPOINT_MODEL_FILE, TRAINING_TRIPLES_DIR

__all__ = [
    "CheckpointError",
    "load_checkpoint",
    "checked_checkpoint",
    "saved_labels",
    "check_against_dataset",
    "import_checkpoint",
]

logger = logging.getLogger(__name__)

#: the plural of each kind of id, for messages
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
    if not Path(path).is_dir():
        return None
    try:
        return read_label_folder(Path(path) / TRAINING_TRIPLES_DIR)
    except IdMapError as error:
        raise CheckpointError(str(error)) from None


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
    """The model's ids must mean the dataset's entities and relations; renumber its rows where the labels say so.

    :param model: the loaded PyKEEN model (renumbered in place when its labels are the dataset's in another order)
    :param labels: its labels by id (saved, or from the entry's ``ids``), or ``None`` (the dataset's own numbering:
        only the counts are compared)
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
        return
    expected = _dataset_labels(data)
    try:
        for kind in KINDS:
            if len(labels[kind]) != counts[kind][0]:
                raise IdMapError(f"{where}: the id map has {len(labels[kind])} {_PLURAL[kind]} but the model "
                                 f"{counts[kind][0]}; it is the map of another model")
        permutations = {kind: label_permutation(labels[kind], expected[kind], kind, where) for kind in KINDS}
        renumber_model(model, permutations, where)
    except IdMapError as error:
        raise CheckpointError(str(error)) from None
    for kind, permutation in permutations.items():
        if permutation is not None:
            logger.info("%s: renumbered the model's %s ids to dataset %r's by label", where, kind, data.name)


def checked_checkpoint(
    path: str | os.PathLike, data: LPData, expected_class: str | None = None, ids: str = ""
) -> tuple[torch.nn.Module, str]:
    """:func:`load_checkpoint`, and a sentence naming the check its ids got (for the console and ``source.json``).

    :param ids: the entry's ``ids`` (``""``: the labels saved beside the model, which must then exist; ``dataset``;
        or the path of an id map: :mod:`kgeval.lp.id_maps`)
    """
    model = _load_model(path, expected_class)
    try:
        labels, check = model_labels(saved_labels(path), ids, str(_model_file(path)))
    except IdMapError as error:
        raise CheckpointError(str(error)) from None
    check_against_dataset(model, labels, data, str(path))
    model.eval()
    return model, check


def load_checkpoint(
    path: str | os.PathLike, data: LPData, expected_class: str | None = None, ids: str = ""
) -> torch.nn.Module:
    """Load a saved PyKEEN model on the CPU, in evaluation mode, after checking it against its dataset (and
    renumbering its ids to the dataset's when its labels say so).

    :param path: the folder ``save_to_directory()`` wrote, or a ``torch.save(model)`` file
    :param data: the dataset it was trained on
    :param expected_class: the PyKEEN class the config names for it (``None``: any)
    :param ids: the entry's ``ids`` (see :func:`checked_checkpoint`)
    :raises CheckpointError: a file that is not a PyKEEN model, another class, no labels and no ``ids``, or ids that
        do not fit the dataset
    """
    return checked_checkpoint(path, data, expected_class, ids)[0]


def _load_model(path: str | os.PathLike, expected_class: str | None) -> torch.nn.Module:
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
    model, check = checked_checkpoint(spec["path"], data, spec["model"] or None, spec["ids"])
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
            "labels_checked": spec["ids"] != IDS_DATASET,
            "ids": spec["ids"],
            "ids_check": check,
        },
        info_out,
    )
    logger.info("imported %s (%s) for dataset %s; %s", spec["path"], type(model).__name__, spec["dataset"], check)
    return model
