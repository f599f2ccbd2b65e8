"""Render the configuration docs: config/README.md, the reference of every configuration key, from the
config schema, and the profile table of docs/configuration.md from the two profiles.

The schema (workflow/schemas/config.schema.yaml) is the one place where keys, their types and their
descriptions are written; the Default and Paper profile columns, and every value of the profile
table, are read from config/config.yaml and config/paper.yaml.

    python tools/config_docs.py          # write config/README.md and the profile table
    python tools/config_docs.py --check  # exit 1 if either is not current
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
CONFIGURATION_DOC = REPO / "docs/configuration.md"

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
snakemake --cores 8 --configfile config/paper.yaml -- results/tables/tab/table1.csv
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


# The profile table of docs/configuration.md


PROFILE_TABLE_BEGIN = (
    "<!-- begin profile table: generated from config/config.yaml and config/paper.yaml by"
    " tools/config_docs.py -->"
)
PROFILE_TABLE_END = "<!-- end profile table -->"
PROFILE_TABLE_HEADER = (
    "| | embedded default (`config/config.yaml`) | paper profile (`config/paper.yaml`) |\n|---|---|---|\n"
)


def count_text(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def source_text(dataset: Mapping) -> str:
    source = dataset["source"]
    if source == "demo":
        return "the shipped demo corpus, offline (`source: demo`)"
    if source == "github":
        return "the official files, downloaded (`source: github`)"
    if source == "generated":
        sizes = " / ".join(str(dataset["documents"][split]) for split in ("train", "dev", "test"))
        return f"a generated fictional corpus of {sizes} documents (`source: generated`)"
    return f"your copy at {code_span(value_text(dataset['path']))} (`source: path`)"


def data_cell(profile: Mapping) -> str:
    return "; ".join(f"`{name}`: {source_text(dataset)}" for name, dataset in profile["datasets"].items())


def segments_cell(profile: Mapping) -> str:
    return "; ".join(
        f"`{name}`: {code_span(value_text(dataset['segments']))}"
        for name, dataset in profile["datasets"].items()
    )


def in_context_cell(profile: Mapping) -> str:
    generation = profile["generation"]
    slots = generation["batch_size"]
    slots_text = (
        "as many batch slots as fit the GPU (`auto`)" if slots == "auto" else count_text(slots, "batch slot")
    )
    regenerations = generation["max_regenerations"]
    regenerations_text = (
        "in one pass" if regenerations == 0 else f"regenerating up to {count_text(regenerations, 'time')}"
    )
    return (
        f"{generation['generations_per_segment']} per paragraph range, method and seed, from "
        f"{count_text(generation['context_documents'], 'context document')}; up to "
        f"{generation['max_new_tokens']} new tokens, prompts up to {generation['max_prompt_tokens']} tokens; "
        f"{slots_text}; `icl_pe` blocks `{generation['blocking']}`, {regenerations_text}"
    )


def prefix_tuning_cell(profile: Mapping) -> str:
    prefix = profile["prefix_tuning"]
    generations = prefix["generations"]
    generations_text = (
        "one generation per fine-tuning sample"
        if generations is None
        else f"{count_text(generations, 'generation')} per method and seed"
    )
    schedule = f"`{prefix['lr_schedule']}`"
    if prefix["warmup_steps"]:
        schedule = f"{count_text(prefix['warmup_steps'], 'warm-up step')}, then {schedule}"
    return (
        f"{count_text(prefix['epochs'], 'epoch')}, lr {value_text(prefix['learning_rate'])} ({schedule}), "
        f"batches of {prefix['batch_size']}, {prefix['max_length']}-token examples; {generations_text}"
    )


def threads_cell(profile: Mapping) -> str:
    return (
        f"generation {profile['generation']['threads']}, training {profile['prefix_tuning']['threads']}, "
        f"utility {profile['utility']['threads']}, audit {profile['audit']['threads']}"
    )


def gpus_cell(profile: Mapping) -> str:
    gpus = profile["resources"]["gpus_per_job"]
    return f"{gpus} (CPU)" if gpus == 0 else str(gpus)


def seeds_cell(profile: Mapping) -> str:
    """The run seeds, then the tables with their own, grouped by seed list."""
    tables_by_seeds: dict[str, list[str]] = {}
    for table, seeds in profile["tables"]["seeds"].items():
        tables_by_seeds.setdefault(value_text(seeds), []).append(f"`{table}`")
    own = "; ".join(f"{', '.join(tables)}: `{seeds}`" for seeds, tables in tables_by_seeds.items())
    return f"`{value_text(profile['seeds'])}`; {own}" if own else f"`{value_text(profile['seeds'])}`"


def utility_cell(profile: Mapping) -> str:
    utility = profile["utility"]
    mauve = utility["mauve"]
    samples = "every test segment" if mauve["samples"] is None else f"{mauve['samples']} test segments"
    downstream = utility["downstream"]
    classifier = f"`{downstream['classifier']}`"
    if downstream["classifier"] == "encoder":
        encoder = downstream["encoder"]
        classifier += f" (`{encoder['model']}`, {encoder['max_length']} tokens)"
    return (
        f"perplexity windows of {utility['perplexity']['max_length']} tokens; MAUVE on {samples} with "
        f"`{mauve['featurizer']}` features of {mauve['max_tokens']} tokens; "
        f"downstream classifier {classifier}"
    )


def model_cell(profile: Mapping) -> str:
    return code_span(profile["model"]["name_or_path"])


def model_large_cell(profile: Mapping) -> str:
    return code_span(profile["model_large"]["name_or_path"])


def device_cell(profile: Mapping) -> str:
    return f"`{profile['model']['device']}`, `{profile['model']['dtype']}`"


PROFILE_ROWS = (
    ("data", data_cell),
    ("paragraph ranges (`segments`)", segments_cell),
    ("`model`", model_cell),
    ("`model_large` (Table 5)", model_large_cell),
    ("in-context generations", in_context_cell),
    ("prefix tuning", prefix_tuning_cell),
    ("torch threads per job", threads_cell),
    ("`resources.gpus_per_job`", gpus_cell),
    ("seeds", seeds_cell),
    ("utility", utility_cell),
    ("`model.device`, `model.dtype`", device_cell),
)


def profile_table(defaults: Mapping, paper: Mapping) -> str:
    """The two profiles side by side, each cell written from the profile's own values."""
    merged = overlay(defaults, paper)
    rows = [[label, cell(defaults), cell(merged)] for label, cell in PROFILE_ROWS]
    return PROFILE_TABLE_HEADER + "".join(
        "| " + " | ".join(cell_text(cell) for cell in row) + " |\n" for row in rows
    )


