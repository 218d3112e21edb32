"""docs/configuration.md is the schema rendered (kgeval.schema_docs): it names every key, and no other."""

from __future__ import annotations

import re

from conftest import REPO

from kgeval.config import load_schema
from kgeval.schema_docs import iter_keys, render


def test_committed_page_equals_the_rendered_schema():
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert page == render(), "docs/configuration.md is stale: python -m kgeval.schema_docs > docs/configuration.md"


def test_every_key_of_the_schema_is_a_row_with_a_description():
    """Walk the schema independently of iter_keys: every property name at any depth appears as a documented row."""
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `([^`]+)` \|(.*)$", render(), flags=re.M)}
    names: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            for name in node.get("properties", {}):
                names.add(name)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(load_schema())
    documented = {path.rsplit(".", 1)[-1] for path in rows}
    assert names <= documented, f"schema keys missing from the page: {sorted(names - documented)}"
    undescribed = [path for path, rest in rows.items() if rest.endswith("|  |")]
    assert not undescribed, f"keys without a description: {undescribed}"


def test_render_walks_nested_and_named_keys():
    schema = {
        "properties": {
            "a": {"type": "integer", "default": 1, "description": "x"},
            "b": {
                "type": "object",
                "description": "y",
                "additionalProperties": {"properties": {"c": {"enum": ["u", "v"], "default": "u", "description": "z"}}},
            },
        }
    }
    assert [path for path, _ in iter_keys(schema)] == ["a", "b", "b.*.c"]
    page = render(schema)
    assert '| `b.*.c` | `"u"` \\| `"v"` | `"u"` | z |' in page
    assert "| `a` | integer | `1` | x |" in page
