"""Entity-alignment datasets behind one interface: :class:`EAPair` and :func:`load_ea_pair`.

The container
-------------
:class:`EAPair` holds two graphs with **their own, contiguous** entity ids (``0 .. n1-1`` in graph 1 and
``0 .. n2-1`` in graph 2, whatever the ids in the source files were) and the reference alignment between them:

=====================  =====================================================================================
field                  meaning
=====================  =====================================================================================
``name``               the config key of the pair (e.g. ``dbp15k_zh_en``)
``triples1``           shape (m1, 3), int64: ``(head, relation, tail)`` ids in graph 1
``triples2``           shape (m2, 3), int64: ``(head, relation, tail)`` ids in graph 2
``entity_labels1``     length n1: the label of each graph-1 entity (the DBpedia URI for DBP15k/SRPRS)
``entity_labels2``     length n2: the same for graph 2
``alignment``          shape (n, 2), int64: every reference pair ``(id in graph 1, id in graph 2)``,
                       sorted by the graph-1 id
``relation_labels1``   length r1: the label of each graph-1 relation (URI, or the source file's id as text)
``relation_labels2``   length r2: the same for graph 2
``names1``             length n1 or ``None``: one human-readable name per entity (DBP15k/SRPRS: the URI's
                       last path segment, kept raw, e.g. ``National_Front_(France)``)
``names2``             the same for graph 2
``attributes1``        length n1 or ``None``: per entity, shape (a_i,) int64 attribute ids (index into
                       ``attribute_labels1``); an entity without attributes has an empty array
``attributes2``        the same for graph 2
``attribute_labels1``  the attribute names (URIs) of graph 1, or ``None``
``attribute_labels2``  the same for graph 2
``fixed_split``        ``None``, or a dataset's own split, e.g. ``{"train": (k, 2), "test": (l, 2)}`` for SRPRS
                       (arrays in the same id space as ``alignment``)
=====================  =====================================================================================

The sources (``spec`` is the config entry ``ea_datasets.<key>``)
----------------------------------------------------------------
- ``{source: dbp15k, subset: zh_en}`` (also ``ja_en``, ``fr_en``): DBP15k in the JAPE / GCN-Align format
  (``ent_ids_1``, ``ent_ids_2``: ``id<TAB>URI``; ``ref_ent_ids``: ``id1<TAB>id2``; ``triples_1``, ``triples_2``:
  ``head<TAB>relation<TAB>tail``). Read from ``{data_dir}/dbp15k/{subset}/`` when ``data_dir`` is set, otherwise
  downloaded once (with :mod:`pystow`) from the public GCN-Align release. Attribute names are read from
  ``{data_dir}/dbp15k/{subset}/attributes/`` (the MuGNN release: ``entity2id_<lang>.txt``,
  ``attr2id_<lang>.txt``, ``entity2att_<lang>.txt``) when that folder exists; otherwise ``attributes* = None``.
- ``{source: srprs, subset: en_fr_15k_V1}`` (also ``en_de_15k_V1``): the same format plus ``sup_ent_ids``
  (train pairs) and ``rel_ids_1/2``; ``fixed_split = {"train": sup_ent_ids, "test": ref_ent_ids}`` and
  ``alignment`` is their union. Read from ``{data_dir}/srprs/{subset}/`` or downloaded from the Dual-AMN release.
- ``{source: two_view, dataset: umls, keep_fraction: 0.7, seed: 0}``: the embedded default, built offline from a
  graph that PyKEEN bundles (``nations``, ``kinships``, ``umls``) by :func:`kgeval.ea.two_view.sample_two_views`.

Any source may set ``url`` to override the download base URL (``{url}/{file}`` is fetched).

Graph-2 ids are shuffled at load: DBP15k and SRPRS number most aligned entities with one shared id, so
:func:`load_ea_pair` relabels their graph 2 by the seeded permutation of :func:`kgeval.ea.pair.shuffle_graph2`
(keys ``(source, subset)``), after :func:`read_jape_folder` (which keeps the files' order). The two-view sampler
draws fresh graph-2 ids itself (:mod:`kgeval.ea.two_view`), and :func:`kgeval.ea.sylloge_loader.load_sylloge_pair`
shuffles its pairs the same way.

Bad files raise :class:`EADataError` naming the file, the line and what was expected.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kgeval.ea.pair import EADataError, EAPair, shuffle_graph2
from kgeval.ea.two_view import two_view_pair

__all__ = [
    "EAPair",
    "EADataError",
    "load_ea_pair",
    "source_files",
    "read_jape_folder",
    "uri_name",
    "DBP15K_SUBSETS",
    "SRPRS_SUBSETS",
    "SPEC_KEYS",
]

#: The three DBP15k language pairs (graph 1 = the non-English DBpedia, graph 2 = the English one).
DBP15K_SUBSETS = ("zh_en", "ja_en", "fr_en")
#: The SRPRS pairs available in the Dual-AMN release (graph 1 = English).
SRPRS_SUBSETS = ("en_fr_15k_V1", "en_de_15k_V1")

#: Public releases that a user with a network downloads from (``{base}/{subset}/{file}``).
DBP15K_URL = "https://raw.githubusercontent.com/1049451037/GCN-Align/master/data"
SRPRS_URL = "https://raw.githubusercontent.com/MaoXinn/Dual-AMN/main/data"

_JAPE_FILES = ("ent_ids_1", "ent_ids_2", "ref_ent_ids", "triples_1", "triples_2")
_SRPRS_FILES = (*_JAPE_FILES, "sup_ent_ids", "rel_ids_1", "rel_ids_2")


def uri_name(uri: str) -> str:
    """Return a URI's last path segment, kept raw (``http://dbpedia.org/resource/Kim_Dae-jung`` -> ``Kim_Dae-jung``)."""
    return uri.rstrip("/").rsplit("/", 1)[-1]


