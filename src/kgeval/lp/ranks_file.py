"""A ranks file from elsewhere (``source: ranks``): read, checked against its dataset, turned into ranks tables.

The file is a TSV with a header line (``.tsv``, ``.txt``, ``.tsv.gz``) or a Parquet file, one row per evaluation
triple and side:

- ``head, relation, tail``: labels as in the dataset's triples files; ``side``: ``head`` or ``tail`` (the entity
  that was predicted);
- either ``rank`` (one whole-number rank: taken as every rank type, since no ties are known) or
  ``rank_optimistic`` and ``rank_pessimistic`` (the best and worst position among tied scores); optional
  ``rank_realistic`` (must be their mean) and ``rank_nondeterministic`` (else drawn uniformly between the two with
  the run's seed: a random tie-break);
- optional ``num_candidates``: kgeval counts them from the dataset (the filtered count: every entity but the other
  known answers of train, valid and test, as kgeval ranks), and a given column must agree, which checks that the
  ranks were filtered the same way (paired comparisons need that); ``score`` (the true triple's score; else minus the realistic rank, a
  stand-in that orders a question's answers as their ranks do, read only by S4's re-filtering) and ``split``
  (``valid`` or ``test``; else each row counts for every split holding its triple).

Every triple of every ranked split needs both sides; rows are matched to the dataset's triples by label, so the
ranks tables come out in the order of :func:`kgeval.lp.ranks.ranks_frame` (head rows, then tail rows, each in the
split's order) with the same columns. Each problem is a :class:`RanksFileError` naming the file, the line (the
header is line 1; a Parquet file's rows count from 1) and the fix.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kgeval.io import atomic_path, write_json, write_parquet
from kgeval.lp.datasets import LPData, load_dataset
from kgeval.lp.filtering import FilterIndex, as_triples_array
from kgeval.tables import LP_KEY_COLUMNS, RANK_COLUMNS

__all__ = ["RanksFileError", "COLUMNS", "read_table", "read_ranks_file", "write_ranks_file", "import_ranks"]

logger = logging.getLogger(__name__)

#: every column a ranks file may have
COLUMNS: tuple[str, ...] = (
    *LP_KEY_COLUMNS, "rank", "rank_optimistic", "rank_realistic", "rank_pessimistic", "rank_nondeterministic",
    "num_candidates", "score", "split",
)
_TSV_SUFFIXES = (".tsv", ".txt", ".tsv.gz", ".txt.gz")
_NUMERIC = ("rank", "rank_optimistic", "rank_realistic", "rank_pessimistic", "rank_nondeterministic",
            "num_candidates", "score")
#: every split a triple can be evaluated on
_EVALUATION_SPLITS = ("valid", "test")


class RanksFileError(ValueError):
    """A ranks file that cannot be read or does not fit its dataset; the message names the file, line and fix."""


class _Lines:
    """Turns a row position of the file into the words that name it (``FILE, line N``)."""

    def __init__(self, path: str | os.PathLike, parquet: bool) -> None:
        self.path, self.parquet = str(path), parquet

    def __call__(self, position: int) -> str:
        return f"{self.path}, row {position + 1}" if self.parquet else f"{self.path}, line {position + 2}"


def read_table(path: str | os.PathLike) -> tuple[pd.DataFrame, _Lines]:
    """Read a ranks file as written (labels as strings, numbers checked), with a ``_line`` position column.

    :return: the rows and the function naming a position
    :raises RanksFileError: for a missing or unreadable file, an unknown suffix, an unknown or missing column, or a
        value that is not a number
    """
    path = Path(path)
    name = path.name.lower()
    parquet = name.endswith(".parquet")
    if not parquet and not name.endswith(_TSV_SUFFIXES):
        raise RanksFileError(f"{path}: a ranks file is a .tsv (with a header line) or a .parquet file; rename it")
    try:
        frame = (pd.read_parquet(path) if parquet
                 else pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, na_values=[""]))
    except (OSError, ValueError) as error:
        raise RanksFileError(f"{path}: cannot be read ({type(error).__name__}: {error})") from None
    lines = _Lines(path, parquet)
    unknown = [c for c in frame.columns if c not in COLUMNS]
    missing = [c for c in LP_KEY_COLUMNS if c not in frame.columns]
    if unknown or missing:
        problem = f"unknown column(s) {unknown}" if unknown else f"missing column(s) {missing}"
        raise RanksFileError(f"{path}: {problem}; a ranks file has the columns {list(COLUMNS)} (see docs/byo.md)")
    frame = frame.reset_index(drop=True)
    for column in (*LP_KEY_COLUMNS, "split"):
        if column in frame:
            _no_blanks(frame, column, lines)
            frame[column] = frame[column].astype(str)
    for column in _NUMERIC:
        if column in frame:
            values = pd.to_numeric(frame[column], errors="coerce")
            bad = np.flatnonzero(values.isna().to_numpy())
            if len(bad):
                raise RanksFileError(f"{lines(bad[0])}: {column} {frame[column].iloc[bad[0]]!r} is not a number")
            frame[column] = values.astype(np.float64)
    frame["_line"] = np.arange(len(frame))
    return frame, lines


def _no_blanks(frame: pd.DataFrame, column: str, lines: _Lines) -> None:
    blank = np.flatnonzero(frame[column].isna().to_numpy())
    if len(blank):
        raise RanksFileError(f"{lines(blank[0])}: {column} is empty; every row needs {list(LP_KEY_COLUMNS)}")


def _check_keys(frame: pd.DataFrame, data: LPData, lines: _Lines) -> None:
    """Labels the dataset knows, sides ``head``/``tail``, splits ``valid``/``test``, one row per key."""
    for column, known, what in (("head", data.training.entity_to_id, "an entity"),
                                ("tail", data.training.entity_to_id, "an entity"),
                                ("relation", data.training.relation_to_id, "a relation")):
        bad = np.flatnonzero(~frame[column].isin(list(known)).to_numpy())
        if len(bad):
            raise RanksFileError(
                f"{lines(bad[0])}: {column} {frame[column].iloc[bad[0]]!r} is not {what} of dataset {data.name!r} "
                f"({len(bad)} row(s) like it); use the labels of the dataset's triples files, or point the entry's "
                "dataset at the one the ranks were computed on"
            )
    for column, allowed in (("side", ("head", "tail")), ("split", _EVALUATION_SPLITS)):
        if column in frame:
            bad = np.flatnonzero(~frame[column].isin(allowed).to_numpy())
            if len(bad):
                raise RanksFileError(f"{lines(bad[0])}: {column} {frame[column].iloc[bad[0]]!r}; use one of "
                                     f"{list(allowed)}")
    keys = [*LP_KEY_COLUMNS, *(["split"] if "split" in frame else [])]
    again = np.flatnonzero(frame.duplicated(keys, keep="first").to_numpy())
    if len(again):
        row = frame.iloc[again[0]]
        first = int(np.flatnonzero((frame[keys] == row[keys]).all(axis=1).to_numpy())[0])
        raise RanksFileError(
            f"{lines(again[0])}: ({row['head']}, {row['relation']}, {row['tail']}) side {row['side']} appears again "
            f"(first at {lines(first).rsplit(', ', 1)[1]}); keep one row per triple and side"
        )


def _ranks(frame: pd.DataFrame, lines: _Lines, path: str) -> pd.DataFrame:
    """The optimistic, realistic, pessimistic (and, when given, non-deterministic) rank of every row."""
    single = "rank" in frame
    pair = "rank_optimistic" in frame and "rank_pessimistic" in frame
    if single == pair or (not pair and ("rank_optimistic" in frame or "rank_pessimistic" in frame)):
        raise RanksFileError(
            f"{path}: give either one rank column `rank`, or `rank_optimistic` and `rank_pessimistic` (found "
            f"{[c for c in frame.columns if c.startswith('rank')]})"
        )
    columns = ["rank"] if single else ["rank_optimistic", "rank_pessimistic", "rank_nondeterministic"]
    for column in (c for c in columns if c in frame):
        values = frame[column].to_numpy()
        bad = np.flatnonzero((values < 1) | (values != np.round(values)))
        if len(bad):
            hint = ("; tie-averaged ranks (the mean position among tied scores) cannot be split back: export "
                    "rank_optimistic and rank_pessimistic (best and worst position among ties) instead"
                    if values[bad[0]] >= 1 else "; ranks count from 1 (add 1 to 0-based ranks)")
            raise RanksFileError(f"{lines(bad[0])}: {column} {values[bad[0]]:g} is not a whole number of at least 1"
                                 f"{hint}")
    out = frame.copy()
    if single:
        for kind in ("optimistic", "pessimistic"):
            out[f"rank_{kind}"] = frame["rank"]
    bad = np.flatnonzero((out["rank_optimistic"] > out["rank_pessimistic"]).to_numpy())
    if len(bad):
        raise RanksFileError(f"{lines(bad[0])}: rank_optimistic is above rank_pessimistic; swap the two columns?")
    realistic = (out["rank_optimistic"] + out["rank_pessimistic"]) / 2
    if "rank_realistic" in frame:
        bad = np.flatnonzero(~np.isclose(frame["rank_realistic"], realistic, rtol=0, atol=1e-6))
        if len(bad):
            raise RanksFileError(f"{lines(bad[0])}: rank_realistic is not the mean of rank_optimistic and "
                                 "rank_pessimistic; drop the column (kgeval computes it)")
    out["rank_realistic"] = realistic
    if "rank_nondeterministic" in out:
        bad = np.flatnonzero(((out["rank_nondeterministic"] < out["rank_optimistic"])
                              | (out["rank_nondeterministic"] > out["rank_pessimistic"])).to_numpy())
        if len(bad):
            raise RanksFileError(f"{lines(bad[0])}: rank_nondeterministic lies outside [rank_optimistic, "
                                 "rank_pessimistic]")
    return out.drop(columns=["rank"], errors="ignore")


def _split_rows(data: LPData, split: str) -> pd.DataFrame:
    """The rows a ranks table of ``split`` has, in :func:`kgeval.lp.ranks.ranks_frame`'s order, with ids."""
    ids = as_triples_array(data.factory(split).mapped_triples)
    entities = np.empty(data.num_entities, dtype=object)
    for label, index in data.training.entity_to_id.items():
        entities[index] = label
    relations = np.empty(len(data.training.relation_to_id), dtype=object)
    for label, index in data.training.relation_to_id.items():
        relations[index] = label
    frames = [
        pd.DataFrame({"head": entities[ids[:, 0]].astype(str), "relation": relations[ids[:, 1]].astype(str),
                      "tail": entities[ids[:, 2]].astype(str), "side": side,
                      "_anchor": ids[:, 2 if side == "head" else 0], "_relation": ids[:, 1]})
        for side in ("head", "tail")
    ]
    return pd.concat(frames, ignore_index=True)


