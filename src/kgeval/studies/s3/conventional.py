"""The conventional, seed-free row of paper 002's Table 4: a lexical matcher with precision, recall and F1 per split.

The paper runs PARIS (Suchanek et al., 2011; a Java system with iterative relation, class and instance reasoning),
which is not run here. Its stand-in (:func:`lexical_matches`) is the lexical core of such a matcher: a pair
``(a, b)`` is predicted when ``b`` is ``a``'s most name-similar graph-2 entity, ``a`` is ``b``'s most name-similar
graph-1 entity (mutual best match; ties to the lowest id), and their similarity - the best normalized Levenshtein
similarity of their valid names, as ``s_name`` - is at least ``threshold``. Entities without a valid name match
nothing. It uses no seed mappings.

Evaluation (:func:`conventional_scores`, the layout of Table 4): a prediction is judged when its graph-1 or its
graph-2 entity occurs in a reference mapping (a prediction between two unreferenced entities cannot be judged and is
left out); it is correct when it is a reference mapping. Per split (the split of the reference mapping that holds
its graph-1 entity, else its graph-2 entity): precision = correct / judged predictions, recall = correct / reference
mappings of the split, F1 = their harmonic mean. Every reference mapping is a test mapping here (no seeds), so a split
with fewer than :data:`~kgeval.studies.s3.tables.MIN_SPLIT_SIZE` reference mappings is marked too small.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from kgeval.io import read_tsv, write_tsv
from kgeval.studies.s3.features import ATTR_SPLITS, NAME_SPLITS, valid_names
from kgeval.studies.s3.tables import MIN_SPLIT_SIZE

__all__ = ["PARIS_NOTE", "TABLE4_COLUMNS", "lexical_matches", "conventional_scores", "conventional_to_file"]

#: the row that says why PARIS has no values
PARIS_NOTE = "PARIS (Suchanek et al. 2011) is a Java system with iterative reasoning; not run here"
#: the split columns of Table 4
TABLE4_COLUMNS: tuple[str, ...] = (*NAME_SPLITS, *ATTR_SPLITS, "all")


def _flat(names: Sequence[Sequence[str]]) -> tuple[list[str], np.ndarray]:
    strings: list[str] = []
    owners: list[int] = []
    for entity, raw in enumerate(names):
        for name in valid_names(raw):
            strings.append(name)
            owners.append(entity)
    return strings, np.asarray(owners, dtype=np.int64)


def lexical_matches(
    names1: Sequence[Sequence[str]], names2: Sequence[Sequence[str]], threshold: float, chunk: int = 1024
) -> pd.DataFrame:
    """Mutual best name matches with similarity >= threshold (module doc).

    :param names1: per graph-1 entity its raw names
    :param names2: per graph-2 entity its raw names
    :returns: columns ``id1, id2, similarity``, sorted by ``id1``
    """
    s1, o1 = _flat(names1)
    s2, o2 = _flat(names2)
    n1, n2 = len(names1), len(names2)
    if not s1 or not s2:
        return pd.DataFrame({"id1": [], "id2": [], "similarity": []})
    row_value = np.full(n1, -1.0)
    row_best = np.full(n1, -1, dtype=np.int64)
    col_value = np.full(n2, -1.0)
    col_best = np.full(n2, -1, dtype=np.int64)
    for start in range(0, len(s1), chunk):
        sims = process.cdist(
            s1[start : start + chunk], s2, scorer=Levenshtein.normalized_similarity, dtype=np.float32, workers=1
        )
        owners = o1[start : start + chunk]
        # per name string: best graph-2 entity (first maximal string, so the lowest entity id among ties)
        arg = sims.argmax(axis=1)
        val = sims[np.arange(len(arg)), arg]
        for owner, value, column in zip(owners.tolist(), val.tolist(), arg.tolist()):
            entity = int(o2[column])
            if value > row_value[owner] or (value == row_value[owner] and entity < row_best[owner]):
                row_value[owner], row_best[owner] = value, entity
        carg = sims.argmax(axis=0)
        cval = sims[carg, np.arange(sims.shape[1])]
        for column, (value, row) in enumerate(zip(cval.tolist(), carg.tolist())):
            entity2, entity1 = int(o2[column]), int(owners[row])
            if value > col_value[entity2] or (value == col_value[entity2] and entity1 < col_best[entity2]):
                col_value[entity2], col_best[entity2] = value, entity1
    ids1 = np.flatnonzero(row_best >= 0)
    mutual = ids1[(col_best[row_best[ids1]] == ids1) & (row_value[ids1] >= float(threshold))]
    return pd.DataFrame({"id1": mutual, "id2": row_best[mutual], "similarity": row_value[mutual]})


def _f1(precision: float, recall: float) -> float:
    if not np.isfinite(precision) or not np.isfinite(recall) or precision + recall == 0:
        return 0.0 if precision == 0 or recall == 0 else float("nan")
    return 2 * precision * recall / (precision + recall)


def conventional_scores(predictions: pd.DataFrame, features: pd.DataFrame, dataset: str, digits: int = 4) -> pd.DataFrame:
    """Precision, recall and F1 per split in Table 4's layout (module doc), plus the PARIS row.

    :param predictions: ``id1, id2`` (:func:`lexical_matches`)
    :param features: the features table (``id1, id2, name_split, attr_split``)
    :returns: columns ``dataset, system, metric``, the splits of :data:`TABLE4_COLUMNS`, ``n_<split>`` (reference
        mappings), ``num_predicted`` (judged predictions), ``too_small`` (splits under the minimum size), ``note``
    """
    reference = set(zip(features["id1"].tolist(), features["id2"].tolist()))
    split_of1 = {}
    split_of2 = {}
    for row in features.itertuples(index=False):
        splits = {"all", row.name_split}
        if isinstance(row.attr_split, str):
            splits.add(row.attr_split)
        split_of1[row.id1] = splits
        split_of2[row.id2] = splits
    judged = {s: 0 for s in TABLE4_COLUMNS}
    correct = {s: 0 for s in TABLE4_COLUMNS}
    for a, b in zip(predictions["id1"].tolist(), predictions["id2"].tolist()):
        splits = split_of1.get(a) or split_of2.get(b)
        if not splits:
            continue
        hit = (a, b) in reference
        for s in splits:
            judged[s] += 1
            correct[s] += int(hit)
    sizes = {s: 0 for s in TABLE4_COLUMNS}
    for splits in split_of1.values():
        for s in splits:
            sizes[s] += 1
    has_attr = features["attr_split"].notna().any()
    columns = [s for s in TABLE4_COLUMNS if has_attr or s not in ATTR_SPLITS]
    values = {"precision": {}, "recall": {}, "f1": {}}
    for s in TABLE4_COLUMNS:
        if s not in columns:
            for m in values:
                values[m][s] = float("nan")
            continue
        p = correct[s] / judged[s] if judged[s] else float("nan")
        r = correct[s] / sizes[s] if sizes[s] else float("nan")
        values["precision"][s], values["recall"][s], values["f1"][s] = p, r, _f1(p, r)
    too_small = ", ".join(s for s in columns if sizes[s] < MIN_SPLIT_SIZE)
    rows = []
    for metric, by_split in values.items():
        row: dict[str, Any] = {"dataset": dataset, "system": "lexical_matcher", "metric": metric}
        row.update({s: round(v, digits) if np.isfinite(v) else np.nan for s, v in by_split.items()})
        row.update({f"n_{s}": sizes[s] for s in TABLE4_COLUMNS})
        row.update({"num_predicted": judged["all"], "too_small": too_small, "note": "seed-free mutual best name match"})
        rows.append(row)
    for metric in values:
        row = {"dataset": dataset, "system": "PARIS", "metric": metric, "note": PARIS_NOTE}
        rows.append(row)
    columns_out = ["dataset", "system", "metric", *TABLE4_COLUMNS, *[f"n_{s}" for s in TABLE4_COLUMNS], "num_predicted", "too_small", "note"]
    return pd.DataFrame(rows).reindex(columns=columns_out)


def conventional_to_file(
    keys: Sequence[str],
    source_specs: Mapping[str, Mapping[str, Any]],
    settings: Mapping[str, Mapping[str, Any]],
    data_dir: str | None,
    features_paths: Sequence[str | os.PathLike],
    threshold: float,
    out: str | os.PathLike,
) -> pd.DataFrame:
    """Table 4 for every S3 pair: run the lexical matcher on each pair and write ``table4.tsv``."""
    from kgeval.studies.s3.jobs import load_pair_for

    frames = []
    for key, features_path in zip(keys, features_paths):
        s3pair = load_pair_for(key, source_specs[key], settings.get(key), data_dir)
        predictions = lexical_matches(s3pair.names1, s3pair.names2, threshold)
        frames.append(conventional_scores(predictions, read_tsv(features_path), key))
    table = pd.concat(frames, ignore_index=True)
    write_tsv(table, out, sort_by=[])
    return table
