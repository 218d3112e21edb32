"""kgeval.ea.sylloge_loader: OpenEA / MED-BBK through sylloge, on small fixtures in sylloge's own cache layout
(tests/data/sylloge/)."""

from __future__ import annotations

import pytest

from kgeval.ea.data import EADataError
from kgeval.ea.pair import graph2_permutation
from kgeval.ea.sylloge_loader import (
    cache_subpath,
    clean_literal,
    load_sylloge_pair,
    read_sylloge_dataset,
    sylloge_to_pair,
)

DW = {"source": "sylloge", "dataset": "open_ea", "graph_pair": "D_W", "size": "15K", "version": "V2",
      "name_attributes": [[], ["P373", "http://www.wikidata.org/entity/P1476"]]}
MB = {"source": "sylloge", "dataset": "med_bbk"}


@pytest.fixture(scope="module")
def fixture_dir(repo):
    return repo / "tests" / "data"


def test_cache_layout_paths():
    assert cache_subpath(DW).as_posix() == "sylloge/open_ea/cached/D_W_15K_V2"
    assert cache_subpath(MB).as_posix() == "sylloge/med_bbk/cached/industry"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [('"Angela Merkel"@en', "Angela Merkel"), ('"12"^^<http://www.w3.org/2001/XMLSchema#int>', "12"), ("plain", "plain"),
     ('"Roma"', "Roma")],
)
def test_clean_literal(raw, clean):
    assert clean_literal(raw) == clean


def test_openea_fixture(fixture_dir):
    loaded = load_sylloge_pair("dw15k_v2", DW, fixture_dir)
    pair = loaded.pair
    # 11 DBpedia entities (Lisbon is unlinked), 10 Wikidata entities, 10 links
    assert (pair.num_entities1, pair.num_entities2, len(pair.alignment)) == (11, 10, 10)
    by_label = {pair.entity_labels1[a]: b for a, b in pair.alignment}
    merkel = by_label["http://dbpedia.org/resource/Angela_Merkel"]
    assert pair.entity_labels2[merkel] == "http://www.wikidata.org/entity/Q567"
    # Wikidata names are the P373 and P1476 values (cleaned); DBpedia names the URI's last segment
    assert set(loaded.names2[merkel]) == {"Angela Merkel", "Angela Dorothea Merkel"}
    assert loaded.names1[pair.entity_labels1.index("http://dbpedia.org/resource/Angela_Merkel")] == ("Angela_Merkel",)
    spain = by_label["http://dbpedia.org/resource/Spain"]
    assert loaded.names2[spain] == ()  # no P373 / P1476: no name ("different")
    # attributes are the distinct properties: Berlin has populationTotal (twice) and areaTotal
    berlin = pair.entity_labels1.index("http://dbpedia.org/resource/Berlin")
    assert len(pair.attributes1[berlin]) == 2
    assert len(pair.triples1) == 11 and len(pair.triples2) == 10


def test_med_bbk_fixture(fixture_dir):
    loaded = load_sylloge_pair("med_bbk_9k", MB, fixture_dir)
    pairs = {(loaded.pair.entity_labels1[a], loaded.pair.entity_labels2[b]) for a, b in loaded.pair.alignment}
    # a one-element link cluster is an entity with the same label in both graphs
    assert pairs == {("糖尿病", "糖尿病"), ("高血压", "高血压病"), ("多饮", "口渴多饮"), ("头痛 ", "头痛")}
    assert "头痛 " in loaded.pair.entity_labels1 and "头痛 " not in loaded.pair.entity_labels2


@pytest.mark.parametrize(("key", "spec"), [("dw15k_v2", DW), ("med_bbk_9k", MB)])
def test_graph2_is_shuffled_with_its_names(fixture_dir, key, spec):
    """The loader relabels graph 2 by the seeded permutation of the cache path; labels, names, attributes, triples
    and links stay with their entities."""
    raw = sylloge_to_pair(key, read_sylloge_dataset(key, spec, fixture_dir), spec.get("name_attributes") or [[], []])
    loaded = load_sylloge_pair(key, spec, fixture_dir)
    new_ids = graph2_permutation(raw.pair.num_entities2, cache_subpath(spec).as_posix())
    for old, new in enumerate(new_ids.tolist()):
        assert loaded.pair.entity_labels2[new] == raw.pair.entity_labels2[old]
        assert loaded.names2[new] == raw.names2[old] and loaded.pair.names2[new] == raw.pair.names2[old]
        assert loaded.pair.attributes2[new].tolist() == raw.pair.attributes2[old].tolist()
    assert loaded.names1 == raw.names1

    def links(pair):
        return sorted((pair.entity_labels1[a], pair.entity_labels2[b]) for a, b in pair.alignment.tolist())

    def triples2(pair):
        lab = pair.entity_labels2
        return sorted((lab[h], r, lab[t]) for h, r, t in pair.triples2.tolist())

    assert links(loaded.pair) == links(raw.pair) and triples2(loaded.pair) == triples2(raw.pair)


def test_missing_local_copy_without_network(tmp_path, monkeypatch):
    import sylloge

    def offline(*args, **kwargs):
        raise OSError("no network")

    monkeypatch.setattr(sylloge, "OpenEA", offline)
    monkeypatch.setattr(sylloge, "MED_BBK", offline)
    with pytest.raises(EADataError, match=r"sylloge/open_ea/cached/D_W_15K_V2.*could not download.*figshare"):
        load_sylloge_pair("dw15k_v2", DW, tmp_path)
    with pytest.raises(EADataError, match=r"industry-eval-EA.*config/paper_offline.yaml"):
        load_sylloge_pair("med_bbk_9k", MB, tmp_path)
    with pytest.raises(EADataError, match="unknown key"):
        load_sylloge_pair("x", {**DW, "version2": "V1"}, tmp_path)


def test_source_urls_are_sylloges_own():
    """The URLs the offline error names are the ones sylloge downloads from (read, nothing is downloaded)."""
    from sylloge import MED_BBK, OpenEA

    from kgeval.ea.sylloge_loader import SOURCE_URLS

    assert SOURCE_URLS["open_ea"].split()[0] == OpenEA._FIGSHARE_LINK
    assert SOURCE_URLS["med_bbk"].split()[0] == MED_BBK._ZIP_LINK
