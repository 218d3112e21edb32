"""OpenEA / MED-BBK through sylloge, on small fixtures in sylloge's own cache layout (tests/data/sylloge/), and the
real DBP15k and SRPRS pairs of ../shared/data as S3 sees them."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.ea.data import EADataError
from kgeval.ea.sylloge_loader import cache_subpath, clean_literal, load_sylloge_pair
from kgeval.studies.s3.data import ATTRIBUTES_MISSING, load_s3_pair
from kgeval.studies.s3.features import mapping_features
from kgeval.studies.s3.sampling import MissingFeatureError, sample_roles

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


def test_openea_fixture_as_s3_pair(fixture_dir):
    s3pair = load_s3_pair("dw15k_v2", DW, fixture_dir)
    features = mapping_features(s3pair, k1=3, k2=2).set_index("label1")
    assert features.loc["http://dbpedia.org/resource/Berlin", "name_split"] == "same"
    assert features.loc["http://dbpedia.org/resource/Rome", "name_split"] == "close"  # Rome vs Roma
    assert features.loc["http://dbpedia.org/resource/Spain", "name_split"] == "different"
    assert features.loc["http://dbpedia.org/resource/Angela_Merkel", "s_name"] == 1.0  # best of the two names
    # Berlin: 2 DBpedia attributes, 2 Wikidata ones (P373, P1082)
    assert features.loc["http://dbpedia.org/resource/Berlin", "n_attr"] == 2.0
    assert "real" in s3pair.names_source and "real" in s3pair.attributes_source


def test_med_bbk_fixture(fixture_dir):
    loaded = load_sylloge_pair("med_bbk_9k", MB, fixture_dir)
    pairs = {(loaded.pair.entity_labels1[a], loaded.pair.entity_labels2[b]) for a, b in loaded.pair.alignment}
    # a one-element link cluster is an entity with the same label in both graphs
    assert pairs == {("糖尿病", "糖尿病"), ("高血压", "高血压病"), ("多饮", "口渴多饮"), ("头痛 ", "头痛")}
    assert "头痛 " in loaded.pair.entity_labels1 and "头痛 " not in loaded.pair.entity_labels2


def test_missing_local_copy_without_network(tmp_path, monkeypatch):
    import sylloge

    def offline(*args, **kwargs):
        raise OSError("no network")

    monkeypatch.setattr(sylloge, "OpenEA", offline)
    with pytest.raises(EADataError, match=r"sylloge/open_ea/cached/D_W_15K_V2.*could not download"):
        load_sylloge_pair("dw15k_v2", DW, tmp_path)
    with pytest.raises(EADataError, match="unknown key"):
        load_sylloge_pair("x", {**DW, "version2": "V1"}, tmp_path)


@pytest.mark.shared_data
def test_dbp15k_zh_en_features(shared_data):
    s3pair = load_s3_pair("dbp15k_zh_en", {"source": "dbp15k", "subset": "zh_en"}, shared_data)
    assert s3pair.has_attributes and s3pair.attributes_source.startswith("real")
    features = mapping_features(s3pair, k1=18, k2=12, different_below=0.5)
    assert len(features) == 15000
    # every DBP15k entity has a URI name: the paper's "different" split is empty, the extension's is not
    assert (features["name_split_paper"] == "different").sum() == 0
    assert (features["name_split"] == "different").sum() > 5000
    assert features["n_attr"].notna().all() and features["n_attr"].min() >= 0


@pytest.mark.shared_data
def test_srprs_has_no_attribute_split(shared_data):
    s3pair = load_s3_pair("srprs_en_fr", {"source": "srprs", "subset": "en_fr_15k_V1"}, shared_data)
    assert not s3pair.has_attributes and s3pair.attributes_source == ATTRIBUTES_MISSING
    features = mapping_features(s3pair, k1=None, k2=None)
    assert features["attr_split"].isna().all()
    names = features["name_split"].to_numpy()
    with pytest.raises(MissingFeatureError):
        sample_roles(names, None, "both", 0.02, 0.5, seed=0)
    roles = sample_roles(names, None, "name", 0.02, 0.5, seed=0)
    seeds = features[roles != "test"]
    assert seeds["s_name"].mean() >= features.loc[roles == "test", "s_name"].mean()
    assert np.isclose((roles == "train").sum(), 0.02 * len(features))
