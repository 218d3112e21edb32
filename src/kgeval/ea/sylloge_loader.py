"""OpenEA (e.g. D-W-15K V2) and MED-BBK-9K through the ``sylloge`` package, as :class:`~kgeval.ea.data.EAPair`.

Paper 002 evaluates on D-W-15K (OpenEA, version V2) and its own MED-BBK-9K. Both are published as zip files that
:mod:`sylloge` downloads (``sylloge.OpenEA(graph_pair="D_W", size="15K", version="V2")``, ``sylloge.MED_BBK()``)
and caches, after the first read, as Parquet files in its own layout under pystow's home::

    ~/.data/sylloge/open_ea/cached/D_W_15K_V2/     dataset_names.txt, rel_triples_0_parquet, rel_triples_1_parquet,
    ~/.data/sylloge/med_bbk/cached/industry/      attr_triples_0_parquet, attr_triples_1_parquet, ent_links, folds/

:func:`read_sylloge_dataset` reads that cache layout from ``{data_dir}/sylloge/...`` when it exists (with
sylloge's own reader, :meth:`sylloge.base.BinaryParquetEADataset.read_parquet`; this is how the offline tests
run, on a small fixture in ``tests/data/sylloge/``), and otherwise asks sylloge to download the dataset (a user
with a network). :func:`sylloge_to_pair` turns the string-labelled tables into an :class:`EAPair`:

- entities of a graph: every head and tail of its relation triples, every head of its attribute triples and every
  linked entity of that graph, numbered ``0..n-1`` in sorted label order; relations likewise, per graph;
- alignment: one pair per link cluster (a cluster of two entities, one per graph; a one-element cluster is an
  entity with the same label in both graphs); a larger cluster is not a 1-to-1 mapping and raises an error;
- attributes: per entity the distinct attribute properties of its attribute triples;
- names (:attr:`SyllogePair.names1`, ``names2``): per entity a tuple of names - the URI's last segment, or, when
  ``name_attributes`` lists properties for that graph, the values of those attributes (the paper uses Wikidata's
  P373 and P1476 for the Wikidata side of D-W-15K; an entity without them has no name). Literal quotes and
  language or datatype tags (``"Foo"@en``) are removed from the values.

Sorted labels would tie the two graphs' ids together (MED-BBK links many entities with one label in both graphs),
so :func:`load_sylloge_pair` relabels graph 2 by the seeded permutation of :func:`kgeval.ea.pair.shuffle_graph2`.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import pandas as pd

from kgeval.ea.data import EADataError, EAPair, uri_name
from kgeval.ea.pair import shuffle_graph2

__all__ = [
    "SYLLOGE_DATASETS",
    "SOURCE_URLS",
    "SyllogePair",
    "cache_subpath",
    "read_sylloge_dataset",
    "sylloge_to_pair",
    "load_sylloge_pair",
    "clean_literal",
]

logger = logging.getLogger(__name__)

#: the sylloge dataset families supported (``dataset`` key of a spec)
SYLLOGE_DATASETS: tuple[str, ...] = ("open_ea", "med_bbk")
#: where sylloge 0.3 downloads each family from (its ``OpenEA._FIGSHARE_LINK``, ``MED_BBK._ZIP_LINK``), for the error
#: a machine without a network gets
SOURCE_URLS: dict[str, str] = {
    "open_ea": "https://figshare.com/ndownloader/files/34234391 (OpenEA's datasets, all pairs and versions)",
    "med_bbk": "https://github.com/ZihengZZH/industry-eval-EA/raw/main/benchmark/industry.zip (paper 002's authors)",
}

_SPEC_KEYS = frozenset({"source", "dataset", "graph_pair", "size", "version", "name_attributes"})
_LITERAL = re.compile(r'^"(?P<value>.*)"(?:@[A-Za-z0-9-]+|\^\^<?[^>]*>?)?$', re.DOTALL)


@dataclass(frozen=True)
class SyllogePair:
    """An EA pair from sylloge with several names per entity.

    :ivar pair: the pair (with ``attributes1/2`` filled)
    :ivar names1: per graph-1 entity, the tuple of its names (empty: none)
    :ivar names2: the same for graph 2
    :ivar names_source: where the names come from, in words
    """

    pair: EAPair
    names1: list[tuple[str, ...]]
    names2: list[tuple[str, ...]]
    names_source: str


def _check_spec(key: str, spec: Mapping[str, Any]) -> None:
    unknown = set(spec) - _SPEC_KEYS
    if unknown:
        raise EADataError(f"studies.s3.sylloge.{key}: unknown key(s) {sorted(unknown)}; allowed: {sorted(_SPEC_KEYS)}")
    if spec.get("dataset") not in SYLLOGE_DATASETS:
        raise EADataError(
            f"studies.s3.sylloge.{key}.dataset: {spec.get('dataset')!r} is not one of {list(SYLLOGE_DATASETS)}"
        )


def _with_defaults(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A ``studies.s3.sylloge`` entry with the schema's defaults where a partial entry has none."""
    from kgeval.config import schema_defaults

    return {**schema_defaults("studies.s3.sylloge.*"), **spec}


