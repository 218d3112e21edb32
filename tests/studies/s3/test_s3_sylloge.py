"""S3's view of sylloge pairs (kgeval.studies.s3.data on top of kgeval.ea.sylloge_loader): the OpenEA fixture in
sylloge's cache layout (tests/data/sylloge/), and the real DBP15k and SRPRS pairs of ../shared/data as S3 sees them.

The loader's own tests are in tests/ea/test_ea_sylloge_loader.py."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.studies.s3.data import ATTRIBUTES_MISSING, load_s3_pair
from kgeval.studies.s3.features import mapping_features
from kgeval.studies.s3.sampling import MissingFeatureError, sample_roles

DW = {"source": "sylloge", "dataset": "open_ea", "graph_pair": "D_W", "size": "15K", "version": "V2",
      "name_attributes": [[], ["P373", "http://www.wikidata.org/entity/P1476"]]}


@pytest.fixture(scope="module")
def fixture_dir(repo):
    return repo / "tests" / "data"


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
