"""EA datasets: the JAPE/GCN-Align and SRPRS readers, the seeded graph-2 shuffle at load, and the real copies in
../shared/data (the two-view sampler: test_ea_two_view.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kgeval.ea.data import EADataError, EAPair, load_ea_pair, read_jape_folder, uri_name
from kgeval.ea.pair import graph2_permutation, relabel_graph2


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


def _offset_share(pair: EAPair) -> float:
    """The share of reference pairs whose id difference (graph 2 - graph 1) is the most common one."""
    _, counts = np.unique(pair.alignment[:, 1] - pair.alignment[:, 0], return_counts=True)
    return float(counts.max() / len(pair.alignment))


def _content(pair: EAPair) -> dict:
    """A pair in terms of entity labels only (what no relabelling may change)."""
    lab1, lab2 = pair.entity_labels1, pair.entity_labels2
    out = {
        "triples1": sorted((lab1[h], r, lab1[t]) for h, r, t in pair.triples1.tolist()),
        "triples2": sorted((lab2[h], r, lab2[t]) for h, r, t in pair.triples2.tolist()),
        "alignment": sorted((lab1[a], lab2[b]) for a, b in pair.alignment.tolist()),
        "names2": {lab2[j]: pair.names2[j] for j in range(pair.num_entities2)},
        "split": {k: sorted((lab1[a], lab2[b]) for a, b in v.tolist()) for k, v in (pair.fixed_split or {}).items()},
    }
    if pair.attributes2 is not None:
        out["attributes2"] = {lab2[j]: pair.attributes2[j].tolist() for j in range(pair.num_entities2)}
    return out


def _offset_release(folder: Path, n: int = 30, srprs: bool = False) -> Path:
    """A release numbered like DBP15k: graph-1 entity i (id i) is aligned to graph-2 id i + n, attributes for both."""
    rng = np.random.default_rng(3)
    _write(folder / "ent_ids_1", [f"{i}\thttp://fr.dbpedia.org/resource/E{i}" for i in range(n)])
    _write(folder / "ent_ids_2", [f"{n + i}\thttp://dbpedia.org/resource/E{i}_en" for i in range(n)])
    heads, tails = rng.integers(n, size=3 * n), rng.integers(n, size=3 * n)
    _write(folder / "triples_1", [f"{h}\t{r % 3}\t{t}" for r, (h, t) in enumerate(zip(heads, tails))])
    _write(folder / "triples_2", [f"{n + h}\t{7 + r % 2}\t{n + t}" for r, (h, t) in enumerate(zip(heads, tails))])
    pairs = [f"{i}\t{n + i}" for i in range(n)]
    if srprs:
        _write(folder / "sup_ent_ids", pairs[: n // 3])
        _write(folder / "ref_ent_ids", pairs[n // 3 :])
        return folder
    _write(folder / "ref_ent_ids", pairs)
    att = folder / "attributes"
    for lang, uris in (("fr", [f"http://fr.dbpedia.org/resource/E{i}" for i in range(n)]),
                       ("en", [f"http://dbpedia.org/resource/E{i}_en" for i in range(n)])):
        _write(att / f"entity2id_{lang}.txt", [str(n), *(f"{u}\t{i}" for i, u in enumerate(uris))])
        _write(att / f"attr2id_{lang}.txt", ["4", *(f"p:{lang}{k}\t{k}" for k in range(4))])
        rows = [f"{i}\t" + "\t".join(str(k) for k in range(4) if (i + k) % 3 == 0) for i in range(n)]
        _write(att / f"entity2att_{lang}.txt", [str(n), *rows])
    return folder


@pytest.mark.parametrize(("source", "subset"), [("dbp15k", "fr_en"), ("srprs", "en_fr_15k_V1")])
def test_load_shuffles_graph2_ids_with_a_fixed_seed(tmp_path, source, subset):
    """The loader relabels graph 2 by the seeded permutation of (source, subset): a bijection under which every
    triple, reference pair, split pair, name and attribute set stays with its entity, and no id offset is left."""
    folder = _offset_release(tmp_path / source / subset, srprs=source == "srprs")
    splits = {"train": "sup_ent_ids", "test": "ref_ent_ids"} if source == "srprs" else None
    raw = read_jape_folder(folder, "p", attribute_folder=folder / "attributes", languages=("fr", "en"),
                           split_files=splits)
    pair = load_ea_pair("p", {"source": source, "subset": subset}, data_dir=tmp_path)
    assert _offset_share(raw) == 1.0 and _offset_share(pair) < 0.2
    new_ids = graph2_permutation(raw.num_entities2, source, subset)
    assert sorted(new_ids.tolist()) == list(range(raw.num_entities2))  # a bijection of the graph-2 ids
    expected = relabel_graph2(raw, new_ids)
    for field in ("triples1", "triples2", "alignment"):
        np.testing.assert_array_equal(getattr(pair, field), getattr(expected, field))
    assert pair.entity_labels2 == [raw.entity_labels2[j] for j in np.argsort(new_ids)]
    assert pair.names2 == [uri_name(label) for label in pair.entity_labels2]  # names follow their labels
    assert _content(pair) == _content(raw)
    if source == "dbp15k":
        assert pair.attributes2 is not None and _content(pair)["attributes2"] == _content(raw)["attributes2"]
    else:
        assert set(pair.fixed_split) == {"train", "test"} and len(pair.fixed_split["train"]) == 10
    again = load_ea_pair("other_key", {"source": source, "subset": subset}, data_dir=tmp_path)
    np.testing.assert_array_equal(again.alignment, pair.alignment)  # the same files give the same ids


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


@pytest.mark.shared_data
@pytest.mark.parametrize(("source", "subset"), [("dbp15k", "fr_en"), ("srprs", "en_fr_15k_V1")])
def test_real_ids_carry_no_alignment(shared_data, source, subset):
    """The releases number most aligned entities with one shared id (the files as read: 70 % of the reference pairs
    share the most common id difference); after the loader's shuffle that share is below 1 %, and every reference
    pair, triple, name and attribute set still belongs to the same URIs as in the files."""
    folder = shared_data / source / subset
    if not folder.is_dir():
        pytest.skip(f"{folder} not present")
    splits = {"train": "sup_ent_ids", "test": "ref_ent_ids"} if source == "srprs" else None
    languages = tuple(subset.split("_")) if source == "dbp15k" else None
    raw = read_jape_folder(folder, subset, attribute_folder=folder / "attributes" if languages else None,
                           languages=languages, split_files=splits)
    pair = load_ea_pair(subset, {"source": source, "subset": subset}, data_dir=shared_data)
    assert _offset_share(raw) > 0.5
    assert _offset_share(pair) < 0.01
    assert _content(pair) == _content(raw)
    assert pair.names2 == [uri_name(label) for label in pair.entity_labels2]
