"""Config validation: every shipped config passes; unknown keys and names fail with the key in the message."""

from __future__ import annotations

import copy

import pytest
import yaml

from kgeval.config import ConfigError, load_config, validate_config

SHIPPED = ["config/config.yaml", "config/test.yaml", "config/paper.yaml", "config/released.yaml"]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_configs_validate_and_resolve(repo, name):
    config = load_config(repo / name)
    from pykeen.datasets import dataset_resolver
    from pykeen.models import model_resolver

    for spec in config["datasets"].values():
        if spec["source"] == "pykeen":
            assert dataset_resolver.lookup(spec["name"]) is not None
    for spec in config["models"].values():
        assert model_resolver.lookup(spec["model"]) is not None


@pytest.fixture
def base(repo):
    with open(repo / "config" / "test.yaml") as handle:
        return yaml.safe_load(handle)


def test_defaults_are_filled(base):
    config = copy.deepcopy(base)
    del config["ranking"]
    validate_config(config)
    assert config["ranking"] == {"splits": ["valid", "test"], "top_k": 10, "memory_budget_mb": 256}


def test_unknown_top_level_key(base):
    config = copy.deepcopy(base)
    config["epochs"] = 3
    with pytest.raises(ConfigError, match=r"unknown config key epochs; allowed keys here: .*datasets"):
        validate_config(config)


def test_unknown_nested_key(base):
    config = copy.deepcopy(base)
    config["models"]["transe"]["epochs"] = 3
    with pytest.raises(ConfigError, match=r"models\.transe\.epochs"):
        validate_config(config)


def test_bad_enum_lists_allowed(base):
    config = copy.deepcopy(base)
    config["datasets"]["nations"]["source"] = "web"
    with pytest.raises(ConfigError, match=r"datasets\.nations\.source.*'pykeen', 'files'"):
        validate_config(config)


def test_unknown_model_name(base):
    config = copy.deepcopy(base)
    config["models"]["transe"]["model"] = "TransQ"
    with pytest.raises(ConfigError, match=r"models\.transe\.model: PyKEEN has no model 'TransQ'; known: .*transe"):
        validate_config(config)


def test_unknown_dataset_name(base):
    config = copy.deepcopy(base)
    config["datasets"]["nations"]["name"] = "Natoins"
    with pytest.raises(ConfigError, match=r"datasets\.nations\.name: PyKEEN has no dataset 'Natoins'"):
        validate_config(config)


def test_schema_documents_every_key(repo):
    """Every property in the schema has a description and a default."""
    with open(repo / "workflow" / "schemas" / "config.schema.yaml") as handle:
        schema = yaml.safe_load(handle)

    def walk(node, path):
        for key, sub in node.get("properties", {}).items():
            assert "description" in sub, f"{path}{key} has no description"
            assert "default" in sub, f"{path}{key} has no default"
            walk(sub, f"{path}{key}.")
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            walk(extra, f"{path}*.")

    walk(schema, "")
