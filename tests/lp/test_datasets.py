"""Dataset loading: PyKEEN names, local files, malformed input, dropped triples."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgeval.lp.datasets import DatasetError, dataset_summary, labeled_splits, load_dataset, read_triples


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_bundled_pykeen_dataset_matches_pykeen():
    from pykeen.datasets import Nations

    data = load_dataset("nations", {"source": "pykeen", "name": "Nations"})
    reference = Nations()
    assert data.num_entities == reference.num_entities
    assert data.training.num_triples == reference.training.num_triples
    assert data.testing.num_triples == reference.testing.num_triples
    assert data.num_dropped == {"train": 0, "valid": 0, "test": 0}


def test_files_dataset_counts_dropped_triples(tmp_path):
    train = _write(tmp_path / "train.txt", ["a\tr\tb", "b\tr\tc", "c\ts\ta"])
    valid = _write(tmp_path / "valid.txt", ["a\ts\tb", "a\tr\tz"])  # z unseen
    test = _write(tmp_path / "test.txt", ["b\ts\tc", "a\tq\tb", "c\tr\ta"])  # q unseen
    data = load_dataset("mine", {"source": "files", "train": str(train), "valid": str(valid), "test": str(test)})
    assert data.num_dropped == {"train": 0, "valid": 1, "test": 1}
    assert data.validation.num_triples == 1 and data.testing.num_triples == 2
    # ids are shared with training
    assert data.testing.entity_to_id == data.training.entity_to_id
    summary = dataset_summary(data).set_index("split")
    assert summary.loc["test", "num_dropped"] == 1
    assert summary.loc["train", "num_entities"] == 3


def test_labeled_splits_keep_every_shipped_triple(tmp_path):
    train = _write(tmp_path / "train.txt", ["a\tr\tb", "b\tr\tc"])
    valid = _write(tmp_path / "valid.txt", ["a\tr\tz"])  # z unseen: load_dataset drops it, labeled_splits keeps it
    test = _write(tmp_path / "test.txt", ["b\tr\tc"])
    splits = labeled_splits("mine", {"source": "files", "train": str(train), "valid": str(valid), "test": str(test)})
    assert {k: len(v) for k, v in splits.items()} == {"train": 2, "valid": 1, "test": 1}
    assert splits["valid"].tolist() == [["a", "r", "z"]]
    nations = labeled_splits("nations", {"source": "pykeen", "name": "Nations"})
    assert (
        len(nations["train"]) == load_dataset("nations", {"source": "pykeen", "name": "Nations"}).training.num_triples
    )
    with pytest.raises(DatasetError, match="known: .*nations"):
        labeled_splits("x", {"source": "pykeen", "name": "NoSuchSet"})


def test_malformed_line_names_file_and_line(tmp_path):
    bad = _write(tmp_path / "train.txt", ["a\tr\tb", "b\tr", "c\ts\ta"])
    with pytest.raises(DatasetError, match=r"train\.txt, line 2: expected 3"):
        read_triples(bad)


def test_empty_field_is_an_error(tmp_path):
    bad = _write(tmp_path / "train.txt", ["a\tr\tb", "a\t\tb"])
    with pytest.raises(DatasetError, match="line 2"):
        read_triples(bad)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(DatasetError, match="not found"):
        read_triples(tmp_path / "nope.txt")


def test_unknown_pykeen_name_lists_known():
    with pytest.raises(DatasetError, match="known: .*nations"):
        load_dataset("x", {"source": "pykeen", "name": "NoSuchSet"})


def test_local_copy_under_data_dir(shared_data):
    data = load_dataset("fb15k237", {"source": "pykeen", "name": "FB15k237", "local": "fb15k237"}, shared_data)
    assert data.training.num_triples == 272_115
    # FB15k-237's valid/test contain a few triples with entities unseen in training: they are counted, not hidden
    assert data.validation.num_triples + data.num_dropped["valid"] == 17_535
    assert data.testing.num_triples + data.num_dropped["test"] == 20_466
    assert (
        len(
            labeled_splits("fb15k237", {"source": "pykeen", "name": "FB15k237", "local": "fb15k237"}, shared_data)[
                "test"
            ]
        )
        == 20_466
    )


def test_an_ogb_dataset_without_the_ogb_package_says_how_to_install_it():
    import importlib.util

    if importlib.util.find_spec("ogb") is not None:
        pytest.skip("ogb is installed here: PyKEEN would download ogbl-wikikg2")
    with pytest.raises(DatasetError, match=r"datasets.wikikg2.name: PyKEEN loads OGBWikiKG2 through the ogb package"):
        load_dataset("wikikg2", {"source": "pykeen", "name": "OGBWikiKG2"})
