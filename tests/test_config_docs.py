"""config/README.md: generated from the config schema, current, and covering every key; the profile
table of docs/configuration.md: generated from the two profiles, and current."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow/schemas/config.schema.yaml"
DEFAULT_CONFIG = REPO / "config/config.yaml"
PAPER_CONFIG = REPO / "config/paper.yaml"
README = REPO / "config/README.md"
CONFIGURATION_DOC = REPO / "docs/configuration.md"

# Subschemas that constrain keys already declared elsewhere rather than declare keys of their own.
CONDITIONAL_KEYWORDS = {"if", "then", "else", "not", "allOf", "anyOf", "oneOf"}


def load_config_docs():
    """tools/config_docs.py as a module (tools/ is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("config_docs", REPO / "tools/config_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


config_docs = load_config_docs()


def load_yaml(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def description_of(schema: Mapping, root: Mapping) -> str:
    """A schema's own description, else that of the definition its `$ref` points to."""
    if str(schema.get("description", "")).strip():
        return schema["description"]
    if "$ref" in schema:
        return description_of(root["$defs"][schema["$ref"].removeprefix("#/$defs/")], root)
    return ""


def undescribed(node, root: Mapping, path: str) -> Iterator[str]:
    """Paths of declared keys (properties, map values, $defs) that have no description."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            yield from undescribed(item, root, f"{path}[{index}]")
        return
    if not isinstance(node, Mapping):
        return
    declared = {f"{path}.properties.{name}": child for name, child in node.get("properties", {}).items()}
    declared.update({f"{path}.$defs.{name}": child for name, child in node.get("$defs", {}).items()})
    if isinstance(node.get("additionalProperties"), Mapping):
        declared[f"{path}.additionalProperties"] = node["additionalProperties"]
    for child_path, child in declared.items():
        if not description_of(child, root):
            yield child_path
    for key, value in node.items():
        if key not in CONDITIONAL_KEYWORDS:
            yield from undescribed(value, root, f"{path}.{key}")


def config_key_paths(config: Mapping, schema: Mapping, path: tuple[str, ...] = ()) -> Iterator[str]:
    """Every key of a config as its documented dotted path (a map's keys as their placeholder)."""
    for key, value in config.items():
        if key in schema.get("properties", {}):
            name, child = key, schema["properties"][key]
        else:
            name = config_docs.MAP_KEY_PLACEHOLDERS.get(".".join(path), config_docs.ANY_MAP_KEY)
            child = schema["additionalProperties"]
        yield ".".join((*path, name))
        if isinstance(value, Mapping):
            yield from config_key_paths(value, child, (*path, name))


def test_readme_is_current():
    assert README.read_text(encoding="utf-8") == config_docs.rendered_readme(), (
        "config/README.md is not current: run python tools/config_docs.py"
    )


def test_configuration_doc_profile_table_is_current():
    assert CONFIGURATION_DOC.read_text(encoding="utf-8") == config_docs.rendered_configuration_doc(), (
        "docs/configuration.md's profile table is not current: run python tools/config_docs.py"
    )


def test_check_mode_accepts_the_current_docs():
    assert config_docs.main(["--check"]) == 0


def test_the_profile_table_is_marked_once():
    document = CONFIGURATION_DOC.read_text(encoding="utf-8")
    assert document.count(config_docs.PROFILE_TABLE_BEGIN) == 1
    assert document.count(config_docs.PROFILE_TABLE_END) == 1


def profile_row(table: str, label: str) -> list[str]:
    """The default's and the paper profile's cells of one row."""
    row = next(line for line in table.splitlines() if line.startswith(f"| {label} |"))
    return [cell.strip() for cell in row.strip("|").split("|")[1:]]


def test_the_profile_table_is_written_from_the_profiles_values():
    defaults, paper = load_yaml(DEFAULT_CONFIG), load_yaml(PAPER_CONFIG)
    defaults["generation"]["generations_per_segment"] = 7
    defaults["prefix_tuning"]["generations"] = None
    paper["prefix_tuning"]["generations"] = 5
    table = config_docs.profile_table(defaults, paper)
    default_cell, paper_cell = profile_row(table, "in-context generations")
    assert default_cell.startswith("7 per paragraph range")
    assert paper_cell.startswith(f"{paper['generation']['generations_per_segment']} per paragraph range")
    default_cell, paper_cell = profile_row(table, "prefix tuning")
    assert default_cell.endswith("one generation per fine-tuning sample")
    assert paper_cell.endswith("5 generations per method and seed")


def test_a_generated_dataset_is_described_by_its_sizes():
    dataset = {"format": "tab", "source": "generated", "documents": {"test": 4, "train": 30, "dev": 5}}
    assert config_docs.source_text(dataset) == (
        "a generated fictional corpus of 30 / 5 / 4 documents (`source: generated`)"
    )


def test_only_the_marked_block_is_replaced():
    begin, end = config_docs.PROFILE_TABLE_BEGIN, config_docs.PROFILE_TABLE_END
    document = f"Before.\n\n{begin}\n| old |\n{end}\n\nAfter.\n"
    assert config_docs.with_profile_table(document, "| new |\n") == (
        f"Before.\n\n{begin}\n| new |\n{end}\n\nAfter.\n"
    )
    with pytest.raises(ValueError, match="markers"):
        config_docs.with_profile_table("No table here.\n", "| new |\n")


def test_every_schema_key_has_a_description():
    schema = load_yaml(SCHEMA)
    missing = list(undescribed(schema, schema, "schema"))
    assert not missing, "keys without a description:\n" + "\n".join(missing)


def test_every_default_config_key_is_in_the_readme():
    schema = load_yaml(SCHEMA)
    schema = config_docs.inline_refs(schema, schema)
    readme = README.read_text(encoding="utf-8")
    missing = [
        path for path in config_key_paths(load_yaml(DEFAULT_CONFIG), schema) if f"`{path}`" not in readme
    ]
    assert not missing, "config keys missing from config/README.md: " + ", ".join(missing)


SMALL_SCHEMA = {
    "$defs": {"share": {"type": "number", "minimum": 0, "maximum": 1}},
    "properties": {
        "mode": {"enum": ["fast", "slow", "off"], "description": "How to run."},
        "runs": {"type": "array", "items": {"type": "integer", "minimum": 0}, "description": "Run ids."},
        "slots": {"oneOf": [{"type": "integer", "minimum": 1}, {"const": "auto"}], "description": "Slots."},
        "block": {
            "description": "A block.",
            "type": "object",
            "properties": {
                "rate": {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "description": "A | rate."},
                "limit": {"type": ["integer", "null"], "minimum": 2, "description": "A limit."},
                "share": {"$ref": "#/$defs/share", "description": "A share."},
                "delta": {
                    "type": ["number", "null"],
                    "exclusiveMinimum": 0,
                    "exclusiveMaximum": 1,
                    "default": None,
                    "description": "Unset in the config.",
                },
                "pairs": {
                    "type": "array",
                    "items": {
                        "type": "array",
                        "prefixItems": [{"type": "integer", "minimum": 1}, {"type": "string"}],
                    },
                    "description": "Pairs.",
                },
            },
        },
        "things": {
            "description": "Named things.",
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "description": "One thing.",
                "properties": {"size": {"type": "integer", "description": "Its size."}},
            },
        },
    },
}
SMALL_DEFAULTS = {
    "mode": "fast",
    "runs": [1, 2],
    "slots": 4,
    "things": {"a": {"size": 3}, "b": {"size": 4}},
    "block": {"rate": 5.0e-5, "limit": None, "share": 0.5, "pairs": [[1, "x"]]},
}
SMALL_PAPER = {
    "mode": "slow",
    "runs": [1, 2],
    "slots": "auto",
    "things": {"b": {"size": 5}},
    "block": {"limit": 8},
}
HEADER = "| Key | Type / allowed values | Default | Paper profile | Description |\n|---|---|---|---|---|\n"
SMALL_SECTIONS = (
    "## Top-level keys\n\n"
    + HEADER
    + "| `mode` | `fast`, `slow` or `off` | `fast` | `slow` | How to run. |\n"
    "| `runs` | list of integer ≥ 0 | `[1, 2]` |  | Run ids. |\n"
    "| `slots` | integer ≥ 1 or `auto` | `4` | `auto` | Slots. |\n"
    "\n## `block`\n\nA block.\n\n"
    + HEADER
    + "| `block.rate` | number in (0, 1] | `5e-5` |  | A \\| rate. |\n"
    "| `block.limit` | integer ≥ 2 or null | `null` | `8` | A limit. |\n"
    "| `block.share` | number in [0, 1] | `0.5` |  | A share. |\n"
    "| `block.delta` | number in (0, 1) or null | `null` |  | Unset in the config. |\n"
    "| `block.pairs` | list of [integer ≥ 1, string] | `[[1, x]]` |  | Pairs. |\n"
    "\n## `things`\n\nNamed things.\n\n" + HEADER + "| `things.<key>` | object |  |  | One thing. |\n"
    "| `things.<key>.size` | integer | a: `3`; b: `4` | b: `5` | Its size. |\n"
)


def test_small_schema_renders_to_the_known_tables():
    assert config_docs.sections(SMALL_SCHEMA, SMALL_DEFAULTS, SMALL_PAPER) == SMALL_SECTIONS
