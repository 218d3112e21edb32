"""EA datasets: the JAPE/GCN-Align and SRPRS readers and the real copies in ../shared/data (the two-view sampler:
test_ea_two_view.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kgeval.ea.data import EADataError, EAPair, load_ea_pair, read_jape_folder, uri_name


def _write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _jape(folder: Path, sup: bool = False) -> Path:
    """A tiny pair with JAPE's shared id space: graph 1 uses ids 5..8, graph 2 ids 100..103 (listed out of order)."""
    _write(folder / "ent_ids_1", ["7\thttp://zh.dbpedia.org/resource/丙", "5\thttp://zh.dbpedia.org/resource/甲",
                                  "6\thttp://zh.dbpedia.org/resource/乙_(x)", "8\thttp://zh.dbpedia.org/resource/丁"])
    _write(folder / "ent_ids_2", ["101\thttp://dbpedia.org/resource/B_(x)", "100\thttp://dbpedia.org/resource/A",
                                  "102\thttp://dbpedia.org/resource/C", "103\thttp://dbpedia.org/resource/D"])
    _write(folder / "triples_1", ["5\t40\t6", "6\t41\t7", "7\t40\t5"])
    _write(folder / "triples_2", ["100\t9\t101", "101\t3\t102", "103\t9\t100"])
    if sup:
        _write(folder / "sup_ent_ids", ["5\t100"])
        _write(folder / "ref_ent_ids", ["6\t101", "7\t102"])
    else:
        _write(folder / "ref_ent_ids", ["6\t101", "5\t100", "7\t102"])
    return folder


def test_jape_reader_remaps_ids_and_keeps_labels(tmp_path):
    pair = read_jape_folder(_jape(tmp_path / "p"), "tiny")
    # new ids follow the sorted original ids: graph 1 5,6,7,8 -> 0..3; graph 2 100..103 -> 0..3
    assert pair.entity_labels1[0].endswith("甲") and pair.entity_labels1[2].endswith("丙")
    assert pair.entity_labels2[1] == "http://dbpedia.org/resource/B_(x)"
    assert pair.names1 == ["甲", "乙_(x)", "丙", "丁"]
    assert pair.names2 == ["A", "B_(x)", "C", "D"]
    np.testing.assert_array_equal(pair.triples1, [[0, 0, 1], [1, 1, 2], [2, 0, 0]])
    assert pair.relation_labels1 == ["40", "41"] and pair.relation_labels2 == ["3", "9"]
    np.testing.assert_array_equal(pair.triples2, [[0, 1, 1], [1, 0, 2], [3, 1, 0]])
    np.testing.assert_array_equal(pair.alignment, [[0, 0], [1, 1], [2, 2]])
    assert pair.fixed_split is None and pair.attributes1 is None
    assert pair.summary()["num_alignments"] == 3


def test_srprs_layout_gives_fixed_split(tmp_path):
    splits = {"train": "sup_ent_ids", "test": "ref_ent_ids"}
    pair = read_jape_folder(_jape(tmp_path / "p", sup=True), "s", split_files=splits)
    np.testing.assert_array_equal(pair.fixed_split["train"], [[0, 0]])
    np.testing.assert_array_equal(pair.fixed_split["test"], [[1, 1], [2, 2]])
    np.testing.assert_array_equal(pair.alignment, [[0, 0], [1, 1], [2, 2]])


def test_attribute_files_are_mapped_through_uris(tmp_path):
    folder = _jape(tmp_path / "p")
    att = folder / "attributes"
    # the attribute files number entities differently (by their own entity2id), and list a header count line
    zh = "http://zh.dbpedia.org/resource/"
    _write(att / "entity2id_zh.txt", ["2", f"{zh}丙\t0", f"{zh}甲\t1"])
    _write(att / "attr2id_zh.txt", ["3", "p:a\t0", "p:b\t1", "p:c\t2"])
    _write(att / "entity2att_zh.txt", ["2", "0\t2\t0", "1\t1"])
    _write(att / "entity2id_en.txt", ["1", "http://dbpedia.org/resource/C\t0"])
    _write(att / "attr2id_en.txt", ["1", "p:x\t0"])
    _write(att / "entity2att_en.txt", ["1", "0\t0"])
    pair = read_jape_folder(folder, "a", attribute_folder=att, languages=("zh", "en"))
    assert pair.attribute_labels1 == ["p:a", "p:b", "p:c"]
    np.testing.assert_array_equal(pair.attributes1[2], [0, 2])  # 丙 has new id 2
    np.testing.assert_array_equal(pair.attributes1[0], [1])  # 甲 has new id 0
    assert len(pair.attributes1[1]) == 0 and len(pair.attributes1[3]) == 0
    np.testing.assert_array_equal(pair.attributes2[2], [0])


