"""LibKGE's per-example evaluation trace turned into a ranks file (:mod:`kgeval.lp.ranks_file`).

With ``eval.trace_level: example`` LibKGE's entity-ranking job writes one trace entry per evaluation triple and task,
one entry a line (a flow mapping: JSON or YAML), with ``event: example_rank``, ``task`` (``sp``: the tail was
predicted; ``po``: the head), the triple's ids ``s, p, o``, the raw ``rank``, ``rank_filtered`` (filtered by the job's
``filter_splits``) and, when ``entity_ranking.filter_with_test`` is on, ``rank_filtered_with_test`` (also filtered by
the test triples), the ``split`` evaluated and the ``epoch``. kgeval ranks filtered by train, valid and test, so it
reads ``rank_filtered_with_test`` and refuses a trace without it. The ids are LibKGE's: the dataset folder's
``entity_ids.del`` and ``relation_ids.del`` (``index<TAB>label``) give their labels. A trace that evaluated several
epochs gives the last one's ranks.

``kgeval libkge-trace TRACE --ids LIBKGE_DATASET_FOLDER --out ranks.tsv`` writes the ranks file; a ``source: ranks``
entry then reads it with every check of a ranks file (labels, coverage, candidate counts).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

from kgeval.lp.ranks_file import RanksFileError, write_ranks_file

__all__ = ["EVENT", "SIDE_OF_TASK", "read_libkge_ids", "read_trace", "trace_to_ranks", "add_subparser"]

#: the trace event of one example's rank
EVENT = "example_rank"
#: LibKGE's task -> the side kgeval calls the predicted entity
SIDE_OF_TASK = {"sp": "tail", "po": "head"}
_RANK = "rank_filtered_with_test"


def read_libkge_ids(folder: str | os.PathLike) -> dict[str, dict[int, str]]:
    """The labels of LibKGE's entity and relation indices (``entity_ids.del``, ``relation_ids.del`` in ``folder``).

    :return: ``{"entity": {index: label}, "relation": {...}}``
    :raises RanksFileError: naming a missing or damaged file
    """
    out = {}
    for kind in ("entity", "relation"):
        path = Path(folder) / f"{kind}_ids.del"
        if not path.is_file():
            raise RanksFileError(f"{path} does not exist; --ids names LibKGE's dataset folder (entity_ids.del, "
                                 "relation_ids.del)")
        frame = pd.read_csv(path, sep="\t", header=None, names=["index", "label"], dtype={"label": str},
                            keep_default_na=False)
        out[kind] = dict(zip(frame["index"].astype(int), frame["label"]))
    return out


def _entry(line: str, where: str) -> dict[str, Any]:
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        import yaml

        try:
            entry = yaml.safe_load(line)
        except yaml.YAMLError as error:
            raise RanksFileError(f"{where}: not a trace entry ({type(error).__name__})") from None
        if not isinstance(entry, dict):
            raise RanksFileError(f"{where}: not a trace entry (a mapping per line)") from None
        return entry


def read_trace(path: str | os.PathLike) -> pd.DataFrame:
    """The ``example_rank`` entries of a LibKGE trace file (of its last epoch), with their line numbers.

    :return: columns ``line, split, task, s, p, o, rank_filtered_with_test``
    :raises RanksFileError: for a file without such entries, or entries without ``rank_filtered_with_test``
    """
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if EVENT not in line:
                continue
            entry = _entry(line, f"{path}, line {number}")
            if entry.get("event") != EVENT:
                continue
            if _RANK not in entry:
                raise RanksFileError(
                    f"{path}, line {number}: the entry has no {_RANK} (its rank_filtered leaves the test triples "
                    "in); kgeval ranks filtered by train, valid and test: evaluate with "
                    "entity_ranking.filter_with_test: True"
                )
            split = entry.get("split", entry.get("data"))
            rows.append((number, split, entry["task"], entry["s"], entry["p"], entry["o"], entry[_RANK],
                         entry.get("epoch", 0)))
    if not rows:
        raise RanksFileError(f"{path}: no {EVENT} entries; run LibKGE's evaluation with eval.trace_level: example")
    frame = pd.DataFrame(rows, columns=["line", "split", "task", "s", "p", "o", _RANK, "epoch"])
    return frame[frame["epoch"] == frame["epoch"].max()].drop(columns="epoch").reset_index(drop=True)


def trace_to_ranks(path: str | os.PathLike, ids_folder: str | os.PathLike) -> pd.DataFrame:
    """A ranks file's rows from a LibKGE trace: ``head, relation, tail, side, split, rank``.

    :raises RanksFileError: naming the trace's line of an unknown task or index
    """
    trace = read_trace(path)
    labels = read_libkge_ids(ids_folder)
    columns = {}
    for column, kind in (("s", "entity"), ("p", "relation"), ("o", "entity")):
        mapped = trace[column].map(labels[kind])
        if mapped.isna().any():
            bad = trace[mapped.isna()].iloc[0]
            raise RanksFileError(f"{path}, line {bad['line']}: {kind} index {bad[column]} is not in "
                                 f"{ids_folder}/{kind}_ids.del; --ids names the dataset folder the model was run on")
        columns[column] = mapped
    unknown = trace[~trace["task"].isin(list(SIDE_OF_TASK))]
    if len(unknown):
        raise RanksFileError(f"{path}, line {unknown['line'].iloc[0]}: task {unknown['task'].iloc[0]!r}; kgeval "
                             "reads the entity-ranking tasks sp and po")
    return pd.DataFrame({"head": columns["s"], "relation": columns["p"], "tail": columns["o"],
                         "side": trace["task"].map(SIDE_OF_TASK), "split": trace["split"],
                         "rank": trace[_RANK].astype(int)})


def add_subparser(subparsers: Any) -> None:
    """``kgeval libkge-trace TRACE --ids FOLDER --out FILE``."""
    parser = subparsers.add_parser(
        "libkge-trace", help="turn a LibKGE per-example trace (eval.trace_level: example) into a ranks file")
    parser.add_argument("trace", help="LibKGE's trace file (trace.yaml of the evaluation job)")
    parser.add_argument("--ids", required=True, help="LibKGE's dataset folder (entity_ids.del, relation_ids.del)")
    parser.add_argument("--out", required=True, help="the ranks file to write (.tsv or .parquet)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    table = trace_to_ranks(args.trace, args.ids)
    write_ranks_file(table, args.out)
    print(f"{args.out}: {len(table)} ranks; read it with source: ranks (docs/byo.md)")
    return 0