def _not_evaluated(frame: pd.DataFrame, data: LPData, lines: _Lines) -> None:
    """Every row's triple must be a triple of a split it is given for (any evaluation split when none is)."""
    keys = ["head", "relation", "tail"]
    found = np.zeros(len(frame), dtype=bool)
    for split in _EVALUATION_SPLITS:
        triples = _split_rows(data, split)[keys].drop_duplicates()
        hit = frame[keys].merge(triples, on=keys, how="left", indicator=True)["_merge"].eq("both").to_numpy().copy()
        if "split" in frame:
            hit &= frame["split"].eq(split).to_numpy()
        found |= hit
    bad = np.flatnonzero(~found)
    if len(bad):
        row = frame.iloc[bad[0]]
        where = f"a {row['split']} triple" if "split" in frame else "a valid or test triple"
        raise RanksFileError(
            f"{lines(bad[0])}: ({row['head']}, {row['relation']}, {row['tail']}) is not {where} of dataset "
            f"{data.name!r} ({len(bad)} row(s) like it); a ranks file ranks the dataset's evaluation triples"
        )


def _missing(expected: pd.DataFrame, frame: pd.DataFrame, split: str, lines: _Lines, path: str) -> RanksFileError:
    """The error for the first evaluation row without a rank: a missing side, a missing triple or a missing split."""
    absent = expected[expected["_line"].isna()]
    row = absent.iloc[0]
    if len(absent) == len(expected):
        return RanksFileError(
            f"{path}: no ranks for split {split} ({len(expected) // 2} triples); add its rows, or rank fewer splits "
            f"(ranking.splits: {[s for s in _EVALUATION_SPLITS if s != split]})"
        )
    other = "tail" if row["side"] == "head" else "head"
    same = frame[(frame["head"] == row["head"]) & (frame["relation"] == row["relation"])
                 & (frame["tail"] == row["tail"]) & (frame["side"] == other)]
    triple = f"({row['head']}, {row['relation']}, {row['tail']})"
    if len(same):
        return RanksFileError(
            f"{lines(int(same['_line'].iloc[0]))}: {triple} has a {other} row but no {row['side']} row "
            f"({len(absent)} (triple, side) pair(s) of split {split} lack a row); every triple needs both sides"
        )
    return RanksFileError(
        f"{path}: the {split} triple {triple} has no rows ({len(absent)} (triple, side) pair(s) of split {split} "
        "lack a row); a ranks file ranks every triple of the split, on both sides"
    )


