"""Render config/README.md, the reference of every configuration key, from the config schema.

The schema (workflow/schemas/config.schema.yaml) is the one place where keys, their types and their
descriptions are written; the Default and Paper profile columns are read from config/config.yaml and
config/paper.yaml.

    python tools/config_docs.py          # write config/README.md
    python tools/config_docs.py --check  # exit 1 if config/README.md is not current
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow/schemas/config.schema.yaml"
DEFAULT_CONFIG = REPO / "config/config.yaml"
PAPER_CONFIG = REPO / "config/paper.yaml"
README = REPO / "config/README.md"

# A map's keys are the user's (dataset names, table names), so the dotted path shows a placeholder.
MAP_KEY_PLACEHOLDERS = {"datasets": "<name>", "tables.seeds": "<table>"}
ANY_MAP_KEY = "<key>"
ABSENT = "—"
MISSING = object()  # a key absent from a config, as opposed to one set to null

INTRO = """\
# Configuration keys

<!-- Generated from workflow/schemas/config.schema.yaml by tools/config_docs.py: edit the schema's
descriptions, then run `python tools/config_docs.py`. -->

[config.yaml](config.yaml) is the embedded default, which `workflow/Snakefile` loads: the shipped
demo corpora and the embedded SmolLM2-135M model, sized to run offline on a 2-core CPU.
[paper.yaml](paper.yaml) holds the paper's settings as an overlay: a key it sets replaces the
default's, and the keys it leaves out keep their default.

```bash
snakemake --cores 8 --configfile config/paper.yaml -- results/tables/table1.csv
```

Your own overlay works the same way; several `--configfile` files apply in order. `--config` sets
a top-level key for one run, e.g. `--config 'methods=[baseline,icl,icl_pe]'` or
`--config on_invalid_record=drop`. Snakemake reads the values inside a list or block given there
as strings, so numbers below the top level (`seeds`, `generation.*`) belong in an overlay file.
The merged config is validated against
[workflow/schemas/config.schema.yaml](../workflow/schemas/config.schema.yaml) before any job runs.

**Default** is the value in `config.yaml`, **Paper profile** the value with `paper.yaml` where it
differs from the default. `<name>` stands for a dataset's name and `<table>` for a table's; their
values are given per dataset or table.
"""

TABLE_HEADER = (
    "| Key | Type / allowed values | Default | Paper profile | Description |\n|---|---|---|---|---|\n"
)


# Schema


def inline_refs(node, root: Mapping):
    """`node` with every local `$ref` replaced by its target; keys beside the `$ref` (a description)
    win, so a property can say more than the definition it uses."""
    if isinstance(node, list):
        return [inline_refs(item, root) for item in node]
    if not isinstance(node, Mapping):
        return node
    if "$ref" in node:
        target = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        return inline_refs({**target, **siblings}, root)
    return {key: inline_refs(value, root) for key, value in node.items()}


def child_schemas(schema: Mapping, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Mapping]]:
    """The keys one level below `path`: named properties, then a placeholder for a map's keys."""
    for name, child in schema.get("properties", {}).items():
        yield (*path, name), child
    if isinstance(schema.get("additionalProperties"), Mapping):
        placeholder = MAP_KEY_PLACEHOLDERS.get(".".join(path), ANY_MAP_KEY)
        yield (*path, placeholder), schema["additionalProperties"]


def key_schemas(schema: Mapping, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Mapping]]:
    """Every key below `path`, depth first in schema order, each before the keys it holds."""
    for child_path, child in child_schemas(schema, path):
        yield child_path, child
        yield from key_schemas(child, child_path)


def has_keys_below(schema: Mapping) -> bool:
    return bool(schema.get("properties")) or isinstance(schema.get("additionalProperties"), Mapping)


def is_placeholder(part: str) -> bool:
    return part.startswith("<") and part.endswith(">")


# Type / allowed values


def enum_text(values: list) -> str:
    """`a`, `b` or `c`."""
    quoted = [f"`{value_text(value)}`" for value in values]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def bounds_text(schema: Mapping) -> str:
    """Numeric bounds as an interval when both ends are set (` in (0, 1]`), else as one inequality."""
    low = ("[", schema["minimum"]) if "minimum" in schema else ("(", schema.get("exclusiveMinimum"))
    high = ("]", schema["maximum"]) if "maximum" in schema else (")", schema.get("exclusiveMaximum"))
    if low[1] is not None and high[1] is not None:
        return f" in {low[0]}{value_text(low[1])}, {value_text(high[1])}{high[0]}"
    if low[1] is not None:
        return f" {'≥' if low[0] == '[' else '>'} {value_text(low[1])}"
    if high[1] is not None:
        return f" {'≤' if high[0] == ']' else '<'} {value_text(high[1])}"
    return ""


def array_text(schema: Mapping) -> str:
    """A list by what each item is: a fixed tuple (`prefixItems`), one of an enum, or a type."""
    items = schema.get("items", {})
    if "prefixItems" in items:
        return "list of [" + ", ".join(type_text(item) for item in items["prefixItems"]) + "]"
    if "enum" in items:
        return "list, each " + enum_text(items["enum"])
    return "list of " + type_text(items) if items else "list"