def cache_subpath(spec: Mapping[str, Any]) -> PurePosixPath:
    """Where sylloge caches a dataset, relative to pystow's home (and to ``{data_dir}``).

    ``open_ea/cached/{graph_pair}_{size}_{version}`` or ``med_bbk/cached/industry``.
    """
    if spec.get("dataset") == "open_ea":
        spec = _with_defaults(spec)
        name = f"{spec['graph_pair']}_{spec['size']}_{spec['version']}"
        return PurePosixPath("sylloge", "open_ea", "cached", name)
    if spec.get("dataset") == "med_bbk":
        return PurePosixPath("sylloge", "med_bbk", "cached", "industry")
    raise EADataError(f"sylloge dataset {spec.get('dataset')!r} is not one of {list(SYLLOGE_DATASETS)}")


def read_sylloge_dataset(key: str, spec: Mapping[str, Any], data_dir: str | os.PathLike | None):
    """Read a sylloge dataset from ``{data_dir}/sylloge/...`` (sylloge's cache layout) or download it with sylloge.

    :raises EADataError: when there is no local copy and sylloge cannot download it
    """
    _check_spec(key, spec)
    local = Path(data_dir) / cache_subpath(spec) if data_dir is not None else None
    if local is not None and local.is_dir():
        from sylloge.base import BinaryParquetEADataset

        logger.info("%s: reading sylloge's cache layout at %s", key, local)
        return BinaryParquetEADataset.read_parquet(local)
    try:
        if spec["dataset"] == "open_ea":
            from sylloge import OpenEA

            full = _with_defaults(spec)
            return OpenEA(graph_pair=full["graph_pair"], size=full["size"], version=full["version"])
        from sylloge import MED_BBK

        return MED_BBK()
    except Exception as error:  # noqa: BLE001 - any download or parsing failure gets the same advice
        where = f"{local} does not exist and " if local is not None else ""
        raise EADataError(
            f"studies.s3.sylloge.{key}: {where}sylloge could not download the dataset ({type(error).__name__}: "
            f"{error}) from {SOURCE_URLS[spec['dataset']]}. Run once on a machine with a network, or copy sylloge's "
            f"cache folder (~/.data/{cache_subpath(spec).as_posix()}) to "
            f"{{data_dir}}/{cache_subpath(spec).as_posix()}; without either, config/paper_offline.yaml studies the "
            "offline substitutes (DBP15k fr-en, SRPRS en-fr)"
        ) from error


def clean_literal(value: str) -> str:
    """Strip the quotes and a language or datatype tag from an RDF literal (``"Foo"@en`` -> ``Foo``)."""
    text = str(value).strip()
    match = _LITERAL.match(text)
    return match.group("value") if match else text


def _matches(attribute: str, wanted: Sequence[str]) -> bool:
    return attribute in wanted or uri_name(attribute) in wanted


def _graph_of(element: str, entity_sets: Sequence[set[str]], prefixes: Sequence[str] | None) -> list[int]:
    if prefixes:
        hits = [g for g, prefix in enumerate(prefixes) if element.startswith(prefix)]
        if hits:
            return hits
    return [g for g, entities in enumerate(entity_sets) if element in entities]


