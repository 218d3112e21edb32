"""Loading and validating the pipeline configuration against ``workflow/schemas/config.schema.yaml``.

Validation fills in every default the schema declares and turns JSON-Schema errors into one message that names the
offending key (as a dotted path), what is wrong, and the allowed keys or values. Names that only PyKEEN knows
(datasets, models) are resolved through PyKEEN's class resolvers, so a typo fails before any job starts.
"""

from __future__ import annotations

import copy
import difflib
import functools
import inspect
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator, validators

__all__ = [
    "ConfigError",
    "MEMORY_BUDGET_MB",
    "SCHEMA_PATH",
    "load_schema",
    "schema_default",
    "schema_defaults",
    "validate_config",
    "drop_left_out_pairs",
    "load_config",
    "check_names",
    "check_kwargs",
    "check_model_sources",
    "check_input_files",
    "accepted_kwargs",
    "model_spec_for",
    "prepend_pythonpath",
    "resolve_data_dir",
]

#: the schema shipped with the workflow
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """The configuration does not match the schema or names something unknown."""


def load_schema(path: str | os.PathLike | None = None) -> dict[str, Any]:
    """Read the JSON schema (YAML syntax)."""
    with open(path or SCHEMA_PATH, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@functools.cache
def _shipped_schema() -> dict[str, Any]:
    return load_schema()


def _schema_node(path: str) -> dict[str, Any]:
    node = _shipped_schema()
    for part in path.split(".") if path else []:
        node = node["additionalProperties"] if part == "*" else node["properties"][part]
    return node


def schema_defaults(path: str) -> dict[str, Any]:
    """The defaults the shipped schema declares for the keys of one node: what validation fills into that node.

    For a library function that is also called with a partial entry (``{"name": "Nations"}``): merging these under
    the entry gives the validated entry's values, and each default lives only in the schema.

    :param path: the node's dotted key, ``*`` for any key of a mapping (e.g. ``datasets.*``, an entry of ``datasets``;
        ``datasets.*.resplit``; ``studies.s3.name_vectors``)
    :returns: key -> default (a fresh copy), for the node's keys that have one
    :raises KeyError: when the schema has no such node
    """
    node = _schema_node(path)
    return {name: copy.deepcopy(sub["default"]) for name, sub in node.get("properties", {}).items() if "default" in sub}


def schema_default(key: str) -> Any:
    """The schema's default of one dotted key (e.g. ``models.*.optimizer``), a fresh copy.

    :raises KeyError: when the key has no default
    """
    node, _, name = key.rpartition(".")
    return schema_defaults(node)[name]


#: MiB for one batch of scores and its temporaries in every scoring loop (ranking, S1 ties, S3 alignment, S5
#: calibration) when a library caller names none: the schema's default of ``ranking.memory_budget_mb``, which the
#: pipeline's jobs pass explicitly from the validated config.
MEMORY_BUDGET_MB: float = float(schema_default("ranking.memory_budget_mb"))


def _extend_with_default(validator_class):
    """A validator that also writes each property's ``default`` into the instance (the jsonschema FAQ pattern)."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema and name not in instance:
                    instance[name] = copy.deepcopy(subschema["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return validators.extend(validator_class, {"properties": set_defaults})


_DefaultingValidator = _extend_with_default(Draft202012Validator)


def _path(error) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "<top level>"


def _message(error) -> str:
    key = _path(error)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        where = f"{key}." if key != "<top level>" else ""
        return (
            f"unknown config key {', '.join(where + e for e in extra)}; allowed keys here: "
            f"{', '.join(allowed) or '(none)'}. Remove or rename it (see workflow/schemas/config.schema.yaml)."
        )
    if error.validator == "enum":
        allowed = ", ".join(repr(v) for v in error.validator_value)
        return f"config key {key}: {error.instance!r} is not allowed; use one of {allowed}"
    if error.validator == "required":
        return f"config key {key}: {error.message}"
    return f"config key {key}: {error.message}"


def validate_config(config: dict[str, Any], schema: dict[str, Any] | None = None, check_pykeen: bool = True) -> dict:
    """Validate ``config`` in place, filling in defaults; raise :class:`ConfigError` on the first problem.

    :param config: the configuration (mutated: defaults are added)
    :param schema: the schema (defaults to the shipped one)
    :param check_pykeen: also resolve dataset and model names through PyKEEN
    :returns: the same dict
    """
    schema = schema or load_schema()
    validator = _DefaultingValidator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (len(list(e.absolute_path)), _path(e)))
    if errors:
        raise ConfigError(_message(errors[0]))
    drop_left_out_pairs(config)
    check_model_sources(config)
    check_sampled_datasets(config)
    if check_pykeen:
        check_names(config)
        check_kwargs(config)
    return config


def drop_left_out_pairs(config: dict[str, Any]) -> None:
    """Remove the S3 pairs set to null (``studies.s3.datasets.<key>: null``), in place.

    A null entry leaves a pair out, so that an overlay config (``--configfile base.yaml overlay.yaml``, which
    Snakemake merges key by key) can drop a pair of the config it extends, e.g. ``config/paper_offline.yaml``.

    :raises ConfigError: when every pair is left out
    """
    s3 = (config.get("studies") or {}).get("s3") or {}
    pairs = s3.get("datasets")
    if not isinstance(pairs, dict):
        return
    for key in [k for k, v in pairs.items() if v is None]:
        del pairs[key]
    if not pairs:
        raise ConfigError("config key studies.s3.datasets: every pair is null (left out); keep at least one")


def sampled_datasets(config: dict[str, Any]) -> list[str]:
    """The dataset keys evaluated with sampled candidates (``ranking.candidates.<key>.mode: sampled``), in config
    order (``config``: validated, its defaults filled in)."""
    entries = config["ranking"]["candidates"]
    return [key for key in config["datasets"] if key in entries and entries[key]["mode"] == "sampled"]


def full_datasets(config: dict[str, Any]) -> list[str]:
    """The dataset keys ranked against every entity (all but :func:`sampled_datasets`), in config order: the ones
    with ranks tables, which every study reads."""
    sampled = set(sampled_datasets(config))
    return [key for key in config["datasets"] if key not in sampled]


#: the study keys that name datasets whose ranks tables or scores of every entity they read
_RANKED_DATASET_KEYS: tuple[tuple[str, ...], ...] = (
    ("s1", "ranks", "datasets"), ("s2", "datasets"), ("s4", "datasets"), ("s4", "released"), ("s5", "datasets"),
    ("s6", "datasets"),
)


def check_sampled_datasets(config: dict[str, Any]) -> None:
    """Every key of ``ranking.candidates`` names a configured dataset, and no study names a sampled one (a study reads
    full ranks tables, which a sampled dataset does not have); raise :class:`ConfigError` naming the key and the fix."""
    entries = config["ranking"]["candidates"]
    unknown = sorted(set(entries) - set(config["datasets"]))
    if unknown:
        raise ConfigError(
            f"config key ranking.candidates: {unknown} not among the configured datasets {sorted(config['datasets'])}; "
            "name a key of datasets"
        )
    sampled = set(sampled_datasets(config))
    for path in _RANKED_DATASET_KEYS:
        node: Any = config.get("studies") or {}
        for part in path:
            node = (node or {}).get(part) if isinstance(node, dict) else None
        named = sorted(sampled & set(node or ()))
        if named:
            raise ConfigError(
                f"config key studies.{'.'.join(path)}: {named} is evaluated with sampled candidates "
                f"(ranking.candidates.{named[0]}) and has no full ranks, which study {path[0].upper()} reads; leave it "
                f"out of studies.{'.'.join(path)}, or set ranking.candidates.{named[0]}.mode: full"
            )


def _known(names: Iterable[str]) -> str:
    return ", ".join(sorted(names))


def check_names(config: dict[str, Any]) -> None:
    """Resolve every PyKEEN dataset and model name in the config; raise :class:`ConfigError` naming the key."""
    from pykeen.datasets import dataset_resolver
    from pykeen.models import model_resolver

    for key, spec in config.get("datasets", {}).items():
        if spec["source"] == "pykeen":
            name = spec.get("name") or ""
            if not name:
                raise ConfigError(f"config key datasets.{key}.name: a PyKEEN dataset needs a name (e.g. Nations)")
            try:
                dataset_resolver.lookup(name)
            except (KeyError, ValueError):
                raise ConfigError(
                    f"config key datasets.{key}.name: PyKEEN has no dataset {name!r}; known: "
                    f"{_known(dataset_resolver.lookup_dict)}"
                ) from None
        else:
            missing = [s for s in ("train", "valid", "test") if not spec.get(s)]
            if missing:
                raise ConfigError(f"config key datasets.{key}: source files needs {', '.join(missing)}")
    for key, spec in config.get("models", {}).items():
        if spec["source"] == "ranks" or (spec["source"] == "checkpoint" and not spec["model"]):
            continue  # nothing to resolve: a ranks file has no model, a checkpoint names its own class
        try:
            model_resolver.lookup(spec["model"])
        except (KeyError, ValueError):
            raise ConfigError(
                f"config key models.{key}.model: PyKEEN has no model {spec['model']!r}; known: "
                f"{_known(model_resolver.lookup_dict)}"
            ) from None


#: what a model trained elsewhere needs, per source (config key -> what it holds, for the message)
_SOURCE_NEEDS = {
    "checkpoint": "the folder PipelineResult.save_to_directory() wrote, or a torch.save(model) file",
    "ranks": "the ranks file (.tsv or .parquet)",
}


def check_model_sources(config: dict[str, Any]) -> None:
    """Check the entries of models trained elsewhere (``source: checkpoint`` or ``ranks``) against the rest of the
    config: each needs ``path`` and a configured ``dataset``, and its ``seed`` must be one of ``seeds``. Their files
    are checked by :func:`kgeval.lp.source_checks.check_source_files` (the workflow does so before any job).

    :raises ConfigError: naming the dotted key and the fix
    """
    for key, spec in config.get("models", {}).items():
        where = f"config key models.{key}"
        if spec["source"] == "train":
            if not spec["model"]:
                raise ConfigError(f"{where}.model: a trained model needs a PyKEEN model name (e.g. TransE)")
            continue
        if not spec["path"]:
            raise ConfigError(f"{where}.path: a model with source {spec['source']} needs path: "
                              f"{_SOURCE_NEEDS[spec['source']]}")
        if spec["dataset"] not in config["datasets"]:
            what = f"{spec['dataset']!r} is not a configured dataset" if spec["dataset"] else "missing"
            raise ConfigError(
                f"{where}.dataset: {what}; name the dataset it was trained on, one of {_known(config['datasets'])} "
                "(or add it under datasets)"
            )
        if spec["ids"] and spec["source"] != "checkpoint":
            raise ConfigError(f"{where}.ids: only a model with source checkpoint has ids to map; remove ids")
        if spec["seed"] is not None and spec["seed"] not in config["seeds"]:
            raise ConfigError(
                f"{where}.seed: {spec['seed']} is not one of seeds {config['seeds']}; add it to seeds, or leave "
                "seed out (null: the first of seeds)"
            )


def accepted_kwargs(cls: type, method: str = "__init__") -> set[str] | None:
    """Keyword arguments that ``cls.<method>`` accepts, following ``**kwargs`` up the class hierarchy.

    :returns: the names, or ``None`` when some level takes ``**kwargs`` that it does not pass on to a base class
        (anything goes, so nothing can be checked)
    """
    names: set[str] = set()
    for klass in cls.__mro__:
        if method not in klass.__dict__ or klass is object:
            continue
        parameters = inspect.signature(getattr(klass, method)).parameters.values()
        names.update(p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        if not any(p.kind == p.VAR_KEYWORD for p in parameters):
            return names - {"self"}
        if method != "__init__":
            return None
        if klass.__module__.startswith("torch"):
            # torch.nn.Module.__init__(*args, **kwargs) accepts nothing in practice: stop at it
            return names - {"self"}
    return None


def _check_keys(where: str, given: Iterable[str], allowed: set[str] | None, target: str) -> None:
    if allowed is None:
        return
    for name in given:
        if name not in allowed:
            close = difflib.get_close_matches(name, sorted(allowed), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(
                f"config key {where}.{name}: {target} takes no argument {name!r}; {hint}"
                f"allowed: {_known(allowed)}"
            )


def _lookup(resolver: Any, name: str, where: str, what: str) -> type:
    """``resolver.lookup(name)``, or a :class:`ConfigError` naming the key and the known names."""
    try:
        return resolver.lookup(name)
    except (KeyError, ValueError):
        raise ConfigError(
            f"config key {where}: no {what} {name!r}; known: {_known(resolver.lookup_dict)}"
        ) from None


def check_kwargs(config: dict[str, Any]) -> None:
    """Check every model entry's ``*_kwargs`` (and per-dataset overrides) against the PyKEEN/torch signatures.

    A misspelled key (``embeding_dim``) fails here, before any job, naming the dotted key and the nearest allowed name,
    instead of a ``TypeError`` deep inside training.
    """
    from pykeen.losses import loss_resolver
    from pykeen.models import model_resolver
    from pykeen.optimizers import optimizer_resolver
    from pykeen.sampling import negative_sampler_resolver
    from pykeen.training import training_loop_resolver

    for key, entry in config.get("models", {}).items():
        if entry["source"] != "train":
            continue  # a model trained elsewhere takes no training settings
        variants = [(f"models.{key}", entry)] + [
            (f"models.{key}.overrides.{dataset}", {**entry, **override})
            for dataset, override in (entry.get("overrides") or {}).items()
        ]
        for where, spec in variants:
            # (kwargs key, class, method whose keywords it takes, what kgeval passes itself, label for messages)
            checks = [
                ("model_kwargs", _lookup(model_resolver, spec["model"], f"{where}.model", "PyKEEN model"), "__init__",
                 {"triples_factory", "random_seed", "loss", "loss_kwargs"}, "PyKEEN model"),
                ("optimizer_kwargs", _lookup(optimizer_resolver, spec.get("optimizer") or "adam",
                                             f"{where}.optimizer", "optimizer"), "__init__", {"params"}, "optimizer"),
                ("training_kwargs", _lookup(training_loop_resolver, spec.get("training_loop") or "slcwa",
                                            f"{where}.training_loop", "training loop"), "train",
                 {"triples_factory", "callbacks"}, "training loop"),
                ("negative_sampler_kwargs", _lookup(negative_sampler_resolver, spec.get("negative_sampler") or "basic",
                                                    f"{where}.negative_sampler", "negative sampler"), "__init__",
                 {"mapped_triples"}, "negative sampler"),
            ]
            if spec.get("loss"):
                checks.append(("loss_kwargs", _lookup(loss_resolver, spec["loss"], f"{where}.loss", "PyKEEN loss"),
                               "__init__", set(), "loss"))
            for kwargs_key, cls, method, internal, label in checks:
                allowed = accepted_kwargs(cls, method)
                suffix = ".train" if method == "train" else ""
                _check_keys(f"{where}.{kwargs_key}", spec.get(kwargs_key) or {},
                            None if allowed is None else allowed - internal, f"{label} {cls.__name__}{suffix}")


def check_input_files(entries: Iterable[tuple[str, str]], data_dir: str | os.PathLike | None) -> None:
    """Every ``(config key, path)`` must be a file; otherwise raise naming the key, the path and the fix.

    :param entries: from :func:`kgeval.lp.datasets.source_files` and :func:`kgeval.ea.data.source_files`
    :param data_dir: the config's ``data_dir`` (a missing folder gets its own message)
    """
    entries = list(entries)
    if data_dir is not None and not Path(data_dir).is_dir():
        users = sorted({key for key, path in entries if Path(path).is_relative_to(Path(data_dir))})
        if users:
            raise ConfigError(
                f"config key data_dir: folder {data_dir} does not exist (absolute: {Path(data_dir).resolve()}), "
                f"but {', '.join(users)} read from it; point data_dir at the folder with the local copies, or set "
                "data_dir: null to download them"
            )
    for key, path in entries:
        if not Path(path).is_file():
            raise ConfigError(
                f"config key {key}: file {path} does not exist (relative paths are relative to the working "
                f"directory {Path.cwd()}); fix the path in the config"
            )


def read_yaml(path: str | os.PathLike) -> dict[str, Any]:
    """Read a YAML config file; a syntax error names the file, line and column (1-based).

    :raises ConfigError: on a YAML syntax error or a file whose top level is not a mapping
    """
    with open(path, encoding="utf-8") as handle:
        try:
            config = yaml.safe_load(handle) or {}
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f"{path}, line {mark.line + 1}, column {mark.column + 1}" if mark is not None else str(path)
            problem = getattr(error, "problem", None) or str(error)
            context = getattr(error, "context", None)
            raise ConfigError(
                f"{where}: YAML syntax error: {problem}" + (f" ({context})" if context else "")
                + "; check brackets, quotes and indentation there (spaces only, no tabs)"
            ) from None
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of config keys, got {type(config).__name__}")
    return config


def load_config(path: str | os.PathLike, check_pykeen: bool = True) -> dict[str, Any]:
    """Read a YAML config file and validate it (defaults filled in)."""
    config = read_yaml(path)
    try:
        return validate_config(config, check_pykeen=check_pykeen)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None


def _merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def model_spec_for(config: dict[str, Any], model: str, dataset: str) -> dict[str, Any]:
    """The settings of ``model`` for ``dataset``: the model's entry with its ``overrides[dataset]`` merged in.

    :raises ConfigError: if the model is not configured
    """
    try:
        spec = config["models"][model]
    except KeyError:
        raise ConfigError(f"model {model!r} is not configured; configured: {_known(config['models'])}") from None
    spec = copy.deepcopy(spec)
    overrides = spec.pop("overrides", {}) or {}
    for key in _NOT_TRAINING_SETTINGS:
        spec.pop(key, None)
    return _merge(spec, overrides.get(dataset, {}))


#: keys of a model entry that say where it comes from, not how to train it (left out of the training settings)
_NOT_TRAINING_SETTINGS = ("source", "reference", "path", "dataset", "seed", "ids")


def prepend_pythonpath(path: str | os.PathLike) -> None:
    """Put ``path`` first on ``PYTHONPATH``, so that every job started from this process imports from it."""
    current = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(path), current) if p)


#: spellings of "no local folder" that arrive as strings from ``--config data_dir=null``
_NO_FOLDER = ("null", "None", "none", "~", "")


def resolve_data_dir(config: dict[str, Any]) -> str | None:
    """Set ``config["data_dir"]`` to ``None`` where it names no folder, so that the run downloads instead of stopping.

    A config reads its local copies from ``data_dir`` (``../shared/data`` in the released, real and paper tiers). In a
    clone without that folder every loader downloads what it needs when ``data_dir`` is null (PyKEEN's datasets into
    its cache, the EA pairs and the authors' releases into pystow's), so an absent folder means the same.

    :param config: the raw configuration (mutated: ``data_dir`` becomes ``None`` where no folder exists)
    :returns: the one console line to print when an absent folder was replaced, else ``None``
    """
    data_dir = config.get("data_dir")
    if data_dir in _NO_FOLDER:
        config["data_dir"] = None
        return None
    if isinstance(data_dir, str) and not Path(data_dir).is_dir():
        config["data_dir"] = None
        return (
            f"kgeval: data_dir {data_dir} not found: downloading what this config needs instead (PyKEEN's cache, "
            "pystow's ~/.data/kgeval); set --config data_dir=PATH to read local copies"
        )
    return None
