"""Every property of the case schema has a description, so an editor's hover explains it."""

from __future__ import annotations

import json
from pathlib import Path

SCHEMA = Path(__file__).resolve().parent.parent / "schemas" / "case.schema.json"
# constraint branches restate properties declared (and described) elsewhere
CONSTRAINTS = {"if", "then", "else", "not", "dependentSchemas"}


def _undescribed(node, path=()):
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict) and not CONSTRAINTS & set(path):
            for name, sub in props.items():
                if isinstance(sub, dict) and not (isinstance(sub.get("description"), str) and sub["description"].strip()):
                    yield "/".join((*path, "properties", name))
        for key, sub in node.items():
            yield from _undescribed(sub, (*path, key))
    elif isinstance(node, list):
        for i, sub in enumerate(node):
            yield from _undescribed(sub, (*path, str(i)))


def test_every_property_has_a_description():
    assert list(_undescribed(json.loads(SCHEMA.read_text(encoding="utf-8")))) == []


def test_the_check_finds_a_missing_description():
    assert list(_undescribed({"properties": {"a": {"type": "string"}, "b": {"description": "x"}}})) == ["properties/a"]
