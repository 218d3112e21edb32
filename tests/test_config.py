"""Config validation: every shipped config passes; unknown keys and names fail with the key in the message."""

from __future__ import annotations

import copy

import pytest
import yaml

from kgeval.config import ConfigError, load_config, validate_config

SHIPPED = [
    "config/config.yaml", "config/test.yaml", "config/paper.yaml", "config/released.yaml", "config/real.yaml",
    "config/byo.yaml",
]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_configs_validate_and_resolve(repo, name):
    config = load_config(repo / name)
    from pykeen.datasets import dataset_resolver
    from pykeen.models import model_resolver

    for spec in config["datasets"].values():
        if spec["source"] == "pykeen":
            assert dataset_resolver.lookup(spec["name"]) is not None
    for spec in config["models"].values():
        if spec["source"] != "ranks":
            assert model_resolver.lookup(spec["model"]) is not None


@pytest.fixture
def base(repo):
    with open(repo / "config" / "test.yaml") as handle:
        return yaml.safe_load(handle)


def test_defaults_are_filled(base):
    config = copy.deepcopy(base)
    del config["ranking"]
    validate_config(config)
    assert config["ranking"] == {"splits": ["valid", "test"], "top_k": 10, "memory_budget_mb": 256, "candidates": {}}


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
    with pytest.raises(ConfigError, match=r"datasets\.nations\.source.*'pykeen', 'remote', 'files'"):
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


def test_paper_offline_overlay_swaps_the_s3_pairs(repo):
    """config/paper_offline.yaml, merged into config/paper.yaml as Snakemake merges two --configfile files, leaves out
    the paper's sylloge pairs (null) and studies the offline substitutes."""
    from snakemake.utils import update_config

    paper = yaml.safe_load((repo / "config" / "paper.yaml").read_text())
    assert validate_config(copy.deepcopy(paper), check_pykeen=False)["studies"]["s3"]["datasets"] == {
        "dw15k_v2": {"k1": 10, "k2": 4, "different_below": None, "name_noise": None},
        "med_bbk_9k": {"k1": 5, "k2": 2, "different_below": None, "name_noise": None},
    }
    update_config(paper, yaml.safe_load((repo / "config" / "paper_offline.yaml").read_text()))
    config = validate_config(paper)
    assert sorted(config["studies"]["s3"]["datasets"]) == ["dbp15k_fr_en", "srprs_en_fr"]
    assert all(key in config["ea_datasets"] for key in config["studies"]["s3"]["datasets"])


def test_a_null_pair_is_left_out_but_not_every_pair(base):
    config = copy.deepcopy(base)
    config["studies"]["s3"]["datasets"] = {"umls_two_view": None, "other": {"k1": 3, "k2": 1}}
    assert list(validate_config(config)["studies"]["s3"]["datasets"]) == ["other"]
    config["studies"]["s3"]["datasets"] = {"umls_two_view": None}
    with pytest.raises(ConfigError, match=r"studies\.s3\.datasets: every pair is null"):
        validate_config(config)


# --- models trained elsewhere (source checkpoint or ranks, docs/byo.md): each entry is checked against the config ---

#: (entry of a model trained elsewhere, the message it fails with)
BAD_SOURCES = [
    ({"source": "checkpoint", "dataset": "nations"}, r"models\.mine\.path: a model with source checkpoint needs path"),
    ({"source": "ranks", "dataset": "nations"}, r"models\.mine\.path: a model with source ranks needs path: the ranks"),
    ({"source": "ranks", "path": "r.tsv"}, r"models\.mine\.dataset: missing; name the dataset it was trained on"),
    ({"source": "ranks", "path": "r.tsv", "dataset": "fb15k237"},
     r"models\.mine\.dataset: 'fb15k237' is not a configured dataset; .* nations, tiny"),
    ({"source": "checkpoint", "path": "ck", "dataset": "nations", "seed": 3},
     r"models\.mine\.seed: 3 is not one of seeds \[0\]; add it to seeds"),
    ({"source": "checkpoint", "path": "ck", "dataset": "nations", "model": "TransQ"},
     r"models\.mine\.model: PyKEEN has no model 'TransQ'"),
    ({"source": "train"}, r"models\.mine: 'model' is a required property"),
    ({"source": "web", "path": "x"}, r"models\.mine\.source: 'web' is not allowed; use one of 'train', 'checkpoint'"),
]