def _split_table(frame: pd.DataFrame, data: LPData, split: str, index: FilterIndex, lines: _Lines) -> pd.DataFrame:
    """One split's ranks table: the split's rows in order, joined to the file's, checked, with every column."""
    rows = frame[frame["split"] == split] if "split" in frame else frame
    expected = _split_rows(data, split).merge(rows, on=list(LP_KEY_COLUMNS), how="left", sort=False)
    if expected["_line"].isna().any():
        raise _missing(expected, frame, split, lines, lines.path)
    counts = np.empty(len(expected), dtype=np.float64)
    for side in ("head", "tail"):
        mask = expected["side"].eq(side).to_numpy()
        anchors, relations = expected["_anchor"].to_numpy()[mask], expected["_relation"].to_numpy()[mask]
        counts[mask] = data.num_entities - index.counts(side, anchors, relations) + 1
    if "num_candidates" in expected:
        bad = np.flatnonzero(expected["num_candidates"].to_numpy() != counts)
        if len(bad):
            row = expected.iloc[bad[0]]
            raise RanksFileError(
                f"{lines(int(row['_line']))}: num_candidates {row['num_candidates']:g} differs from the dataset's "
                f"{int(counts[bad[0]])} (filtered: every entity but the other known answers of train, valid and "
                f"test; {len(bad)} row(s) differ). The ranks were filtered otherwise, and would not compare with "
                "kgeval's; rank them filtered by all three splits, or drop the column if they are"
            )
    bad = np.flatnonzero(expected["rank_pessimistic"].to_numpy() > counts)
    if len(bad):
        row = expected.iloc[bad[0]]
        raise RanksFileError(
            f"{lines(int(row['_line']))}: rank {row['rank_pessimistic']:g} is above its {int(counts[bad[0]])} "
            "candidates (filtered: every entity but the other known answers of train, valid and test); are the "
            "ranks raw (unfiltered)? kgeval evaluates filtered ranks"
        )
    expected["num_candidates"] = counts
    return expected