# --------------------------------------------------------------------------------------------------- file readers


def _read_lines(path: Path) -> list[str]:
    if not path.is_file():
        raise EADataError(f"missing file {path}: expected the JAPE/GCN-Align layout ({', '.join(_JAPE_FILES)})")
    with path.open(encoding="utf-8") as handle:
        return handle.read().splitlines()


def _read_id_label(path: Path, skip_header: bool = False, label_first: bool = False) -> tuple[np.ndarray, list[str]]:
    """Read ``id<TAB>label`` lines (or ``label<TAB>id`` with ``label_first``); return ids (n,) and labels."""
    ids: list[int] = []
    labels: list[str] = []
    lines = _read_lines(path)
    start = 1 if skip_header else 0
    for number, line in enumerate(lines[start:], start=start + 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            raise EADataError(
                f"{path}:{number}: expected 2 tab-separated columns (id, label), got {len(parts)}: {line!r}"
            )
        raw_id, label = (parts[1], parts[0]) if label_first else (parts[0], parts[1])
        try:
            ids.append(int(raw_id))
        except ValueError:
            raise EADataError(f"{path}:{number}: the id column must be an integer, got {raw_id!r}") from None
        labels.append(label)
    ids_array = np.asarray(ids, dtype=np.int64)
    if len(np.unique(ids_array)) != len(ids_array):
        raise EADataError(f"{path}: ids are not unique")
    return ids_array, labels


def _read_int_table(path: Path, num_columns: int) -> np.ndarray:
    """Read lines of exactly ``num_columns`` tab-separated integers; return shape (n, num_columns) int64."""
    rows: list[list[int]] = []
    for number, line in enumerate(_read_lines(path), start=1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != num_columns:
            raise EADataError(
                f"{path}:{number}: expected {num_columns} tab-separated integer columns, got {len(parts)}: {line!r}"
            )
        try:
            rows.append([int(p) for p in parts])
        except ValueError:
            raise EADataError(f"{path}:{number}: expected integers, got {line!r}") from None
    return np.asarray(rows, dtype=np.int64).reshape(-1, num_columns)


def _remap(values: np.ndarray, sorted_ids: np.ndarray, path: Path, what: str) -> np.ndarray:
    """Map original ids to their positions in ``sorted_ids`` (the new ids); name the first line with an unknown id."""
    pos = np.searchsorted(sorted_ids, values)
    pos_clipped = np.minimum(pos, len(sorted_ids) - 1)
    ok = (pos < len(sorted_ids)) & (sorted_ids[pos_clipped] == values)
    if not ok.all():
        bad = np.argwhere(~ok)[0]
        raise EADataError(
            f"{path}:{bad[0] + 1}: {what} id {int(values[tuple(bad)])} is not listed in the id file of that graph"
        )
    return pos_clipped


def _sorted_labels(ids: np.ndarray, labels: list[str]) -> list[str]:
    return [labels[i] for i in np.argsort(ids)]


def _read_attributes(folder: Path, lang: str, entity_labels: list[str]) -> tuple[list[np.ndarray], list[str]]:
    """Read MuGNN's attribute-name files for one graph; map its entity ids to ours through the URIs."""
    ent_path = folder / f"entity2id_{lang}.txt"
    att_path = folder / f"attr2id_{lang}.txt"
    e2a_path = folder / f"entity2att_{lang}.txt"
    file_ent_ids, file_uris = _read_id_label(ent_path, skip_header=True, label_first=True)
    attr_ids, attr_uris = _read_id_label(att_path, skip_header=True, label_first=True)
    if len(attr_ids) and not np.array_equal(np.sort(attr_ids), np.arange(len(attr_ids))):
        raise EADataError(f"{att_path}: attribute ids must be 0..{len(attr_ids) - 1}")
    attribute_labels = _sorted_labels(attr_ids, attr_uris)
    ours = {uri: i for i, uri in enumerate(entity_labels)}
    file_to_ours: dict[int, int] = {}
    for file_id, uri in zip(file_ent_ids.tolist(), file_uris):
        if uri in ours:
            file_to_ours[file_id] = ours[uri]
    attributes: list[np.ndarray] = [np.zeros(0, dtype=np.int64) for _ in entity_labels]
    lines = _read_lines(e2a_path)
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            values = [int(p) for p in line.split("\t") if p != ""]
        except ValueError:
            raise EADataError(f"{e2a_path}:{number}: expected tab-separated integers, got {line!r}") from None
        if not values:
            continue
        entity, attrs = values[0], np.asarray(values[1:], dtype=np.int64)
        if attrs.size and (attrs.min() < 0 or attrs.max() >= len(attribute_labels)):
            raise EADataError(f"{e2a_path}:{number}: attribute id outside 0..{len(attribute_labels) - 1}")
        if entity in file_to_ours:
            attributes[file_to_ours[entity]] = np.unique(attrs)
    return attributes, attribute_labels


def _read_jape_triples(folder: Path, index: int, sorted_ids: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Graph ``index``'s ``triples_<index>`` with contiguous ids, and its relation labels (``rel_ids_<index>`` if
    present, else the relation ids as text)."""
    path = folder / f"triples_{index}"
    raw = _read_int_table(path, 3)
    heads = _remap(raw[:, 0], sorted_ids, path, "head entity")
    tails = _remap(raw[:, 2], sorted_ids, path, "tail entity")
    rel_path = folder / f"rel_ids_{index}"
    if rel_path.is_file():
        rel_ids, rel_labels = _read_id_label(rel_path)
        rel_sorted = np.sort(rel_ids)
        relations = _remap(raw[:, 1], rel_sorted, path, "relation")
        labels = _sorted_labels(rel_ids, rel_labels)
    else:
        rel_sorted, relations = np.unique(raw[:, 1], return_inverse=True)
        labels = [str(r) for r in rel_sorted.tolist()]
    return np.stack([heads, relations.astype(np.int64), tails], axis=1).astype(np.int64), labels


def _read_jape_pairs(path: Path, sorted1: np.ndarray, sorted2: np.ndarray) -> np.ndarray:
    """An alignment file as pairs of contiguous ids; raises :class:`EADataError` unless it is 1-to-1."""
    raw = _read_int_table(path, 2)
    pairs = np.stack(
        [_remap(raw[:, 0], sorted1, path, "graph-1 entity"), _remap(raw[:, 1], sorted2, path, "graph-2 entity")],
        axis=1,
    ).astype(np.int64)
    for column, graph in ((0, 1), (1, 2)):
        values, counts = np.unique(pairs[:, column], return_counts=True)
        if (counts > 1).any():
            raise EADataError(f"{path}: graph-{graph} entity id appears in more than one pair (not 1-to-1)")
    return pairs


def read_jape_folder(
    folder: str | os.PathLike,
    name: str,
    *,
    attribute_folder: str | os.PathLike | None = None,
    languages: tuple[str, str] | None = None,
    split_files: Mapping[str, str] | None = None,
) -> EAPair:
    """Read a pair in the JAPE / GCN-Align layout (see module doc) and give each graph contiguous ids.

    Entities get new ids in increasing order of their id in ``ent_ids_*``; relations likewise per graph. The ids
    keep the files' order; :func:`load_ea_pair` shuffles graph 2 after reading.

    :param folder: the folder with ``ent_ids_1``, ``ent_ids_2``, ``ref_ent_ids``, ``triples_1``, ``triples_2``
        (optionally ``rel_ids_1``, ``rel_ids_2``)
    :param name: the pair's name
    :param attribute_folder: a folder with MuGNN's attribute-name files, or ``None``
    :param languages: the language codes of graph 1 and 2 in the attribute file names (e.g. ``("zh", "en")``)
    :param split_files: ``{split name: file}`` of alignment files that form a fixed split (SRPRS:
        ``{"train": "sup_ent_ids", "test": "ref_ent_ids"}``); ``alignment`` is then their union
    :returns: the pair
    :raises EADataError: on a missing or malformed file
    """
    folder = Path(folder)
    ids1, labels1 = _read_id_label(folder / "ent_ids_1")
    ids2, labels2 = _read_id_label(folder / "ent_ids_2")
    sorted1, sorted2 = np.sort(ids1), np.sort(ids2)
    entity_labels1, entity_labels2 = _sorted_labels(ids1, labels1), _sorted_labels(ids2, labels2)

    graphs = []
    relation_labels: list[list[str]] = []
    for index, sorted_ids in ((1, sorted1), (2, sorted2)):
        triples, labels = _read_jape_triples(folder, index, sorted_ids)
        graphs.append(triples)
        relation_labels.append(labels)

    def read_pairs(file_name: str) -> np.ndarray:
        return _read_jape_pairs(folder / file_name, sorted1, sorted2)

    fixed_split = None
    if split_files:
        fixed_split = {key: _sort_pairs(read_pairs(file_name)) for key, file_name in split_files.items()}
        alignment = _sort_pairs(np.concatenate(list(fixed_split.values()), axis=0))
        if len(np.unique(alignment[:, 0])) != len(alignment):
            raise EADataError(f"{folder}: the split files {sorted(split_files.values())} overlap")
    else:
        alignment = _sort_pairs(read_pairs("ref_ent_ids"))

    attributes: list[Any] = [None, None]
    attribute_labels: list[Any] = [None, None]
    if attribute_folder is not None and Path(attribute_folder).is_dir():
        if languages is None:
            raise EADataError(f"{attribute_folder}: reading attributes needs the two language codes")
        for i, (lang, labels) in enumerate(zip(languages, (entity_labels1, entity_labels2))):
            attributes[i], attribute_labels[i] = _read_attributes(Path(attribute_folder), lang, labels)

    return EAPair(
        name=name,
        triples1=graphs[0],
        triples2=graphs[1],
        entity_labels1=entity_labels1,
        entity_labels2=entity_labels2,
        alignment=alignment,
        relation_labels1=relation_labels[0],
        relation_labels2=relation_labels[1],
        names1=[uri_name(u) for u in entity_labels1],
        names2=[uri_name(u) for u in entity_labels2],
        attributes1=attributes[0],
        attributes2=attributes[1],
        attribute_labels1=attribute_labels[0],
        attribute_labels2=attribute_labels[1],
        fixed_split=fixed_split,
    )


def _sort_pairs(pairs: np.ndarray) -> np.ndarray:
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


# --------------------------------------------------------------------------------------------------- sources


def _download_folder(source: str, subset: str, base_url: str, files: Sequence[str]) -> Path:
    """Download the release files once into pystow's cache (``~/.data/kgeval/<source>/<subset>``)."""
    import pystow  # imported lazily: only users with a network need it

    folder: Path | None = None
    for file_name in files:
        path = pystow.ensure("kgeval", source, subset, url=f"{base_url}/{subset}/{file_name}", name=file_name)
        folder = path.parent
    assert folder is not None
    return folder


#: every key an ``ea_datasets`` entry may hold (a key that does not apply to the source is ignored, so that the
#: schema's defaults can fill every key)
SPEC_KEYS = frozenset({"source", "subset", "url", "dataset", "keep_fraction", "seed"})


def _check_keys(key: str, spec: Mapping[str, Any]) -> None:
    allowed = SPEC_KEYS
    unknown = set(spec) - allowed
    if unknown:
        raise EADataError(f"ea_datasets.{key}: unknown key(s) {sorted(unknown)}; allowed: {sorted(allowed)}")


def _get(spec: Mapping[str, Any], key: str, default: Any) -> Any:
    value = spec.get(key)
    return default if value is None else value


def _release_folder(
    key: str,
    spec: Mapping[str, Any],
    data_dir: str | os.PathLike | None,
    subsets: Sequence[str],
    default_url: str,
    files: Sequence[str],
    release: str,
) -> Path:
    """The folder of one subset of a published EA release (``spec['source']``): under ``data_dir``, else downloaded.

    :raises EADataError: on an unknown subset, or a ``data_dir`` without the subset's folder
    """
    source = spec["source"]
    _check_keys(key, spec)
    subset = spec.get("subset")
    if subset not in subsets:
        raise EADataError(f"ea_datasets.{key}.subset: {subset!r} is not one of {list(subsets)}")
    if data_dir is None:
        return _download_folder(source, subset, spec.get("url") or default_url, files)
    folder = Path(data_dir) / source / subset
    if not folder.is_dir():
        raise EADataError(
            f"ea_datasets.{key}: {folder} does not exist; set data_dir to a folder holding {source}/{subset}/ "
            f"or data_dir: null to download the {release} release"
        )
    return folder


def source_files(key: str, spec: Mapping[str, Any], data_dir: str | os.PathLike | None = None) -> list[tuple[str, str]]:
    """The local files that :func:`load_ea_pair` reads for this entry, each with the config key that names it.

    DBP15k and SRPRS under ``{data_dir}/<source>/<subset>/`` (plus DBP15k's attribute files when that folder exists);
    empty when they are downloaded (``data_dir`` null) or built from a bundled graph (``two_view``).
    """
    source = spec.get("source")
    if data_dir is None or source not in ("dbp15k", "srprs") or not spec.get("subset"):
        return []
    folder = Path(data_dir) / source / str(spec["subset"])
    names = list(_JAPE_FILES if source == "dbp15k" else _SRPRS_FILES)
    files = [(f"ea_datasets.{key}.subset", str(folder / name)) for name in names]
    attributes = folder / "attributes"
    if source == "dbp15k" and attributes.is_dir():
        files += [(f"ea_datasets.{key}.subset", str(path)) for path in sorted(attributes.glob("*.txt"))]
    return files


def load_ea_pair(key: str, spec: Mapping[str, Any], data_dir: str | os.PathLike | None = None) -> EAPair:
    """Load the EA pair that the config entry ``ea_datasets.<key>`` describes (see module doc for the sources).

    :param key: the config key (becomes :attr:`EAPair.name`)
    :param spec: ``{source: dbp15k|srprs|two_view, ...}``
    :param data_dir: a folder with local copies (``{data_dir}/dbp15k/<subset>``, ``{data_dir}/srprs/<subset>``),
        or ``None`` to download (DBP15k, SRPRS) / use PyKEEN's bundled graphs (two_view)
    :returns: the pair, graph 2 relabelled by a seeded permutation (module doc)
    :raises EADataError: on an unknown source or subset, or a malformed file
    """
    source = spec.get("source")
    if source == "dbp15k":
        folder = _release_folder(key, spec, data_dir, DBP15K_SUBSETS, DBP15K_URL, _JAPE_FILES, "GCN-Align")
        lang1, lang2 = spec["subset"].split("_")
        pair = read_jape_folder(folder, key, attribute_folder=folder / "attributes", languages=(lang1, lang2))
        return shuffle_graph2(pair, source, spec["subset"])[0]
    if source == "srprs":
        folder = _release_folder(key, spec, data_dir, SRPRS_SUBSETS, SRPRS_URL, _SRPRS_FILES, "Dual-AMN")
        pair = read_jape_folder(folder, key, split_files={"train": "sup_ent_ids", "test": "ref_ent_ids"})
        return shuffle_graph2(pair, source, spec["subset"])[0]
    if source == "two_view":
        _check_keys(key, spec)
        return two_view_pair(
            name=key,
            dataset=spec.get("dataset") or "umls",
            keep_fraction=float(_get(spec, "keep_fraction", 0.7)),
            seed=int(_get(spec, "seed", 0)),
        )
    raise EADataError(f"ea_datasets.{key}.source: {source!r} is not one of ['dbp15k', 'srprs', 'two_view']")