@pytest.mark.parametrize(("entry", "message"), BAD_SOURCES, ids=[m.split(":")[0] + str(i) for i, (_, m) in
                                                                 enumerate(BAD_SOURCES)])
def test_bad_model_source_names_key_and_fix(base, entry, message):
    config = copy.deepcopy(base)
    config["models"]["mine"] = entry
    with pytest.raises(ConfigError, match=message):
        validate_config(config)


def test_models_trained_elsewhere_need_no_model_name_or_training_settings(base):
    config = copy.deepcopy(base)
    config["models"]["mine"] = {"source": "checkpoint", "path": "ck", "dataset": "tiny"}
    config["models"]["theirs"] = {"source": "ranks", "path": "r.parquet", "dataset": "nations", "seed": 0}
    validate_config(config)
    assert config["models"]["mine"]["model"] == "" and config["models"]["mine"]["seed"] is None
    assert config["models"]["transe"]["source"] == "train"


def test_training_settings_leave_out_where_a_model_comes_from(base):
    """The settings a training job gets (its params) are those of before sources existed: no rerun of old results."""
    from kgeval.config import model_spec_for

    config = copy.deepcopy(base)
    config["models"]["transe"]["reference"] = "a paper"
    validate_config(config)
    spec = model_spec_for(config, "transe", "nations")
    assert not {"source", "reference", "path", "dataset", "seed"} & set(spec)
    assert spec["model"] == "TransE"


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


def test_kwargs_bounds_have_no_defaults(repo):
    """The bounds of PyKEEN's keyword arguments ($defs) are documented but have no default: a default would be written
    into every model's settings and change what PyKEEN trains."""
    with open(repo / "workflow" / "schemas" / "config.schema.yaml") as handle:
        schema = yaml.safe_load(handle)

    def walk(node, path):
        for key, sub in node.get("properties", {}).items():
            assert "default" not in sub, f"$defs.{path}{key} has a default"
            assert "description" in sub or "$ref" in sub, f"$defs.{path}{key} has no description"
            walk(sub, f"{path}{key}.")

    for name, node in schema["$defs"].items():
        walk(node, f"{name}.")


# --- bounds: every count, size, fraction, depth and ratio fails with its dotted key and allowed range ---------------

