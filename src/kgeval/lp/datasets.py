"""Link-prediction datasets: PyKEEN's own (bundled or downloaded), local copies under ``data_dir``, or plain TSV files.

Every source ends in the same :class:`LPData`: three PyKEEN :class:`~pykeen.triples.TriplesFactory` objects that share
entity and relation ids (taken from the training split), plus how many validation/test triples were dropped because
an entity or relation does not occur in training (PyKEEN cannot score those).

Dataset specs come from the ``datasets`` section of the config:

- ``{source: pykeen, name: Nations}``: PyKEEN's dataset of that name. Nations, Kinships and UMLS ship inside PyKEEN's
  wheel; the others are downloaded by PyKEEN into its cache (``~/.data/pykeen``) on first use.
- ``{source: pykeen, name: FB15k237, local: fb15k237}``: the same, but when ``data_dir`` is set the three files are
  read from ``{data_dir}/fb15k237/{train,valid,test}.txt`` instead of downloading.
- ``{source: files, train: path, valid: path, test: path}``: your own tab-separated ``head<TAB>relation<TAB>tail``
  files (paths relative to the working directory, or absolute).
- ``{source: remote, train: URL, valid: URL, test: URL}``: three tab-separated files downloaded by PyKEEN's
  :class:`~pykeen.datasets.base.UnpackedRemoteDataset` into its cache on first use, for datasets PyKEEN has no class
  for (NELL-995); ``local`` works as for ``pykeen``.

Any entry may add ``resplit: {valid_fraction, test_fraction, seed}``: the splits are pooled and re-drawn by
:func:`kgeval.lp.resplit.resplit_triples` (paper 004's NELL-995, Sec. 6.1).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pykeen.triples import TriplesFactory

from kgeval.lp.resplit import ResplitError, resplit_from_spec

__all__ = [
    "SPLITS",
    "DatasetError",
    "LPData",
    "read_triples",
    "labeled_splits",
    "load_dataset",
    "source_files",
    "dataset_summary",
]

logger = logging.getLogger(__name__)

#: split names used in file names and configs, in order
SPLITS: tuple[str, ...] = ("train", "valid", "test")
LOCAL_FILE_NAMES: dict[str, str] = {"train": "train.txt", "valid": "valid.txt", "test": "test.txt"}


class DatasetError(ValueError):
    """A dataset could not be loaded; the message names the file, line or key and how to fix it."""


@dataclass
class LPData:
    """A link-prediction dataset with aligned ids.

    :param name: the config key of the dataset
    :param training: training triples; defines the entity and relation ids
    :param validation: validation triples, mapped to the training ids
    :param testing: test triples, mapped to the training ids
    :param num_dropped: per split, how many triples were dropped because of entities/relations unseen in training
    """

    name: str
    training: TriplesFactory
    validation: TriplesFactory
    testing: TriplesFactory
    num_dropped: dict[str, int] = field(default_factory=dict)

    @property
    def num_entities(self) -> int:
        """Number of entities (from the training split's vocabulary)."""
        return self.training.num_entities

    @property
    def num_relations(self) -> int:
        """Number of relations, without inverse relations."""
        return self.training.real_num_relations

    def factory(self, split: str) -> TriplesFactory:
        """Return the factory of a split (``train``, ``valid`` or ``test``)."""
        try:
            return {"train": self.training, "valid": self.validation, "test": self.testing}[split]
        except KeyError:
            raise DatasetError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}") from None

    def all_mapped_triples(self) -> list:
        """The id triples of all three splits (the filter set of the filtered setting)."""
        return [self.training.mapped_triples, self.validation.mapped_triples, self.testing.mapped_triples]

    def with_inverse_triples(self) -> LPData:
        """Return a copy whose training factory also holds inverse triples (needed by e.g. ConvE)."""
        if self.training.create_inverse_triples:
            return self
        training = TriplesFactory(
            mapped_triples=self.training.mapped_triples,
            entity_to_id=self.training.entity_to_id,
            relation_to_id=self.training.relation_to_id,
            create_inverse_triples=True,
        )
        return LPData(self.name, training, self.validation, self.testing, dict(self.num_dropped))


