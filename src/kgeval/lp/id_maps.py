"""The id-to-label maps of a PyKEEN model trained elsewhere, and its renumbering onto the dataset's ids.

A checkpoint's entity and relation ids mean labels only through the maps it was trained with. kgeval reads them from

- ``training_triples/`` beside ``trained_model.pkl`` (what ``PipelineResult.save_to_directory()`` writes), or
- the entry's ``ids`` key: a folder holding PyKEEN's ``TriplesFactory`` files ``entity_to_id.tsv[.gz]`` and
  ``relation_to_id.tsv[.gz]`` (columns ``id, label``: what ``TriplesFactory.to_path_binary`` writes), or one TSV
  file with the columns ``kind, id, label`` (``kind``: ``entity`` or ``relation``), or the word ``dataset`` (the
  model's ids are the dataset's own, as kgeval and PyKEEN number the dataset's train file: the counts are checked).

A model without any of them is refused (:func:`model_labels`). Labels that are the dataset's in another order give a
permutation (:func:`label_permutation`), and :func:`renumber_model` moves the model's embedding rows so that id ``i``
means the dataset's entity (relation) ``i``: the model then ranks as if it had been trained on the dataset's ids.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import torch

__all__ = [
    "IDS_DATASET",
    "KINDS",
    "IdMapError",
    "read_label_folder",
    "read_label_table",
    "read_id_map",
    "model_labels",
    "label_permutation",
    "renumber_model",
]

#: the ``ids`` value saying the model's ids follow the dataset's own numbering
IDS_DATASET = "dataset"
#: the two kinds of ids a model has
KINDS: tuple[str, ...] = ("entity", "relation")
_FILE_NAMES = {kind: (f"{kind}_to_id.tsv.gz", f"{kind}_to_id.tsv") for kind in KINDS}


class IdMapError(ValueError):
    """An id map that cannot be read or does not fit the dataset; the message names the file and the fix."""


def _labels_by_id(frame: pd.DataFrame, where: str) -> list[str]:
    missing = [c for c in ("id", "label") if c not in frame.columns]
    if missing:
        raise IdMapError(f"{where}: missing column(s) {missing}; an id map has the columns id, label")
    ids = pd.to_numeric(frame["id"], errors="coerce")
    if ids.isna().any() or sorted(ids.astype(int).tolist()) != list(range(len(frame))):
        raise IdMapError(f"{where}: the ids are not 0 .. {len(frame) - 1}, each once; the file is damaged")
    return frame.assign(id=ids.astype(int)).sort_values("id", kind="stable")["label"].astype(str).tolist()


def _read_tsv(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    except (OSError, ValueError) as error:
        raise IdMapError(f"{path}: cannot be read ({type(error).__name__}: {error})") from None


def read_label_folder(folder: str | os.PathLike) -> dict[str, list[str]] | None:
    """The labels by id of a folder of ``TriplesFactory`` files, or ``None`` when it lacks them.

    :return: ``{"entity": [label of id 0, ...], "relation": [...]}``
    """
    folder = Path(folder)
    found = {kind: next((folder / n for n in names if (folder / n).is_file()), None)
             for kind, names in _FILE_NAMES.items()}
    if any(path is None for path in found.values()):
        return None
    return {kind: _labels_by_id(_read_tsv(path), str(path)) for kind, path in found.items()}


def read_label_table(path: str | os.PathLike) -> dict[str, list[str]]:
    """The labels by id of one TSV with the columns ``kind, id, label``."""
    frame = _read_tsv(Path(path))
    if "kind" not in frame.columns:
        raise IdMapError(f"{path}: no column kind; an id map file has the columns kind (entity or relation), id, "
                         "label")
    unknown = sorted(set(frame["kind"]) - set(KINDS))
    if unknown:
        raise IdMapError(f"{path}: kind {unknown[0]!r} is neither entity nor relation")
    return {kind: _labels_by_id(frame[frame["kind"] == kind], f"{path} ({kind} rows)") for kind in KINDS}


def read_id_map(path: str | os.PathLike) -> dict[str, list[str]]:
    """The labels by id of an ``ids`` entry: a folder of ``TriplesFactory`` files, or one ``kind, id, label`` TSV.

    :raises IdMapError: for a missing path, a folder without both files, or a damaged file
    """
    path = Path(path)
    if path.is_dir():
        labels = read_label_folder(path)
        if labels is None:
            raise IdMapError(
                f"{path}: holds no entity_to_id.tsv.gz and relation_to_id.tsv.gz; point ids at the folder that "
                "TriplesFactory.to_path_binary() wrote (e.g. the training_triples/ of save_to_directory())"
            )
        return labels
    if not path.is_file():
        raise IdMapError(f"{path} does not exist (relative paths are relative to the working directory "
                         f"{os.getcwd()}); fix ids in the config")
    return read_label_table(path)


def model_labels(
    saved: Mapping[str, list[str]] | None, ids: str, model_file: str
) -> tuple[dict[str, list[str]] | None, str]:
    """Which labels a checkpoint's ids carry, and which check that allows.

    :param saved: the labels saved beside the model (``training_triples/``), or ``None``
    :param ids: the entry's ``ids`` (``""``, ``dataset``, or the path of an id map)
    :param model_file: the model file, for messages
    :return: the labels by id (``None``: the dataset's own numbering), and a sentence naming the check
    :raises IdMapError: for a model without labels whose entry gives no ``ids``
    """
    if ids and ids != IDS_DATASET:
        return read_id_map(ids), f"ids mapped to the dataset's by label through the id map {ids}"
    if saved is not None:
        return dict(saved), "ids mapped to the dataset's by label through the saved training_triples/"
    if ids == IDS_DATASET:
        return None, "ids taken as the dataset's own (ids: dataset): the entity and relation counts checked"
    raise IdMapError(
        f"{model_file}: the model has no saved labels (a torch.save file, or a folder without training_triples/), "
        "so nothing says which entity each id means; a model numbered otherwise would be evaluated silently wrong. "
        "Add to its config entry ids: <the folder of the TriplesFactory it was trained with (entity_to_id.tsv.gz, "
        "relation_to_id.tsv.gz), or a TSV with columns kind, id, label>, or ids: dataset when it was trained on the "
        "dataset's own train file (ids in sorted label order); or save it with result.save_to_directory(folder)"
    )


def label_permutation(labels: Sequence[str], expected: Sequence[str], kind: str, where: str) -> np.ndarray | None:
    """For each dataset id, the model id carrying the same label (``None`` when the two numberings agree).

    :param labels: the model's labels by id
    :param expected: the dataset's labels by id
    :param kind: ``entity`` or ``relation``, for messages
    :raises IdMapError: naming a label of one side that the other lacks
    """
    if list(labels) == list(expected):
        return None
    position = {label: index for index, label in enumerate(labels)}
    if len(position) != len(labels):
        raise IdMapError(f"{where}: a {kind} label occurs twice in the id map; the file is damaged")
    absent = [label for label in expected if label not in position]
    extra = sorted(set(labels) - set(expected))
    if absent or extra:
        what = (f"the dataset's {kind} {absent[0]!r} has no id in the model's map" if absent
                else f"the model's {kind} {extra[0]!r} is not in the dataset")
        raise IdMapError(
            f"{where}: {what} ({len(absent)} missing, {len(extra)} extra); the model was trained on other triples. "
            "Point the entry's dataset at the dataset it was trained on, or ids at the map it was trained with"
        )
    return np.asarray([position[label] for label in expected], dtype=np.int64)


def _relation_rows(permutation: np.ndarray, max_id: int, num_real: int, where: str) -> np.ndarray:
    """The permutation of a relation representation's rows: inverse relations (PyKEEN's ``2 r + 1``) follow ``r``."""
    if max_id == num_real:
        return permutation
    if max_id == 2 * num_real:
        rows = np.empty(max_id, dtype=np.int64)
        rows[0::2], rows[1::2] = 2 * permutation, 2 * permutation + 1
        return rows
    raise IdMapError(f"{where}: a relation representation has {max_id} rows for {num_real} relations; kgeval cannot "
                     "renumber it (save the model trained on the dataset's ids)")


def _permute_rows(representations: torch.nn.ModuleList, rows: np.ndarray | None, kind: str, where: str,
                  num_real: int | None = None) -> None:
    from pykeen.nn.representation import Embedding

    for representation in representations:
        if not isinstance(representation, Embedding):
            raise IdMapError(
                f"{where}: the model's {kind} representation is a {type(representation).__name__}, which kgeval "
                "renumbers only as a plain Embedding; save the model trained on the dataset's ids (ids: dataset)"
            )
        order = rows if num_real is None else _relation_rows(rows, representation.max_id, num_real, where)
        weight = representation._embeddings.weight
        with torch.no_grad():
            weight.copy_(weight[torch.as_tensor(order, device=weight.device)].clone())


def renumber_model(model: torch.nn.Module, permutations: Mapping[str, np.ndarray | None], where: str) -> None:
    """Move a PyKEEN model's embedding rows in place so that id ``i`` means the dataset's entity (relation) ``i``.

    :param permutations: kind -> :func:`label_permutation` (``None``: that kind stays as it is)
    :raises IdMapError: for a representation other than a plain embedding
    """
    if permutations.get("entity") is not None:
        _permute_rows(model.entity_representations, permutations["entity"], "entity", where)
    if permutations.get("relation") is not None:
        _permute_rows(model.relation_representations, permutations["relation"], "relation", where,
                      num_real=int(model.num_real_relations))