def with_profile_table(document: str, table: str) -> str:
    """`document` with the text between the profile table's markers replaced by `table`."""
    begin, end = document.find(PROFILE_TABLE_BEGIN), document.find(PROFILE_TABLE_END)
    if begin < 0 or end < begin:
        raise ValueError(f"{CONFIGURATION_DOC} lacks the profile table's markers")
    return document[: begin + len(PROFILE_TABLE_BEGIN)] + "\n" + table + document[end:]


def load_yaml(path: Path):
    with open(path, encoding="utf-8") as stream:
        return yaml.safe_load(stream) or {}


def rendered_readme() -> str:
    return render(load_yaml(SCHEMA), load_yaml(DEFAULT_CONFIG), load_yaml(PAPER_CONFIG))


def rendered_configuration_doc() -> str:
    table = profile_table(load_yaml(DEFAULT_CONFIG), load_yaml(PAPER_CONFIG))
    return with_profile_table(CONFIGURATION_DOC.read_text(encoding="utf-8"), table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Render config/README.md and docs/configuration.md's profile table."
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if either is not current")
    args = parser.parse_args(argv)
    outputs = {README: rendered_readme(), CONFIGURATION_DOC: rendered_configuration_doc()}
    if args.check:
        stale = [
            path
            for path, text in outputs.items()
            if not path.exists() or path.read_text(encoding="utf-8") != text
        ]
        for path in stale:
            print(
                f"{path.relative_to(REPO)} is not current: run python tools/config_docs.py", file=sys.stderr
            )
        return 1 if stale else 0
    for path, text in outputs.items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