def type_text(schema: Mapping) -> str:
    """What a key may hold, from its type, enum, constant, alternatives and bounds: `integer ≥ 1 or null`."""
    if "enum" in schema:
        return enum_text(schema["enum"])
    if "const" in schema:
        return enum_text([schema["const"]])
    if "oneOf" in schema:
        return " or ".join(type_text(option) for option in schema["oneOf"])
    types = schema.get("type", [])
    types = [types] if isinstance(types, str) else types
    parts = []
    for name in types:
        if name == "array":
            parts.append(array_text(schema))
        elif name in ("integer", "number"):
            parts.append(name + bounds_text(schema))
        else:
            parts.append(name)
    return " or ".join(parts) or "any"


# Values


def float_text(value: float) -> str:
    """Python's float repr with the exponent as YAML users write it: 5e-5, not 5e-05."""
    return re.sub(r"e([+-])0*(\d)", lambda m: "e" + m.group(1).replace("+", "") + m.group(2), repr(value))


def value_text(value) -> str:
    """A config value in compact YAML flow style."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return float_text(value)
    if isinstance(value, list):
        return "[" + ", ".join(value_text(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{key}: {value_text(item)}" for key, item in value.items()) + "}"
    return str(value)


def code_span(text: str) -> str:
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}"


def values_at(config, path: tuple[str, ...], label: tuple[str, ...] = ()) -> dict[tuple[str, ...], object]:
    """The values at `path`, keyed by the map keys that stood for its placeholders (() when none)."""
    if not path:
        return {label: config}
    if not isinstance(config, Mapping):
        return {}
    head, rest = path[0], path[1:]
    if is_placeholder(head):
        found = {}
        for key, child in config.items():
            found.update(values_at(child, rest, (*label, str(key))))
        return found
    return values_at(config[head], rest, label) if head in config else {}


def overlay(base, top):
    """`top` merged onto `base` key by key, as Snakemake applies a `--configfile`."""
    if not (isinstance(base, Mapping) and isinstance(top, Mapping)):
        return top
    merged = dict(base)
    for key, value in top.items():
        merged[key] = overlay(base[key], value) if key in base else value
    return merged


def values_cell(values: dict[tuple[str, ...], object]) -> str:
    """The value, or under a placeholder one per map key: `tab: ...; mimic: ...`."""
    if list(values) == [()]:
        return code_span(value_text(values[()]))
    return "; ".join(f"{'.'.join(label)}: {code_span(value_text(value))}" for label, value in values.items())


def default_cell(defaults: Mapping, path: tuple[str, ...], schema: Mapping) -> str:
    """The default's value; the schema's `default` when config.yaml leaves the key out."""
    values = values_at(defaults, path)
    if values:
        return values_cell(values)
    if "default" in schema and not any(is_placeholder(part) for part in path):
        return code_span(value_text(schema["default"]))
    return ABSENT


def paper_cell(defaults: Mapping, paper: Mapping, path: tuple[str, ...]) -> str:
    """The paper profile's value where it differs from the default's; blank where they agree."""
    default_values = values_at(defaults, path)
    paper_values = values_at(overlay(defaults, paper), path)
    differing = {
        label: value for label, value in paper_values.items() if default_values.get(label, MISSING) != value
    }
    return values_cell(differing) if differing else ""


# Markdown


def cell_text(text: str) -> str:
    """One table cell: a single line, with `|` escaped so it does not split the row."""
    return " ".join(text.split()).replace("|", "\\|")


def key_row(path: tuple[str, ...], schema: Mapping, defaults: Mapping, paper: Mapping) -> str:
    # A key that holds keys has its values in the rows below it.
    holds_keys = has_keys_below(schema)
    cells = [
        code_span(".".join(path)),
        type_text(schema),
        "" if holds_keys else default_cell(defaults, path, schema),
        "" if holds_keys else paper_cell(defaults, paper, path),
        schema.get("description", ""),
    ]
    return "| " + " | ".join(cell_text(cell) for cell in cells) + " |\n"


def key_table(rows: list[tuple[tuple[str, ...], Mapping]], defaults: Mapping, paper: Mapping) -> str:
    return TABLE_HEADER + "".join(key_row(path, schema, defaults, paper) for path, schema in rows)


def sections(schema: Mapping, defaults: Mapping, paper: Mapping) -> str:
    """The top-level keys that hold no keys in one table, then one section per block."""
    schema = inline_refs(schema, schema)
    top_level = list(child_schemas(schema, ()))
    plain = [(path, child) for path, child in top_level if not has_keys_below(child)]
    blocks = [(path, child) for path, child in top_level if has_keys_below(child)]
    parts = []
    if plain:
        parts.append("## Top-level keys\n\n" + key_table(plain, defaults, paper))
    for path, block in blocks:
        heading = f"## `{'.'.join(path)}`\n\n"
        description = " ".join(block.get("description", "").split())
        intro = f"{description}\n\n" if description else ""
        parts.append(heading + intro + key_table(list(key_schemas(block, path)), defaults, paper))
    return "\n".join(parts)


def render(schema: Mapping, defaults: Mapping, paper: Mapping) -> str:
    return INTRO + "\n" + sections(schema, defaults, paper)


def load_yaml(path: Path):
    with open(path, encoding="utf-8") as stream:
        return yaml.safe_load(stream) or {}


def rendered_readme() -> str:
    return render(load_yaml(SCHEMA), load_yaml(DEFAULT_CONFIG), load_yaml(PAPER_CONFIG))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Render config/README.md from the config schema.")
    parser.add_argument("--check", action="store_true", help="exit 1 if config/README.md is not current")
    args = parser.parse_args(argv)
    text = rendered_readme()
    if args.check:
        current = README.read_text(encoding="utf-8") if README.exists() else None
        if current != text:
            print("config/README.md is not current: run python tools/config_docs.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