def read_triples(path: str | os.PathLike) -> np.ndarray:
    """Read a ``head<TAB>relation<TAB>tail`` file into a string array.

    Empty lines are skipped. Any other line that does not hold exactly three non-empty tab-separated fields raises a
    :class:`DatasetError` naming the file and the (1-based) line.

    :param path: the file
    :returns: shape: (n, 3), dtype str
    """
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"triples file not found: {path} (check the dataset's paths in the config, or data_dir)")
    rows: list[tuple[str, str, str]] = []
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 3 or not all(p.strip() for p in parts):
                raise DatasetError(
                    f"{path}, line {line_no}: expected 3 non-empty tab-separated fields (head, relation, tail), "
                    f"found {len(parts)}: {line[:120]!r}. Fix or remove that line."
                )
            rows.append((parts[0].strip(), parts[1].strip(), parts[2].strip()))
    if not rows:
        raise DatasetError(f"{path}: no triples found (the file is empty)")
    return np.asarray(rows, dtype=str)


def _from_labeled(name: str, labeled: dict[str, np.ndarray]) -> LPData:
    """Build aligned factories from labeled triples; drop and count evaluation triples unseen in training."""
    training = TriplesFactory.from_labeled_triples(labeled["train"])
    entities = set(training.entity_to_id)
    relations = set(training.relation_to_id)
    factories: dict[str, TriplesFactory] = {}
    dropped: dict[str, int] = {"train": 0}
    for split in ("valid", "test"):
        triples = labeled[split]
        keep = (
            np.isin(triples[:, 0], list(entities))
            & np.isin(triples[:, 2], list(entities))
            & np.isin(triples[:, 1], list(relations))
        )
        dropped[split] = int((~keep).sum())
        if not keep.any():
            raise DatasetError(f"dataset {name!r}: no {split} triple uses only entities/relations seen in training")
        factories[split] = TriplesFactory.from_labeled_triples(
            triples[keep], entity_to_id=training.entity_to_id, relation_to_id=training.relation_to_id
        )
    return LPData(name, training, factories["valid"], factories["test"], dropped)


def _resolve_path(value: str, base: Path | None) -> Path:
    path = Path(value).expanduser()
    if not path.is_absolute() and base is not None:
        path = base / path
    return path


def _source(spec: dict[str, Any]) -> str:
    """The entry's ``source`` (the schema's default where a partial entry, as tests pass, has none)."""
    from kgeval.config import schema_default

    return spec.get("source", schema_default("datasets.*.source"))


def source_files(key: str, spec: dict[str, Any], data_dir: str | os.PathLike | None = None) -> list[tuple[str, str]]:
    """The local files that :func:`load_dataset` reads for this entry, each with the config key that names it.

    ``[("datasets.<key>.train", path), ...]`` for ``source: files``; the three files under ``{data_dir}/<local>``
    (key ``datasets.<key>.local``) for a PyKEEN dataset with ``local`` when ``data_dir`` is set; empty when PyKEEN
    ships or downloads the dataset. The workflow declares these as rule inputs, so editing one reruns what depends
    on it, and checks before any job that they exist.
    """
    if _source(spec) == "files":
        return [(f"datasets.{key}.{s}", str(_resolve_path(spec[s], None))) for s in SPLITS if spec.get(s)]
    local = spec.get("local")
    if local and data_dir is not None:
        return [(f"datasets.{key}.local", str(Path(data_dir) / local / LOCAL_FILE_NAMES[s])) for s in SPLITS]
    return []


def labeled_splits(key: str, spec: dict[str, Any], data_dir: str | os.PathLike | None = None) -> dict[str, np.ndarray]:
    """The labelled triples of the three splits as shipped (or re-split), before any triple is dropped.

    For dataset statistics that count every shipped triple (e.g. the 20,466 test triples of FB15k-237, 28 of which
    use an entity unseen in training). A packed PyKEEN dataset whose files are not on disk gives PyKEEN's factories'
    triples, i.e. after PyKEEN's own drops. With ``resplit`` the splits of :func:`kgeval.lp.resplit.resplit_triples`.

    :return: split -> shape: (n, 3) string array ``head, relation, tail``
    :raises DatasetError: as :func:`load_dataset`
    """
    labeled = _shipped_splits(key, spec, data_dir)
    try:
        return resplit_from_spec(labeled, spec.get("resplit"))
    except ResplitError as error:
        raise DatasetError(f"datasets.{key}.resplit: {error}") from None