#: (dotted key, bad value, the range the message must state); keys are set in a copy of config/test.yaml
BAD_VALUES = [
    ("seeds.0", -1, "less than the minimum of 0"),
    ("ranking.top_k", 0, "less than the minimum of 1"),
    ("ranking.memory_budget_mb", 0, "less than or equal to the minimum of 0"),
    ("uncertainty.resamples", 5, "less than the minimum of 10"),
    ("uncertainty.permutations", 0, "less than the minimum of 10"),
    ("uncertainty.level", 0.5, "less than or equal to the minimum of 0.5"),
    ("uncertainty.level", 1.0, "greater than or equal to the maximum of 1"),
    ("uncertainty.seed", -1, "less than the minimum of 0"),
    ("ea_datasets.umls_two_view.keep_fraction", 0, "less than or equal to the minimum of 0"),
    ("ea_datasets.umls_two_view.keep_fraction", 1.5, "greater than the maximum of 1"),
    ("ea_datasets.umls_two_view.seed", -1, "less than the minimum of 0"),
    ("ea_models.gcn_align.embedding_dim", 0, "less than the minimum of 1"),
    ("ea_models.gcn_align.num_layers", -1, "less than the minimum of 0"),
    ("ea_models.gcn_align.num_negatives", 0, "less than the minimum of 1"),
    ("ea_models.gcn_align.margin", -1.0, "less than the minimum of 0"),
    ("ea_models.gcn_align.lr", 0, "less than or equal to the minimum of 0"),
    ("ea_models.gcn_align.num_epochs", 0, "less than the minimum of 1"),
    ("models.transe.model_kwargs.embedding_dim", 0, "less than the minimum of 1"),
    ("models.transe.model_kwargs.relation_dim", 0, "less than the minimum of 1"),
    ("models.transe.model_kwargs.hidden_dim", 0, "less than the minimum of 1"),
    ("models.transe.model_kwargs.output_channels", 0, "less than the minimum of 1"),
    ("models.transe.model_kwargs.kernel_height", 0, "less than the minimum of 1"),
    ("models.transe.model_kwargs.kernel_width", 0, "less than the minimum of 1"),
    ("models.transe.model_kwargs.embedding_height", 0, "less than the minimum of 1"),
    ("models.transe.model_kwargs.embedding_width", 0, "less than the minimum of 1"),
    ("models.transe.model_kwargs.scoring_fct_norm", 0, "less than or equal to the minimum of 0"),
    ("models.transe.model_kwargs.p", -2, "less than or equal to the minimum of 0"),
    ("models.transe.model_kwargs.input_dropout", 1.0, "greater than or equal to the maximum of 1"),
    ("models.transe.model_kwargs.output_dropout", -0.1, "less than the minimum of 0"),
    ("models.transe.model_kwargs.feature_map_dropout", 1.5, "greater than or equal to the maximum of 1"),
    ("models.transe.model_kwargs.dropout_0", 1.0, "greater than or equal to the maximum of 1"),
    ("models.transe.model_kwargs.dropout_1", -0.5, "less than the minimum of 0"),
    ("models.transe.model_kwargs.dropout_2", 2, "greater than or equal to the maximum of 1"),
    ("models.transe.model_kwargs.regularizer_kwargs.weight", -0.01, "less than the minimum of 0"),
    ("models.transe.model_kwargs.regularizer_kwargs.p", 0, "less than or equal to the minimum of 0"),
    ("models.transe.loss_kwargs.margin", -1, "less than the minimum of 0"),
    ("models.transe.loss_kwargs.adversarial_temperature", 0, "less than or equal to the minimum of 0"),
    ("models.transe.optimizer_kwargs.lr", 0, "less than or equal to the minimum of 0"),
    ("models.transe.optimizer_kwargs.lr", -0.01, "less than or equal to the minimum of 0"),
    ("models.transe.optimizer_kwargs.weight_decay", -1e-4, "less than the minimum of 0"),
    ("models.transe.negative_sampler_kwargs.num_negs_per_pos", 0, "less than the minimum of 1"),
    ("models.transe.training_kwargs.num_epochs", -3, "less than the minimum of 1"),
    ("models.transe.training_kwargs.num_epochs", 0, "less than the minimum of 1"),
    ("models.transe.training_kwargs.batch_size", 0, "less than the minimum of 1"),
    ("models.transe.training_kwargs.sub_batch_size", 0, "less than the minimum of 1"),
    ("models.transe.training_kwargs.slice_size", 0, "less than the minimum of 1"),
    ("models.transe.training_kwargs.label_smoothing", 1.0, "greater than or equal to the maximum of 1"),
    ("models.transe.seed", -1, "less than the minimum of 0"),
    ("models.transe.overrides.nations.training_kwargs.num_epochs", 0, "less than the minimum of 1"),
    ("models.transe.overrides.nations.model_kwargs.embedding_dim", -8, "less than the minimum of 1"),
    ("studies.s1.ranks.random_seed", -1, "less than the minimum of 0"),
    ("studies.s1.ranks.permutation_seeds.0", -1, "less than the minimum of 0"),
    ("studies.s1.testsize.num_train.0", -1, "less than the minimum of 0"),
    ("studies.s1.testsize.test_sizes.0", 0, "less than the minimum of 1"),
    ("studies.s1.testsize.seeds.0", -1, "less than the minimum of 0"),
    ("studies.s2.expectation_curves.num_candidates.0", 0, "less than the minimum of 1"),
    ("studies.s2.expectation_curves.num_ranks", 0, "less than the minimum of 1"),
    ("studies.s2.expectation_curves.num_samples", 1, "less than the minimum of 2"),
    ("studies.s2.expectation_curves.seed", -1, "less than the minimum of 0"),
    ("studies.s2.desiderata.num_random", 5, "less than the minimum of 10"),
    ("studies.s2.desiderata.seed", -1, "less than the minimum of 0"),
    ("studies.s3.datasets.umls_two_view.k1", -1, "less than the minimum of 0"),
    ("studies.s3.datasets.umls_two_view.k2", -1, "less than the minimum of 0"),
    ("studies.s3.datasets.umls_two_view.different_below", 1.5, "greater than the maximum of 1"),
    ("studies.s3.datasets.umls_two_view.name_noise.missing", 1.5, "greater than the maximum of 1"),
    ("studies.s3.datasets.umls_two_view.name_noise.edited", -0.1, "less than the minimum of 0"),
    ("studies.s3.datasets.umls_two_view.name_noise.max_edits", 0, "less than the minimum of 1"),
    ("studies.s3.datasets.umls_two_view.name_noise.seed", -1, "less than the minimum of 0"),
    ("studies.s3.seeds.0", -1, "less than the minimum of 0"),
    ("studies.s3.train_ratios.0", 1.0, "greater than or equal to the maximum of 1"),
    ("studies.s3.train_ratios.0", 0, "less than or equal to the minimum of 0"),
    ("studies.s3.valid_fraction", -0.5, "less than the minimum of 0"),
    ("studies.s3.strength.seed_ratio", 1.0, "greater than or equal to the maximum of 1"),
    ("studies.s3.strength.valid_fraction", 1.5, "greater than the maximum of 1"),
    ("studies.s3.strength.rdgcn_ratios.0", 0, "less than or equal to the minimum of 0"),
    ("studies.s3.bootea.pos_margin", -1, "less than the minimum of 0"),
    ("studies.s3.bootea.neg_margin", -1, "less than the minimum of 0"),
    ("studies.s3.bootea.neg_weight", -1, "less than the minimum of 0"),
    ("studies.s3.bootea.num_negatives", 0, "less than the minimum of 1"),
    ("studies.s3.bootea.truncation", -1, "less than the minimum of 0"),
    ("studies.s3.bootea.patience", -1, "less than the minimum of 0"),
    ("studies.s3.rdgcn.refresh_every", 0, "less than the minimum of 1"),
    ("studies.s3.rsn4ea.embedding_dim", 0, "less than the minimum of 1"),
    ("studies.s3.rsn4ea.num_layers", 0, "less than the minimum of 1"),
    ("studies.s3.rsn4ea.num_epochs", 0, "less than the minimum of 1"),
    ("studies.s3.rsn4ea.walks_per_entity", 0, "less than the minimum of 1"),
    ("studies.s3.rsn4ea.walk_length", 1, "less than the minimum of 2"),
    ("studies.s3.rsn4ea.depth_bias", 1.0, "greater than or equal to the maximum of 1"),
    ("studies.s3.rsn4ea.cross_bias", 0, "less than or equal to the minimum of 0"),
    ("studies.s3.rsn4ea.batch_size", 0, "less than the minimum of 1"),
    ("studies.s3.rsn4ea.lr", 0, "less than or equal to the minimum of 0"),
    ("studies.s3.rsn4ea.num_negatives", 0, "less than the minimum of 1"),
    ("studies.s3.rsn4ea.patience", -1, "less than the minimum of 0"),
    ("studies.s3.multike.attr_min_overlap", 1.5, "greater than the maximum of 1"),
    ("studies.s3.ideal.train_ratio", 1.2, "greater than or equal to the maximum of 1"),
    ("studies.s3.industrial.train_ratio", 0, "less than or equal to the minimum of 0"),
    ("studies.s3.gcn_align.num_epochs", 0, "less than the minimum of 1"),
    ("studies.s3.gcn_align.embedding_dim", 0, "less than the minimum of 1"),
    ("studies.s3.gcn_align.num_layers", -1, "less than the minimum of 0"),
    ("studies.s3.gcn_align.num_negatives", 0, "less than the minimum of 1"),
    ("studies.s3.gcn_align.margin", -3, "less than the minimum of 0"),
    ("studies.s3.gcn_align.lr", 0, "less than or equal to the minimum of 0"),
    ("studies.s3.transe_merge.model_kwargs.embedding_dim", 0, "less than the minimum of 1"),
    ("studies.s3.transe_merge.optimizer_kwargs.lr", 0, "less than or equal to the minimum of 0"),
    ("studies.s3.transe_merge.training_kwargs.num_epochs", 0, "less than the minimum of 1"),
    ("studies.s3.transe_merge.loss_kwargs.margin", -1, "less than the minimum of 0"),
    ("studies.s3.transe_merge.negative_sampler_kwargs.num_negs_per_pos", 0, "less than the minimum of 1"),
    ("studies.s3.name_vectors.dim", 1, "less than the minimum of 2"),
    ("studies.s3.bootea.embedding_dim", 0, "less than the minimum of 1"),
    ("studies.s3.bootea.num_epochs", 0, "less than the minimum of 1"),
    ("studies.s3.bootea.batch_size", 0, "less than the minimum of 1"),
    ("studies.s3.bootea.lr", 0, "less than or equal to the minimum of 0"),
    ("studies.s3.bootea.margin", -1, "less than the minimum of 0"),
    ("studies.s3.bootea.align_weight", -1, "less than the minimum of 0"),
    ("studies.s3.bootea.bootstrap_every", 0, "less than the minimum of 1"),
    ("studies.s3.bootea.threshold", 1.5, "greater than the maximum of 1"),
    ("studies.s3.multike.structure.threshold", -2, "less than the minimum of -1"),
    ("studies.s3.rdgcn.num_layers", -1, "less than the minimum of 0"),
    ("studies.s3.rdgcn.num_epochs", 0, "less than the minimum of 1"),
    ("studies.s3.rdgcn.lr", 0, "less than or equal to the minimum of 0"),
    ("studies.s3.rdgcn.margin", -1, "less than the minimum of 0"),
    ("studies.s3.rdgcn.num_negatives", 0, "less than the minimum of 1"),
    ("studies.s3.rdgcn.gate_bias", 30, "greater than the maximum of 20"),
    ("studies.s3.multike.name_weight", -1, "less than the minimum of 0"),
    ("studies.s3.multike.attr_weight", -1, "less than the minimum of 0"),
    ("studies.s3.multike.structure_weight", -1, "less than the minimum of 0"),
    ("studies.s3.multike.attr_dim", 1, "less than the minimum of 2"),
    ("studies.s3.conventional.threshold", 1.5, "greater than the maximum of 1"),
    ("studies.s4.hits_at.0", 0, "less than the minimum of 1"),
    ("studies.s4.ir_cutoff", 0, "less than the minimum of 1"),
    ("studies.s4.category_threshold", 1, "less than or equal to the minimum of 1"),
    ("studies.s4.pool.max_depth", 0, "less than the minimum of 1"),
    ("studies.s4.simulation.hide_fraction", 1.0, "greater than or equal to the maximum of 1"),
    ("studies.s4.simulation.hide_fraction", -0.2, "less than the minimum of 0"),
    ("studies.s4.simulation.seed", -1, "less than the minimum of 0"),
    ("studies.s4.stability.fractions.0", 0, "less than or equal to the minimum of 0"),
    ("studies.s4.stability.fractions.0", 1.5, "greater than the maximum of 1"),
    ("studies.s4.stability.repeats", 0, "less than the minimum of 1"),
    ("studies.s4.stability.seed", -1, "less than the minimum of 0"),
    ("studies.s5.histogram_bins", 0, "less than the minimum of 2"),
    ("studies.s5.platt.learning_rate", 0, "less than or equal to the minimum of 0"),
    ("studies.s5.platt.batch_size", 0, "less than the minimum of 1"),
    ("studies.s5.platt.epochs", 0, "less than the minimum of 1"),
    ("studies.s5.platt.epochs", 100001, "greater than the maximum of 100000"),
    ("studies.s5.seed", -1, "less than the minimum of 0"),
    ("studies.s5.holdout_fraction", -0.1, "less than the minimum of 0"),
    ("studies.s5.holdout_fraction", 1, "greater than or equal to the maximum of 1"),
    ("studies.s2.released_results.monte_carlo.num_samples", 1, "less than the minimum of 2"),
    ("studies.s2.released_results.monte_carlo.seed", -1, "less than the minimum of 0"),
    ("studies.s5.histogram_bins", 3, "not a multiple of 2"),
    ("datasets.nations.resplit.valid_fraction", 0, "less than or equal to the minimum of 0"),
    ("datasets.nations.resplit.valid_fraction", 0.5, "greater than or equal to the maximum of 0.5"),
    ("datasets.nations.resplit.test_fraction", 0, "less than or equal to the minimum of 0"),
    ("datasets.nations.resplit.test_fraction", 0.5, "greater than or equal to the maximum of 0.5"),
    ("datasets.nations.resplit.seed", -1, "less than the minimum of 0"),
    ("ranking.candidates.nations.k", 0, "less than the minimum of 1"),
    ("ranking.candidates.nations.seed", -1, "less than the minimum of 0"),
    ("studies.s6.k.0", 0, "less than the minimum of 1"),
    ("studies.s6.draws", 0, "less than the minimum of 1"),
    ("studies.s6.seed", -1, "less than the minimum of 0"),
    ("studies.s6.gamma", -0.1, "less than the minimum of 0"),
    ("studies.s6.gamma", 1.5, "greater than the maximum of 1"),
    ("studies.s6.correction_buckets", 0, "less than the minimum of 1"),
    ("studies.s6.timing_triples", 0, "less than the minimum of 1"),
    ("studies.s6.guided_tolerance", 0, "less than or equal to the minimum of 0"),
]