@pytest.mark.parametrize(
    ("file_name", "lines", "expected"),
    [
        ("triples_1", ["5\t40\t6", "6\t41"], r"triples_1:2: expected 3 tab-separated"),
        ("triples_1", ["5\t40\t6", "6\t41\t99"], r"triples_1:2: tail entity id 99 is not listed"),
        ("ent_ids_1", ["5\tx", "six\ty"], r"ent_ids_1:2: the id column must be an integer"),
        ("ref_ent_ids", ["5\t100", "6\t100"], r"ref_ent_ids: graph-2 entity id appears in more than one pair"),
        ("ref_ent_ids", ["5\t100", "6\t7"], r"ref_ent_ids:2: graph-2 entity id 7 is not listed"),
    ],
)
def test_bad_files_name_file_and_line(tmp_path, file_name, lines, expected):
    folder = _jape(tmp_path / "p")
    if file_name == "ent_ids_1":
        _write(folder / "triples_1", ["5\t40\t5"])
        _write(folder / "ref_ent_ids", ["5\t100"])
    _write(folder / file_name, lines)
    with pytest.raises(EADataError, match=expected):
        read_jape_folder(folder, "bad")


def test_missing_file_and_bad_spec(tmp_path):
    folder = _jape(tmp_path / "p")
    (folder / "triples_2").unlink()
    with pytest.raises(EADataError, match="missing file .*triples_2"):
        read_jape_folder(folder, "bad")
    with pytest.raises(EADataError, match="source"):
        load_ea_pair("x", {"source": "openea"})
    with pytest.raises(EADataError, match="subset"):
        load_ea_pair("x", {"source": "dbp15k", "subset": "de_en"}, data_dir=tmp_path)
    with pytest.raises(EADataError, match="unknown key"):
        load_ea_pair("x", {"source": "two_view", "datset": "umls"})
    with pytest.raises(EADataError, match="does not exist"):
        load_ea_pair("x", {"source": "dbp15k", "subset": "zh_en"}, data_dir=tmp_path)


def test_data_dir_layout_is_read(tmp_path):
    _jape(tmp_path / "dbp15k" / "fr_en")
    pair = load_ea_pair("dbp_fr", {"source": "dbp15k", "subset": "fr_en"}, data_dir=tmp_path)
    assert pair.name == "dbp_fr" and len(pair.alignment) == 3


def test_eapair_validates_ids():
    with pytest.raises(EADataError, match="alignment refers"):
        empty = np.zeros((0, 3), dtype=np.int64)
        EAPair("x", empty, empty, ["a"], ["b"], np.array([[0, 1]]))


def test_uri_name():
    assert uri_name("http://dbpedia.org/resource/Kim_Dae-jung") == "Kim_Dae-jung"


# ---------------------------------------------------------------------------------------------- real data


def _count_lines(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


@pytest.mark.shared_data
@pytest.mark.parametrize("subset", ["zh_en", "ja_en", "fr_en"])
def test_dbp15k_real_copy(shared_data, subset):
    folder = shared_data / "dbp15k" / subset
    if not folder.is_dir():
        pytest.skip(f"{folder} not present")
    pair = load_ea_pair(f"dbp15k_{subset}", {"source": "dbp15k", "subset": subset}, data_dir=shared_data)
    assert pair.num_entities1 == _count_lines(folder / "ent_ids_1")
    assert pair.num_entities2 == _count_lines(folder / "ent_ids_2")
    assert len(pair.triples1) == _count_lines(folder / "triples_1")
    assert len(pair.triples2) == _count_lines(folder / "triples_2")
    assert len(pair.alignment) == 15000
    # the first reference line, read independently, is one of the alignment pairs (through the URIs)
    first = (folder / "ref_ent_ids").read_text(encoding="utf-8").splitlines()[0].split("\t")
    uris = [dict(line.split("\t") for line in (folder / f"ent_ids_{i}").read_text(encoding="utf-8").splitlines())
            for i in (1, 2)]
    index1 = pair.entity_labels1.index(uris[0][first[0]])
    index2 = pair.entity_labels2.index(uris[1][first[1]])
    assert [index1, index2] in pair.alignment.tolist()
    assert pair.names2[index2] == uris[1][first[1]].rsplit("/", 1)[-1]
    # attribute names (MuGNN) cover almost every aligned entity
    if (folder / "attributes").is_dir():
        has1 = np.array([len(pair.attributes1[i]) > 0 for i in pair.alignment[:, 0]])
        has2 = np.array([len(pair.attributes2[i]) > 0 for i in pair.alignment[:, 1]])
        assert has1.mean() > 0.95 and has2.mean() > 0.95


@pytest.mark.shared_data
@pytest.mark.parametrize("subset", ["en_fr_15k_V1", "en_de_15k_V1"])
def test_srprs_real_copy(shared_data, subset):
    folder = shared_data / "srprs" / subset
    if not folder.is_dir():
        pytest.skip(f"{folder} not present")
    pair = load_ea_pair(subset, {"source": "srprs", "subset": subset}, data_dir=shared_data)
    assert len(pair.fixed_split["train"]) == _count_lines(folder / "sup_ent_ids")
    assert len(pair.fixed_split["test"]) == _count_lines(folder / "ref_ent_ids")
    assert len(pair.alignment) == len(pair.fixed_split["train"]) + len(pair.fixed_split["test"])
    assert pair.num_relations1 == _count_lines(folder / "rel_ids_1")
    assert pair.relation_labels1[0].startswith("http://dbpedia.org/ontology/")
