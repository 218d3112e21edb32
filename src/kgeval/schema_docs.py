"""The configuration reference (``docs/configuration.md``), generated from the config schema.

Every key of ``workflow/schemas/config.schema.yaml`` becomes one row: its dotted path (``*`` for a name the user
chooses, e.g. a dataset key), its type, its default and its description. ``tests/test_schema_docs.py`` checks that the
committed page equals what this module renders, so the page cannot drift from the schema. Regenerate it with::

    python -m kgeval.schema_docs > docs/configuration.md
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from kgeval.config import load_schema

__all__ = ["iter_keys", "render"]

HEADER = """# Configuration reference

Generated from `workflow/schemas/config.schema.yaml` by `python -m kgeval.schema_docs > docs/configuration.md`;
`tests/test_schema_docs.py` fails when this page and the schema differ. A config holds science only (datasets,
models, hyperparameters, seeds, studies); threads, memory, runtime and GPUs belong to the rules and the profiles under
`workflow/profiles/`. Every key not listed is an error that names the key; every key left out takes its default
(the defaults live only in the schema). `*` stands for a name you choose (a dataset, model or EA pair key).
"Paper 000" … "paper 004" are the papers of S1 … S5: Berrendorf et al. (WI-IAT 2020), Hoyt et al. (GLB@WWW 2022),
Zhang et al. (COLING 2020), Zhou et al. (SIGIR 2022) and the anonymous WWW 2024 submission, cited in full in the
README.

The shipped configs: `config/config.yaml` (default tier), `config/released.yaml`, `config/real.yaml`,
`config/paper.yaml`, `config/example.yaml` (your own triples), `config/byo.yaml` (models trained elsewhere: a saved
PyKEEN model and a ranks file, [byo.md](byo.md)), `config/test.yaml` (the end-to-end test). Keys whose
type reads "see `x` below" take the shared definition `x` listed after the main table; keyword arguments without a
default there take the PyKEEN or torch class's own default.

"""

TABLE_HEAD = """| key | type | default | description |
|---|---|---|---|
"""
HEADER += TABLE_HEAD


def _type(node: Mapping[str, Any]) -> str:
    if "$ref" in node:
        return f"see `{node['$ref'].rsplit('/', 1)[-1]}` below"
    if "enum" in node:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in node["enum"])
    kind = node.get("type", "")
    kinds = kind if isinstance(kind, list) else [kind]
    return " or ".join(str(k) for k in kinds if k)


def _default(node: Mapping[str, Any]) -> str:
    if "default" not in node:
        return ""
    text = json.dumps(node["default"], ensure_ascii=False)
    return f"`{text}`" if len(text) <= 60 else f"`{text[:57]}...`"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def iter_keys(node: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every documented key below ``node`` as (dotted path, schema node), depth first in the schema's order.

    :param node: a schema node of type object
    :param prefix: the dotted path of ``node`` (empty at the root)
    """
    for name, child in node.get("properties", {}).items():
        path = f"{prefix}.{name}" if prefix else name
        yield path, child
        yield from iter_keys(child, path)
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping) and (extra.get("properties") or extra.get("additionalProperties")):
        yield from iter_keys(extra, f"{prefix}.*" if prefix else "*")
    items = node.get("items")
    if isinstance(items, Mapping) and items.get("properties"):
        yield from iter_keys(items, f"{prefix}[]")


def render(schema: Mapping[str, Any] | None = None) -> str:
    """The Markdown page: a header and one table row per key of ``schema`` (default: the shipped schema)."""
    schema = load_schema() if schema is None else schema
    lines = [_row(path, node) for path, node in iter_keys(schema)]
    for name, definition in schema.get("$defs", {}).items():
        lines += ["", f"### `{name}`", "", _cell(definition.get("description", "")), "", TABLE_HEAD.rstrip("\n")]
        lines += [_row(path, node) for path, node in iter_keys(definition, name)]
    return HEADER + "\n".join(lines) + "\n"


def _row(path: str, node: Mapping[str, Any]) -> str:
    return f"| `{path}` | {_type(node)} | {_default(node)} | {_cell(node.get('description', ''))} |"


if __name__ == "__main__":
    sys.stdout.write(render())