def set_dotted(config: dict, dotted: str, value) -> None:
    """Set ``a.b.0.c`` in ``config``, creating missing dicts (and a one-item list for a missing list)."""
    parts = dotted.split(".")
    node = config
    for part, following in zip(parts[:-1], parts[1:]):
        if isinstance(node, list):
            node = node[int(part)]
            continue
        if node.get(part) is None:
            node[part] = [None] if following.isdigit() else {}
        node = node[part]
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


@pytest.mark.parametrize(("key", "value", "bound"), BAD_VALUES, ids=[f"{k}={v}" for k, v, _ in BAD_VALUES])
def test_out_of_range_value_names_key_and_range(base, key, value, bound):
    config = copy.deepcopy(base)
    set_dotted(config, key, value)
    with pytest.raises(ConfigError) as error:
        validate_config(config, check_pykeen=False)
    message = str(error.value)
    assert message.startswith(f"config key {key}: {value!r} is ") or message.startswith(f"config key {key}: {value} is ")
    assert bound in message


def _numeric_leaves(schema: dict) -> list[tuple[str, dict]]:
    """(dotted pattern, schema node) of every number or integer in the schema; ``*`` stands for a config key or a list
    position. ``$ref`` is followed, so a bound defined once in ``$defs`` appears under each path that uses it."""
    out = []

    def resolve(node):
        while "$ref" in node:
            target = schema
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            node = {**{k: v for k, v in node.items() if k != "$ref"}, **target}
        return node

    def walk(node, path):
        node = resolve(node)
        types = node.get("type")
        if {"integer", "number"} & set(types if isinstance(types, list) else [types]):
            out.append((path, node))
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{path}.*")
        for key, sub in node.get("properties", {}).items():
            walk(sub, f"{path}.{key}" if path else key)
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], f"{path}.*")

    walk(schema, "")
    return out


