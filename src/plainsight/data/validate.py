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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from jsonschema import Draft202012Validator

from plainsight.data.builder import CorpusBuilder
from plainsight.data.ingest import reader
from plainsight.data.labels import LabelRule, label_check
from plainsight.data.problems import ProblemPolicy
from plainsight.data.sources import source_files
from plainsight.errors import InputError
from plainsight.settings import DownstreamConfig, Settings

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


@dataclass(frozen=True)
class DownstreamLabels:
    """What the downstream task asks of the labels (`utility.downstream`): its rule, and whether a label
    too rare in a split stops the job (`on_rare_label: error`)."""

    rule: LabelRule
    stop_on_rare: bool

    @classmethod
    def from_settings(cls, downstream: DownstreamConfig) -> DownstreamLabels:
        rule = LabelRule(downstream.top_labels, downstream.min_documents)
        return cls(rule, downstream.on_rare_label == "error")


@dataclass(frozen=True)
class Findings:
    """What the checks found: `problems`, which stop a job (`make validate` exits 1 on one), and `notes`,
    what a job will report rather than stop on (a downstream task that cannot be measured)."""

    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def __add__(self, other: Findings) -> Findings:
        return Findings(self.problems + other.problems, self.notes + other.notes)


def label_findings(docs: pd.DataFrame, where: str, labels: DownstreamLabels) -> Findings:
    """The downstream task's needs of the documents' labels: a label too rare in a split is a problem
    where it stops the job (`on_rare_label: error`); where too few labels are left, the bundle and the
    utility table say the task is not measured, a note (with the labels left out, where they are why)."""
    check = label_check(docs, labels.rule)
    rare = tuple(f"{where}: {line}" for line in check.rare)
    if labels.stop_on_rare and rare:
        return Findings(problems=rare)
    if not check.shortfall:
        return Findings()
    return Findings(notes=(*rare, f"{where}: the downstream task will not be measured: {check.shortfall}"))


def dataset_findings(
    name: str, dataset: Mapping[str, Any], placeholder_types: str | Path, labels: DownstreamLabels
) -> Findings:
    """Every problem of one dataset's source files, read into memory as the ingest rule reads them: bad
    records, short documents, duplicate ids, a privacy unit in two splits, a missing or empty file; then,
    on the documents as ingestion splits them, what the downstream task (every utility job and release
    bundle measures it) finds in their labels."""
    paths = source_files(name, dataset)
    missing = [path for path in paths if not Path(path).is_file()]
    if missing:
        return Findings(problems=tuple(f"{path}: the file is missing" for path in missing))
    policy = ProblemPolicy("collect")
    builder = CorpusBuilder(dataset["segments"], policy, dataset.get("paragraph_break", "blank_line"))
    docs = None
    try:
        reader(paths, dataset)(paths, builder, dict(dataset), placeholder_types)
        docs, _ = builder.tables()
    except InputError as error:  # a problem of a whole file: the rest of it cannot be read
        policy.problems.append(error)
    found = Findings(problems=tuple(str(problem) for problem in policy.problems))
    if docs is None or found.problems:  # labels are counted on a corpus that reads cleanly
        return found
    return label_findings(docs, ", ".join(map(str, paths)), labels)


def findings(config: Mapping[str, Any]) -> Findings:
    """Every problem and note of a config and its datasets; the datasets are read only when the config is
    valid. A generated dataset has no files of the user's to read: the workflow writes them from its
    config."""
    found = config_problems(config)
    if found:
        return Findings(problems=tuple(found))
    settings = Settings.from_config(config)
    placeholder_types = settings.codes.mimic_placeholder_types
    labels = DownstreamLabels.from_settings(settings.utility.downstream)
    total = Findings()
    for name, dataset in settings.datasets.items():
        if dataset.source != "generated":
            one = dataset_findings(name, dataset.as_written(), placeholder_types, labels)
            total += Findings(
                tuple(f"dataset {name}: {line}" for line in one.problems),
                tuple(f"dataset {name}: {line}" for line in one.notes),
            )
    return total


def problems(config: Mapping[str, Any]) -> list[str]:
    """Every problem of a config and its datasets (`findings` without the notes)."""
    return list(findings(config).problems)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configfile", nargs="+", default=["config/config.yaml"])
    args = parser.parse_args(argv)
    found = findings(read_config(args.configfile))
    for line in found.problems:
        print(line)
    for line in found.notes:
        print(f"note: {line}")
    if found.problems:
        print(f"{len(found.problems)} problem(s)")
    else:
        print("no problems: the config and every dataset read cleanly")
    return 1 if found.problems else 0


if __name__ == "__main__":
    sys.exit(main())
