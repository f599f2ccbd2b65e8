"""The config schema's `default:` values agree with config/config.yaml wherever both state one.

config/config.yaml sets every key it names, so a schema default reaches a run only through an overlay
or a config that leaves the key out; a default that differs from config.yaml would make such a run
differ from the documented default without any key saying so.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow/schemas/config.schema.yaml"
DEFAULT_CONFIG = REPO / "config/config.yaml"

MISSING = object()  # a key the config leaves out, as opposed to one set to null


def load_yaml(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def resolved(schema: Mapping, root: Mapping) -> Mapping:
    """`schema` with a local `$ref` replaced by its target; keys beside the `$ref` win."""
    if "$ref" not in schema:
        return schema
    target = root
    for part in schema["$ref"].removeprefix("#/").split("/"):
        target = target[part]
    return {**resolved(target, root), **{key: value for key, value in schema.items() if key != "$ref"}}


def stated_default_pairs(default, value, path: str) -> Iterator[tuple[str, object, object]]:
    """(path, default, config value) for what a default states. An object's default states only the
    keys it lists (the keys' own defaults fill in the others when it applies), so each listed key is
    compared with the config's; any other default is compared whole."""
    if value is MISSING:
        return
    if isinstance(default, Mapping) and isinstance(value, Mapping):
        for key, item in default.items():
            yield from stated_default_pairs(item, value.get(key, MISSING), f"{path}.{key}")
        return
    yield path, default, value


def default_pairs(
    schema: Mapping, config, root: Mapping, path: str = ""
) -> Iterator[tuple[str, object, object]]:
    """Walk the schema alongside the config: named properties, a map's entries (`additionalProperties`)
    and a list's items, each against the subschema that validates it."""
    schema = resolved(schema, root)
    if "default" in schema:
        yield from stated_default_pairs(schema["default"], config, path or "(top level)")
    if isinstance(config, Mapping):
        properties = schema.get("properties", {})
        entries = schema.get("additionalProperties")
        for key, value in config.items():
            child = properties.get(key, entries if isinstance(entries, Mapping) else None)
            if child is not None:
                yield from default_pairs(child, value, root, f"{path}.{key}".lstrip("."))
    elif isinstance(config, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(config):
            yield from default_pairs(schema["items"], item, root, f"{path}[{index}]")


def walked_defaults(schema: Mapping, root: Mapping, pointer: str = "") -> Iterator[str]:
    """JSON pointers of the schema nodes whose default the walk above compares, whatever the config
    states: through named properties, `additionalProperties`, `items` and local `$ref`s."""
    if "default" in schema:
        yield pointer
    if "$ref" in schema:
        target = schema["$ref"].removeprefix("#")
        yield from walked_defaults(resolved({"$ref": schema["$ref"]}, root), root, target)
    for name, child in schema.get("properties", {}).items():
        yield from walked_defaults(child, root, f"{pointer}/properties/{name}")
    for keyword in ("additionalProperties", "items"):
        if isinstance(schema.get(keyword), Mapping):
            yield from walked_defaults(schema[keyword], root, f"{pointer}/{keyword}")


# Keywords whose value maps names to schemas, and those whose value is data, not a schema.
NAMED_SCHEMAS = {"properties", "$defs", "patternProperties"}
DATA_KEYWORDS = {"default", "enum", "const", "required", "examples"}


def stated_defaults(node, pointer: str = "") -> Iterator[str]:
    """JSON pointers of every schema node that states a default, wherever it is."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            yield from stated_defaults(item, f"{pointer}/{index}")
        return
    if not isinstance(node, Mapping):
        return
    if "default" in node:
        yield pointer
    for key, value in node.items():
        if key in NAMED_SCHEMAS:
            for name, child in value.items():
                yield from stated_defaults(child, f"{pointer}/{key}/{name}")
        elif key not in DATA_KEYWORDS:
            yield from stated_defaults(value, f"{pointer}/{key}")


def test_schema_defaults_equal_the_default_config():
    schema = load_yaml(SCHEMA)
    pairs = list(default_pairs(schema, load_yaml(DEFAULT_CONFIG), schema))
    assert pairs, "the walk compared no default: it no longer follows the schema's layout"
    differing = [
        f"{path}: schema default {default!r}, config/config.yaml {value!r}"
        for path, default, value in pairs
        if default != value
    ]
    assert not differing, "schema defaults that differ from config/config.yaml:\n" + "\n".join(differing)


def test_the_walk_reaches_every_schema_default():
    # A default under a conditional (allOf, if/then, oneOf) applies only where its branch does, and
    # the comparison above does not look there: such a default needs its own reasoned test.
    schema = load_yaml(SCHEMA)
    unreached = set(stated_defaults(schema)) - set(walked_defaults(schema, schema))
    assert not unreached, "schema defaults the comparison does not reach: " + ", ".join(sorted(unreached))