def test_every_bound_is_tested(repo):
    """Every number in the schema has a bound (but the free coordinates), and every bound a case in BAD_VALUES."""
    import re

    with open(repo / "workflow" / "schemas" / "config.schema.yaml") as handle:
        schema = yaml.safe_load(handle)
    free = {"studies.s5.platt_inits.*.*"}  # initial (a, b) of a Platt function: any real pair
    bounds = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
    leaves = _numeric_leaves(schema)
    unbounded = [path for path, node in leaves if not bounds & set(node) and path not in free]
    assert not unbounded, f"numbers without bounds: {unbounded}"
    paths_of = {}  # one entry per bound, however many paths lead to it
    for path, node in leaves:
        if bounds & set(node):
            paths_of.setdefault(id(node), []).append(path)
    keys = [key for key, _, _ in BAD_VALUES]
    untested = [
        paths[0]
        for paths in paths_of.values()
        if not any(re.fullmatch(re.escape(path).replace(r"\*", r"[^.]+"), key) for key in keys for path in paths)
    ]
    assert not untested, f"bounds without a bad-value case in BAD_VALUES: {untested}"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("key", "value", "bound"),
    [
        ("models.transe.training_kwargs.num_epochs", -3, "less than the minimum of 1"),
        ("studies.s4.simulation.hide_fraction", 1.0, "greater than or equal to the maximum of 1"),
    ],
)
def test_out_of_range_value_fails_the_dry_run(tmp_path, base, key, value, bound):
    """A bad value stops ``snakemake -n`` before any job, with the key and the range on the console."""
    import subprocess
    import sys

    from conftest import copy_workflow

    workdir = copy_workflow(tmp_path)
    config = copy.deepcopy(base)
    set_dotted(config, key, value)
    (workdir / "config" / "bad.yaml").write_text(yaml.safe_dump(config))
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", "config/bad.yaml"],
        cwd=workdir, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode != 0
    assert f"config key {key}: {value} is {bound}" in proc.stdout + proc.stderr
    assert not (workdir / "results").exists()


def test_schema_defaults_are_what_validation_fills_in():
    """schema_defaults(node) gives exactly the keys validation adds to an empty entry of that node."""
    from kgeval.config import schema_default, schema_defaults

    config = {"datasets": {"kg": {"name": "Nations"}}, "models": {"m": {"model": "TransE"}}}
    validate_config(config, check_pykeen=False)
    entry = config["datasets"]["kg"]
    defaults = schema_defaults("datasets.*")
    assert defaults and all(entry[key] == value for key, value in defaults.items() if key != "name")
    assert set(entry) == set(defaults) | {"name"}
    model = config["models"]["m"]
    assert schema_default("models.*.optimizer") == model["optimizer"]
    assert schema_default("models.*.training_loop") == model["training_loop"]
    # a copy each time: changing one does not change the schema's
    defaults["source"] = "changed"
    assert schema_defaults("datasets.*")["source"] == entry["source"]
    with pytest.raises(KeyError):
        schema_default("datasets.*.no_such_key")