def _graph_entities_and_links(key: str, dataset: Any, rel: list[pd.DataFrame], attr: list[pd.DataFrame]):
    """Each graph's entity labels (triples' and links' entities) and the 1-to-1 links as (graph-1, graph-2) labels."""
    link_prefixes = getattr(dataset.ent_links, "ds_prefixes", None)
    prefixes = list(link_prefixes.values()) if link_prefixes else list(getattr(dataset, "ds_prefix_tuples", None) or [])
    entity_sets = [
        set(rel[g]["head"]).union(rel[g]["tail"]).union(attr[g]["head"]) for g in range(2)
    ]
    pairs_labels: list[tuple[str, str]] = []
    for cluster in dataset.ent_links.clusters.values():
        members = sorted(cluster)
        if len(members) == 1:
            pairs_labels.append((members[0], members[0]))
            continue
        if len(members) != 2:
            raise EADataError(f"{key}: link cluster {members} has {len(members)} entities; a 1-to-1 alignment needs 2")
        first, second = (set(_graph_of(m, entity_sets, prefixes)) for m in members)
        options = []
        if 0 in first and 1 in second:
            options.append((members[0], members[1]))
        if 0 in second and 1 in first:
            options.append((members[1], members[0]))
        if len(options) != 1:
            raise EADataError(f"{key}: cannot tell which graph each entity of link {members} belongs to")
        pairs_labels.append(options[0])
    for a, b in pairs_labels:
        entity_sets[0].add(a)
        entity_sets[1].add(b)
    return entity_sets, pairs_labels


def _relation_triples(rel: list[pd.DataFrame], index: list[dict[str, int]]):
    """Per graph, the relation triples as ids (relations numbered in sorted label order) and the relation labels."""
    triples, relation_labels = [], []
    for g in range(2):
        rel_labels = sorted(set(rel[g]["relation"]))
        rel_index = {label: i for i, label in enumerate(rel_labels)}
        table = rel[g]
        triples.append(
            np.stack(
                [
                    table["head"].map(index[g]).to_numpy(dtype=np.int64),
                    table["relation"].map(rel_index).to_numpy(dtype=np.int64),
                    table["tail"].map(index[g]).to_numpy(dtype=np.int64),
                ],
                axis=1,
            ).reshape(-1, 3)
        )
        relation_labels.append(rel_labels)
    return triples, relation_labels


def _attributes_and_names(
    attr: list[pd.DataFrame],
    labels: list[list[str]],
    index: list[dict[str, int]],
    name_attributes: Sequence[Sequence[str]],
):
    """Per graph, each entity's attribute ids, the attribute labels and each entity's names (module doc)."""
    attributes, attribute_labels, names = [], [], []
    for g in range(2):
        table = attr[g]
        att_labels = sorted(set(table["relation"]))
        att_index = {label: i for i, label in enumerate(att_labels)}
        per_entity: list[set[int]] = [set() for _ in labels[g]]
        wanted = list(name_attributes[g]) if g < len(name_attributes) else []
        per_names: list[list[str]] = [[] for _ in labels[g]]
        for head, relation, tail in table[["head", "relation", "tail"]].itertuples(index=False):
            entity = index[g][head]
            per_entity[entity].add(att_index[relation])
            if wanted and _matches(relation, wanted):
                value = clean_literal(tail)
                if value and value not in per_names[entity]:
                    per_names[entity].append(value)
        attributes.append([np.asarray(sorted(s), dtype=np.int64) for s in per_entity])
        attribute_labels.append(att_labels)
        if wanted:
            names.append([tuple(n) for n in per_names])
        else:
            names.append([(uri_name(label),) if uri_name(label) else () for label in labels[g]])
    return attributes, attribute_labels, names


