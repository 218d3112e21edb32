"""A cache of loaded link-prediction datasets: the mapped splits and their vocabularies, keyed by the files' bytes.

Loading FB15k-237 from its three text files means reading 310,116 lines, then PyKEEN's mapping of string labels to ids,
and the real tier loads it in 29 jobs (every training, ranking, calibration and S1 or S4 job that needs it) and WN18RR
in 21. :func:`cached_splits` stores what :func:`kgeval.lp.datasets.load_dataset` built the first time (the three splits'
id triples, the entity and relation labels in id order, the dropped counts) in one ``.npz`` file, and later loads
rebuild the same :class:`~pykeen.triples.TriplesFactory` objects from it: the same id triples, the same label-to-id
maps, so every number computed from them is the same.

The key is the SHA-256 of the cache's format version, the source of the loading code (this module and
:mod:`kgeval.lp.datasets`), PyKEEN's version, the dataset's config key and the bytes of each split file: editing a
file, the loading code or PyKEEN's version misses the cache. Where: ``$KGEVAL_CACHE_DIR/datasets``, else
``$XDG_CACHE_HOME/kgeval/datasets``, else ``~/.cache/kgeval/datasets``; ``KGEVAL_CACHE_DIR=off`` turns it off. An
entry is written to a temporary file and renamed into place, so an interrupted job leaves none half-written; one that
cannot be read is ignored (and written again).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from pykeen.triples import TriplesFactory

__all__ = ["CACHE_ENV", "Splits", "cache_dir", "cache_key", "cached_splits", "read_entry", "write_entry"]

#: the training, validation and test factories (sharing the training's maps) and the dropped triples per split
Splits = tuple[list["TriplesFactory"], dict[str, int]]

logger = logging.getLogger(__name__)

#: the environment variable naming the cache's folder (``off``: no cache)
CACHE_ENV = "KGEVAL_CACHE_DIR"

#: bump when the entry's layout changes
_FORMAT = 1

_SPLITS = ("train", "valid", "test")


def cache_dir() -> Path | None:
    """The folder of dataset entries, or ``None`` when ``KGEVAL_CACHE_DIR=off``."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None and chosen.strip().lower() == "off":
        return None
    if chosen:
        return Path(chosen).expanduser() / "datasets"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "kgeval" / "datasets"


def cache_key(name: str, paths: Sequence[str | os.PathLike], code: Sequence[str | os.PathLike] = ()) -> str:
    """The SHA-256 (hex) of the format, this module's and ``code``'s source, PyKEEN's version, ``name`` and each
    file's bytes."""
    import pykeen

    digest = hashlib.sha256(f"kgeval dataset cache {_FORMAT}\0{pykeen.get_version()}\0{name}\0".encode())
    for module in (__file__, *code):
        digest.update(Path(module).read_bytes())
    for path in paths:
        data = Path(path).read_bytes()
        digest.update(f"\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def _labels(mapping: dict[str, int], size: int) -> np.ndarray:
    """The labels of a label-to-id map in id order."""
    labels = np.empty(size, dtype=object)
    for label, index in mapping.items():
        labels[index] = label
    return labels.astype(str)


def write_entry(path: Path, splits: Splits) -> None:
    """Write ``splits`` to ``path`` (``.npz``) through a temporary file in the same folder, then rename it."""
    factories, dropped = splits
    training = factories[0]
    arrays = {f"{split}_triples": f.mapped_triples.numpy() for split, f in zip(_SPLITS, factories, strict=True)}
    arrays["entities"] = _labels(training.entity_to_id, training.num_entities)
    arrays["relations"] = _labels(training.relation_to_id, training.real_num_relations)
    arrays["dropped"] = np.array([dropped.get(split, 0) for split in _SPLITS], dtype=np.int64)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".npz")
    try:
        with os.fdopen(handle, "wb") as out:
            np.savez(out, **arrays)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_entry(path: Path) -> Splits:
    """The splits stored at ``path``: three factories sharing one entity and one relation map, as
    :func:`kgeval.lp.datasets.load_dataset` builds them."""
    import torch
    from pykeen.triples import TriplesFactory

    with np.load(path, allow_pickle=False) as stored:
        entity_to_id = {label: index for index, label in enumerate(stored["entities"].tolist())}
        relation_to_id = {label: index for index, label in enumerate(stored["relations"].tolist())}
        factories = [
            TriplesFactory(
                mapped_triples=torch.as_tensor(stored[f"{split}_triples"], dtype=torch.long),
                entity_to_id=entity_to_id,
                relation_to_id=relation_to_id,
                create_inverse_triples=False,
                metadata={},
            )
            for split in _SPLITS
        ]
        dropped = dict(zip(_SPLITS, (int(x) for x in stored["dropped"]), strict=True))
    return factories, dropped


def cached_splits(
    name: str, paths: Sequence[str | os.PathLike], build: Callable[[], Splits], code: Sequence[str | os.PathLike] = ()
) -> Splits:
    """``build()``'s splits, read from the cache when an entry for ``name``, these files' bytes and this code exists,
    else built and stored.

    :param name: the dataset's config key
    :param paths: the files ``build`` reads (all must exist: a missing one goes straight to ``build`` and its error)
    :param build: loads the splits from the files
    :param code: the source files of ``build``'s logic (:mod:`kgeval.lp.datasets`), part of the key
    """
    folder = cache_dir()
    if folder is None or not all(Path(p).is_file() for p in paths):
        return build()
    entry = folder / f"{name}-{cache_key(name, paths, code)[:32]}.npz"
    if entry.is_file():
        try:
            splits = read_entry(entry)
            logger.debug("%s: read from the dataset cache %s", name, entry)
            return splits
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
            logger.warning("%s: ignoring an unreadable dataset cache entry %s (%s); rebuilding it", name, entry, error)
    splits = build()
    try:
        write_entry(entry, splits)
    except OSError as error:
        logger.warning("%s: could not write the dataset cache entry %s (%s)", name, entry, error)
    return splits
