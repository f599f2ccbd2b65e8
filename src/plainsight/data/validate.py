"""Checks before work: the config against its schema, then every configured dataset's source files read
as the ingest rule reads them, every problem listed at once, one line each (file, record, what is
wrong), nothing written.

    python -m plainsight.data.validate [--configfile FILE ...]

`make validate CONFIG="config/config.yaml my.yaml"` runs it on the config files Snakemake would merge,
later files over earlier ones. It exits 1 when it finds a problem, 0 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator

from plainsight.data.builder import CorpusBuilder
from plainsight.data.ingest import reader
from plainsight.data.problems import ProblemPolicy
from plainsight.data.sources import source_files
from plainsight.errors import InputError
from plainsight.settings import Settings

SCHEMA = Path("workflow/schemas/config.schema.yaml")


def merged(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """`overlay` over `base`, nested mappings merged key by key, as Snakemake merges config files."""
    result = dict(base)
    for key, value in overlay.items():
        if isinstance(value, Mapping) and isinstance(result.get(key), Mapping):
            result[key] = merged(result[key], value)
        else:
            result[key] = value
    return result


def read_config(files: Sequence[str | Path]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for file in files:
        with open(file, encoding="utf-8") as handle:
            config = merged(config, yaml.safe_load(handle) or {})
    return config


def config_problems(config: Mapping[str, Any], schema_path: str | Path = SCHEMA) -> list[str]:
    """Every place where the config breaks its schema, one line each: `config: key.path: what`."""
    with open(schema_path, encoding="utf-8") as handle:
        schema = yaml.safe_load(handle)
    validator = Draft202012Validator(schema)
    return [
        f"config: {'.'.join(map(str, error.absolute_path)) or '(top level)'}: {error.message}"
        for error in sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    ]


def dataset_problems(name: str, dataset: Mapping[str, Any], placeholder_types: str | Path) -> list[str]:
    """Every problem of one dataset's source files, read into memory as the ingest rule reads them: bad
    records, short documents, duplicate ids, a privacy unit in two splits, a missing or empty file."""
    paths = source_files(name, dataset)
    missing = [path for path in paths if not Path(path).is_file()]
    if missing:
        return [f"{path}: the file is missing" for path in missing]
    policy = ProblemPolicy("collect")
    builder = CorpusBuilder(dataset["segments"], policy, dataset.get("paragraph_break", "blank_line"))
    try:
        reader(paths, dataset)(paths, builder, dict(dataset), placeholder_types)
        builder.tables()
    except InputError as error:  # a problem of a whole file: the rest of it cannot be read
        policy.problems.append(error)
    return [str(problem) for problem in policy.problems]


def problems(config: Mapping[str, Any]) -> list[str]:
    """Every problem of a config and its datasets; the datasets are read only when the config is valid.
    A generated dataset has no files of the user's to read: the workflow writes them from its config."""
    found = config_problems(config)
    if found:
        return found
    settings = Settings.from_config(config)
    return [
        f"dataset {name}: {problem}"
        for name, dataset in settings.datasets.items()
        if dataset.source != "generated"
        for problem in dataset_problems(name, dataset.as_written(), settings.codes.mimic_placeholder_types)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configfile", nargs="+", default=["config/config.yaml"])
    args = parser.parse_args(argv)
    found = problems(read_config(args.configfile))
    for line in found:
        print(line)
    print(f"{len(found)} problem(s)" if found else "no problems: the config and every dataset read cleanly")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