def _finish(table: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """The columns and dtypes of :func:`kgeval.lp.ranks.ranks_frame`; stand-ins for what the file did not give."""
    if "rank_nondeterministic" not in table:
        low, high = table["rank_optimistic"].to_numpy(), table["rank_pessimistic"].to_numpy()
        table["rank_nondeterministic"] = low + np.floor(rng.random(len(table)) * (high - low + 1))
    if "score" not in table:
        table["score"] = -table["rank_realistic"]
    out = table[[*LP_KEY_COLUMNS, *RANK_COLUMNS]].copy()
    for column in ("rank_optimistic", "rank_pessimistic", "rank_nondeterministic", "num_candidates"):
        out[column] = out[column].astype(np.int64)
    for column in ("rank_realistic", "score"):
        out[column] = out[column].astype(np.float64)
    return out.reset_index(drop=True)


def read_ranks_file(
    path: str | os.PathLike, data: LPData, splits: Sequence[str], seed: int
) -> dict[str, pd.DataFrame]:
    """Read and check a ranks file; return a ranks table per split (the columns of ``docs/design.md``).

    :param path: the file (see the module docstring for its columns)
    :param data: the dataset the ranks were computed on
    :param splits: the splits to return (each must be covered, on both sides)
    :param seed: seed of the random tie-break that draws the non-deterministic rank when the file has none
    :raises RanksFileError: naming the file, the line and the fix
    """
    frame, lines = read_table(path)
    _check_keys(frame, data, lines)
    frame = _ranks(frame, lines, str(path))
    _not_evaluated(frame, data, lines)
    index = FilterIndex([as_triples_array(t) for t in data.all_mapped_triples()],
                        num_entities=data.num_entities, num_relations=data.num_relations)
    rng = np.random.default_rng(seed)
    return {split: _finish(_split_table(frame, data, split, index, lines), rng) for split in splits}


def write_ranks_file(table: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write a ranks file (TSV with a header line, or Parquet by the suffix), atomically: e.g. a ranks table of
    kgeval's, or the columns of :data:`COLUMNS` that another tool gives.

    :raises RanksFileError: for a column a ranks file does not have, or another suffix
    """
    unknown = [c for c in table.columns if c not in COLUMNS]
    if unknown:
        raise RanksFileError(f"{path}: a ranks file has no column(s) {unknown}; allowed: {list(COLUMNS)}")
    name = Path(path).name.lower()
    if name.endswith(".parquet"):
        write_parquet(table, path)
    elif name.endswith(_TSV_SUFFIXES):
        with atomic_path(path) as tmp:
            table.to_csv(tmp, sep="\t", index=False, float_format="%.17g")
    else:
        raise RanksFileError(f"{path}: name a ranks file .tsv or .parquet")


def import_ranks(
    spec: Mapping[str, Any],
    dataset_spec: Mapping[str, Any],
    data_dir: str | None,
    splits: Sequence[str],
    seed: int,
    ranks_outs: Sequence[str],
    info_out: str,
) -> dict[str, pd.DataFrame]:
    """Read the ranks file of a ``source: ranks`` model and write its ranks tables (one per split) and a record.

    :param spec: the model's config entry (``path``, ``dataset``)
    :param dataset_spec: the config entry of its dataset
    :param data_dir: the config's ``data_dir``
    :param splits: the ranked splits, in the order of ``ranks_outs``
    :param seed: the run's seed (the random tie-break of the non-deterministic rank, when the file has none)
    :param ranks_outs: ``results/ranks/{dataset}/{model}/{seed}/{split}.parquet`` per split
    :param info_out: a JSON record: the file, its columns, and which columns kgeval filled in
    """
    data = load_dataset(spec["dataset"], dict(dataset_spec), data_dir)
    tables = read_ranks_file(spec["path"], data, splits, seed)
    for split, out in zip(splits, ranks_outs, strict=True):
        write_parquet(tables[split], out)
    columns = [c for c in read_table(spec["path"])[0].columns if c != "_line"]
    filled = [c for c in ("rank_nondeterministic", "num_candidates", "score") if c not in columns]
    if "rank" in columns:
        filled = ["rank_optimistic", "rank_realistic", "rank_pessimistic", *filled]
    write_json({"source": "ranks", "path": str(spec["path"]), "dataset": spec["dataset"], "columns": columns,
                "filled_in": filled, "rows": {s: len(t) for s, t in tables.items()}}, info_out)
    logger.info("imported %s for dataset %s (filled in: %s)", spec["path"], spec["dataset"], ", ".join(filled) or "-")
    return tables