def sylloge_to_pair(
    key: str,
    dataset: Any,
    name_attributes: Sequence[Sequence[str]] = ((), ()),
) -> SyllogePair:
    """Convert a binary sylloge dataset into an :class:`EAPair` with names and attributes (see module doc).

    :param key: the pair's name
    :param dataset: a sylloge dataset with ``rel_triples``, ``attr_triples`` (two pandas tables each, columns
        ``head, relation, tail``) and ``ent_links`` (link clusters)
    :param name_attributes: per graph, the attribute properties (full URI or last segment) whose values are the
        entity names; empty: the URI's last segment
    """
    rel = [_as_pandas(t) for t in dataset.rel_triples]
    attr = [_as_pandas(t) for t in dataset.attr_triples]
    if len(rel) != 2 or len(attr) != 2:
        raise EADataError(f"{key}: expected two graphs, got {len(rel)} relation and {len(attr)} attribute tables")
    entity_sets, pairs_labels = _graph_entities_and_links(key, dataset, rel, attr)
    labels = [sorted(entity_sets[g]) for g in range(2)]
    index = [{label: i for i, label in enumerate(labels[g])} for g in range(2)]
    triples, relation_labels = _relation_triples(rel, index)
    attributes, attribute_labels, names = _attributes_and_names(attr, labels, index, name_attributes)

    alignment = np.asarray([(index[0][a], index[1][b]) for a, b in pairs_labels], dtype=np.int64).reshape(-1, 2)
    alignment = alignment[np.lexsort((alignment[:, 1], alignment[:, 0]))]
    for column, graph in ((0, 1), (1, 2)):
        if len(np.unique(alignment[:, column])) != len(alignment):
            raise EADataError(f"{key}: a graph-{graph} entity is linked more than once (not 1-to-1)")
    sources = []
    for g in range(2):
        wanted = list(name_attributes[g]) if g < len(name_attributes) else []
        sources.append(f"graph {g + 1}: " + (f"values of {', '.join(wanted)}" if wanted else "URI last segment"))
    pair = EAPair(
        name=key,
        triples1=triples[0],
        triples2=triples[1],
        entity_labels1=labels[0],
        entity_labels2=labels[1],
        alignment=alignment,
        relation_labels1=relation_labels[0],
        relation_labels2=relation_labels[1],
        names1=[n[0] if n else "" for n in names[0]],
        names2=[n[0] if n else "" for n in names[1]],
        attributes1=attributes[0],
        attributes2=attributes[1],
        attribute_labels1=attribute_labels[0],
        attribute_labels2=attribute_labels[1],
    )
    return SyllogePair(pair=pair, names1=names[0], names2=names[1], names_source="real: " + "; ".join(sources))


def _as_pandas(table: Any) -> pd.DataFrame:
    """sylloge's tables are pandas or dask; compute a dask table."""
    if hasattr(table, "compute") and not isinstance(table, pd.DataFrame):
        table = table.compute()
    missing = {"head", "relation", "tail"} - set(table.columns)
    if missing:
        raise EADataError(f"sylloge table lacks columns {sorted(missing)} (has {list(table.columns)})")
    return table.astype(str)


def load_sylloge_pair(key: str, spec: Mapping[str, Any], data_dir: str | os.PathLike | None = None) -> SyllogePair:
    """Read (or download) a sylloge dataset, convert it (see module doc) and shuffle its graph-2 ids with
    :func:`kgeval.ea.pair.shuffle_graph2` (key: the cache path, e.g. ``sylloge/open_ea/cached/D_W_15K_V2``).

    :param spec: ``{source: sylloge, dataset: open_ea|med_bbk, graph_pair, size, version, name_attributes}``
    """
    dataset = read_sylloge_dataset(key, spec, data_dir)
    name_attributes = spec.get("name_attributes") or [[], []]
    if len(name_attributes) != 2:
        raise EADataError(f"studies.s3.sylloge.{key}.name_attributes: give two lists (graph 1, graph 2)")
    loaded = sylloge_to_pair(key, dataset, name_attributes)
    pair, new_ids = shuffle_graph2(loaded.pair, cache_subpath(spec).as_posix())
    names2: list[tuple[str, ...]] = [()] * len(new_ids)
    for old, new in enumerate(new_ids.tolist()):
        names2[new] = loaded.names2[old]
    return SyllogePair(pair=pair, names1=loaded.names1, names2=names2, names_source=loaded.names_source)