def _remote_dataset(key: str, spec: dict[str, Any]):
    """PyKEEN's downloader for three remote files (cached under PyKEEN's home)."""
    from pykeen.datasets.base import UnpackedRemoteDataset

    missing = [s for s in SPLITS if not spec.get(s)]
    if missing:
        raise DatasetError(f"datasets.{key}: source 'remote' needs URLs train, valid, test; missing {', '.join(missing)}")
    import pystow

    cache = pystow.join("pykeen", "datasets", "kgeval_remote", key)
    return UnpackedRemoteDataset(
        training_url=spec["train"], testing_url=spec["test"], validation_url=spec["valid"], cache_root=str(cache)
    )


def _pykeen_dataset_class(key: str, spec: dict[str, Any]):
    """PyKEEN's dataset class named by the entry's ``name`` (``source: pykeen``).

    :raises DatasetError: when the entry has no ``name`` or PyKEEN has no dataset of that name (listing the known ones)
    """
    from pykeen.datasets import dataset_resolver

    name = spec.get("name")
    if not name:
        raise DatasetError(f"datasets.{key}: source 'pykeen' needs a 'name' (e.g. Nations)")
    try:
        return dataset_resolver.lookup(name)
    except (KeyError, ValueError):
        known = ", ".join(sorted(dataset_resolver.lookup_dict))
        raise DatasetError(f"datasets.{key}.name: PyKEEN has no dataset {name!r}; known: {known}") from None


def _check_ogb(key: str, spec: dict[str, Any], cls: type) -> None:
    """PyKEEN loads the Open Graph Benchmark's datasets (OGBWikiKG2, OGBBioKG) through the ``ogb`` package, which
    kgeval does not install: say so before PyKEEN fails on the import.

    :raises DatasetError: naming the entry and the fix when ``ogb`` is missing
    """
    import importlib.util

    from pykeen.datasets.ogb import OGBLoader

    if issubclass(cls, OGBLoader) and importlib.util.find_spec("ogb") is None:
        raise DatasetError(
            f"datasets.{key}.name: PyKEEN loads {spec['name']} through the ogb package, which is not installed; "
            "pip install ogb (it downloads the dataset from the Open Graph Benchmark on first use)"
        )


def _shipped_splits(key: str, spec: dict[str, Any], data_dir: str | os.PathLike | None = None) -> dict[str, np.ndarray]:
    """The labelled triples of the three splits as shipped (no resplit)."""
    source = _source(spec)
    if source == "files":
        missing = [s for s in SPLITS if s not in spec]
        if missing:
            raise DatasetError(
                f"datasets.{key}: source 'files' needs keys train, valid, test; missing {', '.join(missing)}"
            )
        return {s: read_triples(_resolve_path(spec[s], None)) for s in SPLITS}
    if source not in ("pykeen", "remote"):
        raise DatasetError(f"datasets.{key}.source: unknown source {source!r}; use 'pykeen', 'remote' or 'files'")
    local = spec.get("local")
    if source == "remote":
        if local and data_dir is not None:
            folder = Path(data_dir) / local
            return {s: read_triples(folder / LOCAL_FILE_NAMES[s]) for s in SPLITS}
        dataset = _remote_dataset(key, spec)
        paths = (dataset.training_path, dataset.validation_path, dataset.testing_path)
        return {s: read_triples(p) for s, p in zip(SPLITS, paths, strict=True)}
    cls = _pykeen_dataset_class(key, spec)
    if local and data_dir is not None:
        folder = Path(data_dir) / local
        return {s: read_triples(folder / LOCAL_FILE_NAMES[s]) for s in SPLITS}
    _check_ogb(key, spec, cls)
    dataset = cls()
    paths = [getattr(dataset, f"{p}_path", None) for p in ("training", "validation", "testing")]
    if all(p is not None and Path(p).is_file() for p in paths):
        return {s: read_triples(p) for s, p in zip(SPLITS, paths, strict=True)}
    factories = (dataset.training, dataset.validation, dataset.testing)
    return {s: np.asarray(f.triples, dtype=str) for s, f in zip(SPLITS, factories, strict=True)}


