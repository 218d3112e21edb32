"""The dataset cache: a cached load builds the same factories as a fresh one, any change of a file misses, a broken or
interrupted entry is never trusted, and ``KGEVAL_CACHE_DIR=off`` writes nothing."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

import kgeval.lp.dataset_cache as dataset_cache
from kgeval.lp.datasets import DatasetError, LPData, load_dataset


def write_splits(folder, extra_test: str = "") -> dict:
    """Three small split files; the test split has a triple with an entity unseen in training (dropped)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = {
        "train": ["a\tr\tb", "b\tr\tc", "c\ts\ta", "00012\ts\tb", "b\tt\tc"],
        "valid": ["a\ts\tc", "a\tr\tzz"],
        "test": ["c\tr\tb", "b\ts\t00012", "yy\tr\ta"],
    }
    for split, lines in rows.items():
        text = "\n".join(lines) + "\n" + (extra_test if split == "test" else "")
        (folder / f"{split}.tsv").write_text(text, encoding="utf-8")
    return {"source": "files", **{split: str(folder / f"{split}.tsv") for split in rows}}


def assert_same(expected: LPData, actual: LPData) -> None:
    assert (actual.name, actual.num_dropped) == (expected.name, expected.num_dropped)
    for split in ("train", "valid", "test"):
        a, b = expected.factory(split), actual.factory(split)
        assert torch.equal(a.mapped_triples, b.mapped_triples), split
        assert a.entity_to_id == b.entity_to_id and a.relation_to_id == b.relation_to_id
        assert (a.num_entities, a.num_relations, a.create_inverse_triples, a.metadata) == (
            b.num_entities, b.num_relations, b.create_inverse_triples, b.metadata
        )
        assert np.array_equal(a.triples, b.triples)


def entries(tmp_path) -> list:
    folder = tmp_path / "cache" / "datasets"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KGEVAL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "datasets"


def fresh(key: str, spec: dict, monkeypatch) -> LPData:
    with monkeypatch.context() as m:
        m.setenv("KGEVAL_CACHE_DIR", "off")
        return load_dataset(key, spec)


def test_a_cached_load_builds_the_same_factories(tmp_path, cache, monkeypatch, caplog):
    spec = write_splits(tmp_path / "data")
    expected = fresh("mine", spec, monkeypatch)
    assert expected.num_dropped == {"train": 0, "valid": 1, "test": 1}
    first = load_dataset("mine", spec)
    assert len(entries(tmp_path)) == 1
    monkeypatch.setattr(dataset_cache, "write_entry", lambda *a: pytest.fail("a hit writes nothing"))
    with caplog.at_level(logging.WARNING, logger="kgeval.lp.datasets"):
        second = load_dataset("mine", spec)
    assert "mine/test: dropped 1 triples" in caplog.text  # a hit reports the drops too
    assert_same(expected, first)
    assert_same(expected, second)


def test_nations_from_the_cache_equals_pykeens_files(cache, monkeypatch):
    spec = {"source": "pykeen", "name": "Nations"}
    expected = fresh("nations", spec, monkeypatch)
    load_dataset("nations", spec)
    assert_same(expected, load_dataset("nations", spec))


def test_a_changed_file_or_key_misses(tmp_path, cache):
    spec = write_splits(tmp_path / "data")
    assert load_dataset("mine", spec).testing.num_triples == 2
    changed = write_splits(tmp_path / "data", extra_test="a\tt\tc\n")
    data = load_dataset("mine", changed)
    assert data.testing.num_triples == 3
    load_dataset("other", changed)
    assert len(entries(tmp_path)) == 3
    # the same length, one label changed
    test_file = tmp_path / "data" / "test.tsv"
    test_file.write_text(test_file.read_text(encoding="utf-8").replace("c\tr\tb", "c\ts\tb"), encoding="utf-8")
    labels = {tuple(row) for row in load_dataset("mine", changed).testing.triples.tolist()}
    assert labels == {("c", "s", "b"), ("b", "s", "00012"), ("a", "t", "c")}
    assert len(entries(tmp_path)) == 4


def test_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("KGEVAL_CACHE_DIR", "off")
    assert dataset_cache.cache_dir() is None
    load_dataset("mine", write_splits(tmp_path / "data"))
    assert not (tmp_path / "cache").exists()


def test_a_broken_entry_is_ignored_and_rewritten(tmp_path, cache, monkeypatch, caplog):
    spec = write_splits(tmp_path / "data")
    expected = fresh("mine", spec, monkeypatch)
    load_dataset("mine", spec)
    (entry,) = cache.iterdir()
    entry.write_bytes(entry.read_bytes()[:100])
    with caplog.at_level(logging.WARNING, logger="kgeval.lp.dataset_cache"):
        assert_same(expected, load_dataset("mine", spec))
    assert "ignoring an unreadable dataset cache entry" in caplog.text
    factories, dropped = dataset_cache.read_entry(entry)
    assert_same(expected, LPData("mine", *factories, dropped))


def test_an_interrupted_write_leaves_no_entry(tmp_path, cache, monkeypatch):
    spec = write_splits(tmp_path / "data")

    def interrupted(out, **arrays):
        out.write(b"PK half")
        assert not [name for name in entries(tmp_path) if not name.startswith(".")], "written in place"
        raise KeyboardInterrupt  # as a killed job: whatever was written stays unnamed

    monkeypatch.setattr(np, "savez", interrupted)
    with pytest.raises(KeyboardInterrupt):
        load_dataset("mine", spec)
    assert entries(tmp_path) == []


def test_a_missing_file_is_the_loaders_error(tmp_path, cache):
    spec = write_splits(tmp_path / "data")
    spec["valid"] = str(tmp_path / "data" / "nope.tsv")
    with pytest.raises(DatasetError, match="nope.tsv"):
        load_dataset("mine", spec)
    assert entries(tmp_path) == []
