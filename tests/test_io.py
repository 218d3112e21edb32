"""kgeval.io: atomic writers (a failed writer leaves the old file or nothing) and the TSV/Parquet/JSON round trips."""

from __future__ import annotations

import csv
import json
import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kgeval.io import atomic_path, read_tsv, write_json, write_parquet, write_tsv


def _table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "dataset": ["b", "a", "b", "a", "c"],
            "side": ["tail", "head", "head", "tail", "NA"],
            "value": [0.1, 1 / 3, 2.5e-12, 12345.678, np.nan],
            "count": [3, 1, 2, 5, 4],
        }
    )


def test_interrupted_write_leaves_nothing(tmp_path):
    target = tmp_path / "out" / "model.pt"
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"partial")
            raise KeyboardInterrupt
    assert not target.exists()
    assert list(target.parent.iterdir()) == []


def test_failed_writer_keeps_the_old_file(tmp_path):
    target = tmp_path / "table.tsv"
    target.write_text("old\n")
    with pytest.raises(ValueError, match="half way"):
        with atomic_path(target) as tmp:
            assert tmp.parent == target.parent and tmp != target
            assert tmp.name.endswith(".tsv")  # the destination's suffix, for writers that infer the format
            tmp.write_text("new but partial")
            raise ValueError("half way")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["table.tsv"]


def test_successful_block_replaces_the_file_with_plain_permissions(tmp_path):
    target = tmp_path / "deep" / "er" / "x.tsv.gz"
    with atomic_path(target) as tmp:
        assert "".join(tmp.suffixes).endswith(".tsv.gz")
        tmp.write_bytes(b"complete")
    assert target.read_bytes() == b"complete"
    assert sorted(p.name for p in target.parent.iterdir()) == ["x.tsv.gz"]
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask


def test_suffix_of_the_temporary_file(tmp_path):
    with atomic_path(tmp_path / "x.tsv", suffix=".part") as tmp:
        assert tmp.name.endswith(".part")
        tmp.write_text("x")
    assert (tmp_path / "x.tsv").read_text() == "x"


def test_write_tsv_sorts_by_every_column(tmp_path):
    df = _table()
    write_tsv(df, tmp_path / "t.tsv")
    with open(tmp_path / "t.tsv", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    assert rows[0] == list(df.columns)
    # sorted by dataset, then side (plain string order)
    assert [(r[0], r[1]) for r in rows[1:]] == sorted((d, s) for d, s in zip(df["dataset"], df["side"]))


def test_write_tsv_sort_by_is_stable(tmp_path):
    df = pd.DataFrame({"key": [2, 1, 2, 1], "order": ["first", "first", "second", "second"]})
    write_tsv(df, tmp_path / "t.tsv", sort_by=["key"])
    back = read_tsv(tmp_path / "t.tsv")
    assert back["key"].tolist() == [1, 1, 2, 2]
    assert back["order"].tolist() == ["first", "second", "first", "second"]  # ties keep their input order
    write_tsv(df, tmp_path / "u.tsv", sort_by=[])
    pd.testing.assert_frame_equal(read_tsv(tmp_path / "u.tsv"), df)  # no sort keys: the input order


def test_tsv_round_trip(tmp_path):
    df = _table()
    write_tsv(df, tmp_path / "t.tsv", sort_by=["count"])
    back = read_tsv(tmp_path / "t.tsv")
    expected = df.sort_values("count").reset_index(drop=True)
    # "NA" stays a string; only an empty field is missing; floats keep 10 significant digits
    assert back["side"].tolist() == expected["side"].tolist()
    assert back["dataset"].tolist() == expected["dataset"].tolist()
    assert back["count"].tolist() == expected["count"].tolist()
    np.testing.assert_allclose(back["value"].to_numpy(), expected["value"].to_numpy(), rtol=1e-9, equal_nan=True)
    assert back["value"].isna().tolist() == [False, False, False, True, False]


def test_parquet_round_trip(tmp_path):
    df = _table()
    write_parquet(df, tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "t.parquet"), df)
    assert [p.name for p in tmp_path.iterdir()] == ["t.parquet"]


def test_json_round_trip_sorted_keys(tmp_path):
    obj = {"b": [1, 2.5], "a": {"z": None, "y": "text"}, "path": Path("/x/y")}
    write_json(obj, tmp_path / "o.json")
    text = (tmp_path / "o.json").read_text()
    assert text.endswith("}\n")
    assert json.loads(text) == {"a": {"y": "text", "z": None}, "b": [1, 2.5], "path": "/x/y"}
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    assert text.index('"a"') < text.index('"b"') < text.index('"path"')
