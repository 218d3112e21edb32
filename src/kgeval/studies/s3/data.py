"""S3 (paper 002) data: an EA pair plus what the paper's splits need - entity names and attribute counts.

:class:`S3Pair` wraps a :class:`kgeval.ea.data.EAPair` and adds, per entity, the tuple of its candidate names and
its number of attributes, and says where each came from (``names_source``, ``attributes_source``), because not
every source has both:

==============================  ==============================================  ===========================================
source                          names                                           attributes
==============================  ==============================================  ===========================================
DBP15k (``source: dbp15k``)     real: the URI's last segment                    real: number of distinct attribute names
                                                                                (MuGNN files under ``attributes/``); none
                                                                                when that folder is absent
SRPRS (``source: srprs``)       real: the URI's last segment                    none: the attribute split is skipped
OpenEA / MED-BBK (``sylloge``)  real: the URI's last segment, or the values     real: number of distinct attribute
                                of configured name attributes (Wikidata P373,   properties (:mod:`kgeval.ea.sylloge_loader`)
                                P1476 as in the paper)
embedded pair (``two_view``)    derived: PyKEEN's label in both views; graph-2  derived: the entity's degree in its own
                                names perturbed by a seeded noise model when    view (number of triples it occurs in)
                                ``name_noise`` is set (otherwise every mapping
                                is "same")
==============================  ==============================================  ===========================================

The noise model of :func:`perturb_names` (two-view pairs only): with ``rng = numpy.random.default_rng(seed)`` one
uniform draw ``u_j`` per graph-2 entity ``j`` (in id order) decides: ``u_j < missing`` - the entity has no name;
``missing <= u_j < missing + edited`` - its name gets ``1..max_edits`` random single-character edits
(substitution, insertion or deletion of a letter ``a-z``, each edit drawn in turn); otherwise the name is kept.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kgeval.ea.data import EADataError, EAPair, load_ea_pair, uri_name

__all__ = [
    "S3Pair",
    "S3DataError",
    "NAMES_REAL_URI",
    "ATTRIBUTES_MISSING",
    "perturb_names",
    "degree_counts",
    "attribute_counts",
    "load_s3_pair",
]

NAMES_REAL_URI = "real: last segment of the entity URI"
NAMES_DERIVED_LABEL = "derived: PyKEEN entity label, identical in both views"
NAMES_DERIVED_NOISE = "derived: PyKEEN entity label; graph-2 names perturbed by seeded noise"
ATTRIBUTES_REAL = "real: number of distinct attribute names"
ATTRIBUTES_DEGREE = "derived: entity degree in its own graph (no attributes exist)"
ATTRIBUTES_MISSING = "missing: the dataset has no attributes (attribute split skipped)"

_LETTERS = np.array(list("abcdefghijklmnopqrstuvwxyz"))


class S3DataError(EADataError):
    """An S3 dataset entry is inconsistent (e.g. name noise asked for a real dataset)."""


@dataclass(frozen=True)
class S3Pair:
    """An EA pair with names and attribute counts per entity (see module doc).

    :ivar pair: the EA pair (ids, triples, alignment)
    :ivar names1: length n1; per graph-1 entity the tuple of its raw names (empty: no name)
    :ivar names2: length n2; the same for graph 2
    :ivar num_attributes1: shape (n1,) float, or ``None`` when the dataset has no attributes
    :ivar num_attributes2: shape (n2,) float, or ``None``
    :ivar names_source: where the names come from (real or derived, in words)
    :ivar attributes_source: where the attribute counts come from (real, derived or missing, in words)
    """

    pair: EAPair
    names1: list[tuple[str, ...]]
    names2: list[tuple[str, ...]]
    num_attributes1: np.ndarray | None
    num_attributes2: np.ndarray | None
    names_source: str
    attributes_source: str

    def __post_init__(self) -> None:
        if len(self.names1) != self.pair.num_entities1 or len(self.names2) != self.pair.num_entities2:
            raise S3DataError(f"{self.pair.name}: one name tuple per entity is needed")
        if (self.num_attributes1 is None) != (self.num_attributes2 is None):
            raise S3DataError(f"{self.pair.name}: attribute counts must exist for both graphs or for neither")

    @property
    def has_attributes(self) -> bool:
        """Whether attribute counts exist (else the attribute split and the attribute bias are skipped)."""
        return self.num_attributes1 is not None


def perturb_names(
    names: Sequence[str], missing: float, edited: float, max_edits: int, seed: int
) -> list[tuple[str, ...]]:
    """Apply the seeded noise model of the module doc to one graph's names.

    :param names: length n, one name per entity
    :param missing: share of entities that lose their name
    :param edited: share of entities whose name gets random character edits
    :param max_edits: the most edits one name gets (at least 1)
    :param seed: the noise seed
    :returns: length n; ``()`` for a dropped name, else a 1-tuple
    """
    if missing < 0 or edited < 0 or missing + edited > 1:
        raise S3DataError(f"name_noise: missing={missing} and edited={edited} must be >= 0 and sum to at most 1")
    if max_edits < 1:
        raise S3DataError(f"name_noise: max_edits must be at least 1, got {max_edits}")
    rng = np.random.default_rng(seed)
    draws = rng.random(len(names))
    out: list[tuple[str, ...]] = []
    for name, u in zip(names, draws):
        if u < missing:
            out.append(())
            continue
        if u < missing + edited:
            chars = list(name)
            for _ in range(int(rng.integers(1, max_edits + 1))):
                kind = int(rng.integers(3)) if chars else 1
                if kind == 0:  # substitution
                    chars[int(rng.integers(len(chars)))] = str(rng.choice(_LETTERS))
                elif kind == 1:  # insertion
                    chars.insert(int(rng.integers(len(chars) + 1)), str(rng.choice(_LETTERS)))
                else:  # deletion
                    del chars[int(rng.integers(len(chars)))]
            name = "".join(chars)
        out.append((name,))
    return out


def degree_counts(triples: np.ndarray, num_entities: int) -> np.ndarray:
    """Number of triples each entity occurs in (as head or tail; a self-loop counts twice), shape (n,) float."""
    triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    counts = np.bincount(triples[:, 0], minlength=num_entities) + np.bincount(triples[:, 2], minlength=num_entities)
    return counts.astype(float)


def attribute_counts(attributes: Sequence[np.ndarray]) -> np.ndarray:
    """Number of distinct attributes per entity, shape (n,) float."""
    return np.asarray([len(np.unique(a)) for a in attributes], dtype=float)


def _names_from_pair(names: Sequence[str] | None, labels: Sequence[str]) -> list[tuple[str, ...]]:
    source = names if names is not None else [uri_name(label) for label in labels]
    return [(n,) if n else () for n in source]


def load_s3_pair(
    key: str,
    source_spec: Mapping[str, Any],
    data_dir: str | os.PathLike | None = None,
    name_noise: Mapping[str, Any] | None = None,
) -> S3Pair:
    """Load a pair for S3 with its names and attribute counts (see the module doc for each source).

    :param key: the dataset key (an ``ea_datasets`` key, or a ``studies.s3.sylloge`` key)
    :param source_spec: the ``ea_datasets`` entry, or ``{source: sylloge, ...}`` (a ``studies.s3.sylloge`` entry)
    :param data_dir: local data folder, or ``None`` to download / use PyKEEN's bundled graphs
    :param name_noise: ``{missing, edited, max_edits, seed}`` for a two-view pair, or ``None``
    :raises S3DataError: when name noise is asked for a dataset with real names
    """
    source = source_spec.get("source")
    if name_noise is not None and source != "two_view":
        raise S3DataError(
            f"studies.s3.datasets.{key}.name_noise: noise is only for the embedded two-view pair, whose names are "
            f"copies of one label; {key} (source {source}) has real names - remove name_noise"
        )
    if source == "sylloge":
        from kgeval.ea.sylloge_loader import load_sylloge_pair

        loaded = load_sylloge_pair(key, source_spec, data_dir)
        return S3Pair(
            pair=loaded.pair,
            names1=loaded.names1,
            names2=loaded.names2,
            num_attributes1=attribute_counts(loaded.pair.attributes1),
            num_attributes2=attribute_counts(loaded.pair.attributes2),
            names_source=loaded.names_source,
            attributes_source="real: number of distinct attribute properties (attribute triples)",
        )
    pair = load_ea_pair(key, dict(source_spec), data_dir)
    if source == "two_view":
        names1 = _names_from_pair(pair.names1, pair.entity_labels1)
        base2 = list(pair.names2 if pair.names2 is not None else pair.entity_labels2)
        if name_noise is not None:
            names2 = perturb_names(
                base2,
                missing=float(name_noise["missing"]),
                edited=float(name_noise["edited"]),
                max_edits=int(name_noise["max_edits"]),
                seed=int(name_noise["seed"]),
            )
            names_source = NAMES_DERIVED_NOISE
        else:
            names2 = _names_from_pair(base2, pair.entity_labels2)
            names_source = NAMES_DERIVED_LABEL
        return S3Pair(
            pair=pair,
            names1=names1,
            names2=names2,
            num_attributes1=degree_counts(pair.triples1, pair.num_entities1),
            num_attributes2=degree_counts(pair.triples2, pair.num_entities2),
            names_source=names_source,
            attributes_source=ATTRIBUTES_DEGREE,
        )
    has_attributes = pair.attributes1 is not None and pair.attributes2 is not None
    return S3Pair(
        pair=pair,
        names1=_names_from_pair(pair.names1, pair.entity_labels1),
        names2=_names_from_pair(pair.names2, pair.entity_labels2),
        num_attributes1=attribute_counts(pair.attributes1) if has_attributes else None,
        num_attributes2=attribute_counts(pair.attributes2) if has_attributes else None,
        names_source=NAMES_REAL_URI,
        attributes_source=ATTRIBUTES_REAL if has_attributes else ATTRIBUTES_MISSING,
    )
