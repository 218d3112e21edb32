"""Loading and validating the pipeline configuration against ``workflow/schemas/config.schema.yaml``.

Validation fills in every default the schema declares and turns JSON-Schema errors into one message that names the
offending key (as a dotted path), what is wrong, and the allowed keys or values. Names that only PyKEEN knows
(datasets, models) are resolved through PyKEEN's class resolvers, so a typo fails before any job starts.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator, validators

__all__ = [
    "ConfigError",
    "SCHEMA_PATH",
    "load_schema",
    "validate_config",
    "load_config",
    "check_names",
    "model_spec_for",
    "prepend_pythonpath",
]

#: the schema shipped with the workflow
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """The configuration does not match the schema or names something unknown."""


def load_schema(path: str | os.PathLike | None = None) -> dict[str, Any]:
    """Read the JSON schema (YAML syntax)."""
    with open(path or SCHEMA_PATH, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


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
    if check_pykeen:
        check_names(config)
    return config


def _known(names: Iterable[str]) -> str:
    return ", ".join(sorted(names))


def check_names(config: dict[str, Any]) -> None:
    """Resolve every PyKEEN dataset and model name in the config; raise :class:`ConfigError` naming the key."""
    from pykeen.datasets import dataset_resolver
    from pykeen.models import model_resolver

    for key, spec in config.get("datasets", {}).items():
        if spec.get("source", "pykeen") == "pykeen":
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
        try:
            model_resolver.lookup(spec["model"])
        except (KeyError, ValueError):
            raise ConfigError(
                f"config key models.{key}.model: PyKEEN has no model {spec['model']!r}; known: "
                f"{_known(model_resolver.lookup_dict)}"
            ) from None


def load_config(path: str | os.PathLike, check_pykeen: bool = True) -> dict[str, Any]:
    """Read a YAML config file and validate it (defaults filled in)."""
    with open(path, encoding="utf-8") as handle:
        config = yaml.safe_load(handle) or {}
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
    spec.pop("source", None)
    return _merge(spec, overrides.get(dataset, {}))


def prepend_pythonpath(path: str | os.PathLike) -> None:
    """Put ``path`` first on ``PYTHONPATH``, so that every job started from this process imports from it."""
    current = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(path), current) if p)