def _report_drops(data: LPData) -> LPData:
    """Warn, per evaluation split, about the triples dropped for entities or relations unseen in training."""
    for split in ("valid", "test"):
        if data.num_dropped.get(split):
            logger.warning(
                "%s/%s: dropped %d triples with entities or relations unseen in training",
                data.name, split, data.num_dropped[split],
            )
    return data


def _from_files(key: str, paths: list[Path]) -> LPData:
    """The dataset of three local split files (train, valid, test), through the cache of
    :mod:`kgeval.lp.dataset_cache`."""
    from kgeval.lp.dataset_cache import Splits, cached_splits

    def build() -> Splits:
        data = _from_labeled(key, {s: read_triples(p) for s, p in zip(SPLITS, paths, strict=True)})
        return [data.training, data.validation, data.testing], data.num_dropped

    factories, dropped = cached_splits(key, paths, build, code=[__file__])
    return _report_drops(LPData(key, *factories, dropped))


def load_dataset(key: str, spec: dict[str, Any], data_dir: str | os.PathLike | None = None) -> LPData:
    """Load a dataset described by one entry of the config's ``datasets`` section.

    Datasets read from local files (``files``, ``local`` copies, PyKEEN's bundled files) are kept in a cache keyed by
    the files' bytes (:mod:`kgeval.lp.dataset_cache`): a later load builds the same factories without re-reading them.

    :param key: the dataset's config key (used in paths and messages)
    :param spec: the entry (see the module docstring)
    :param data_dir: folder with local copies; used by ``local:`` entries instead of downloading
    :returns: the dataset with aligned ids
    :raises DatasetError: for an unknown source or PyKEEN name, missing or malformed files
    """
    source = _source(spec)
    if source == "files" and not spec.get("resplit") and all(s in spec for s in SPLITS):
        return _from_files(key, [_resolve_path(spec[s], None) for s in SPLITS])
    if source in ("files", "remote") or spec.get("resplit"):
        return _report_drops(_from_labeled(key, labeled_splits(key, spec, data_dir)))
    if source != "pykeen":
        raise DatasetError(f"datasets.{key}.source: unknown source {source!r}; use 'pykeen' or 'files'")

    cls = _pykeen_dataset_class(key, spec)
    local = spec.get("local")
    if local and data_dir is not None:
        return _from_files(key, [Path(data_dir) / local / LOCAL_FILE_NAMES[s] for s in SPLITS])
    _check_ogb(key, spec, cls)
    dataset = cls()
    paths = [getattr(dataset, f"{p}_path", None) for p in ("training", "validation", "testing")]
    if all(p is not None and Path(p).is_file() for p in paths):
        # PyKEEN's bundled/unpacked files: re-read them ourselves so that drops are counted and reported.
        return _from_files(key, [Path(p) for p in paths])
    # Packed remote datasets: PyKEEN already mapped them; drops (if any) were logged by PyKEEN.
    return LPData(
        key,
        dataset.training,
        dataset.validation,
        dataset.testing,
        {"train": 0, "valid": 0, "test": 0},
    )


def dataset_summary(data: LPData) -> pd.DataFrame:
    """Size of each split and how many triples were dropped.

    :returns: columns ``split, num_triples, num_dropped, num_entities, num_relations``
    """
    rows = [
        {
            "split": split,
            "num_triples": data.factory(split).num_triples,
            "num_dropped": data.num_dropped.get(split, 0),
            "num_entities": data.num_entities,
            "num_relations": data.num_relations,
        }
        for split in SPLITS
    ]
    return pd.DataFrame(rows)


def summarize_to_file(key: str, spec: dict[str, Any], data_dir: str | os.PathLike | None, path: str) -> pd.DataFrame:
    """Load a dataset and write :func:`dataset_summary` to ``path`` (atomically)."""
    from kgeval.io import write_tsv

    summary = dataset_summary(load_dataset(key, spec, data_dir))
    write_tsv(summary, path, sort_by=["split"])
    return summary
