"""The surrogate options compared: the paper's Fig. 2 pools against format-preserving surrogates.

For each corpus and each `codes.surrogates` option the workflow itself writes the fictional codes
and the ICL and ICL-PE corpora of the known setting (direct identifiers) with the embedded model,
in a scratch folder per option (`snakemake --directory`, the repository's config, resources and
converted model linked in). This script then tabulates, per corpus, option and method:

- the leak columns of `privacy_metrics` (PIPP, ELP, partial and near leaks) and the document rate;
- control-code adherence: the share of a generation's fictional values in its text, exact and near;
- of the target codes: the share of fictional values in the shape (digits, separators, capitalised
  words) of a value of their type in the prompt's context codes, and the values that hold or are a
  near variant of a real value of the corpus (`RealCodeValues.looks_real`, the drawing's own test),
  which must be none;

and writes two generations of each option from the same segment side by side, to read.

Corpora: `tab-demo` (the shipped demo), `casenotes` (config/examples/generic.yaml's case notes),
and `tab-file` with `--tab-file`: a TAB JSON of your own, split into 5 training, 1 dev and 1 test
document per 7 (the seven-document sample of the real corpus, for instance).

    .venv/bin/python benchmarks/surrogates.py --corpora tab-demo casenotes \\
        --tab-file ../shared/data/tab/echr_dev_sample.json

Writes results/benchmarks/surrogates/{surrogates.json, surrogates.md, examples.md}.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

from common import REPO

OUT = REPO / "results/benchmarks/surrogates"
OPTIONS = ("paper", "format_preserving")
METHODS = ("icl", "icl_pe")
LINKED = ("config", "resources", "workflow")


def corpus_config(corpus: str, tab_folder: Path | None) -> tuple[str, dict]:
    """(dataset name, the config overrides that make it the only dataset of the run)."""
    if corpus == "tab-demo":
        return "tab", {}
    if corpus == "casenotes":
        example = yaml.safe_load((REPO / "config/examples/generic.yaml").read_text(encoding="utf-8"))
        return "casenotes", {"datasets": example["datasets"]}
    tab = yaml.safe_load((REPO / "config/config.yaml").read_text(encoding="utf-8"))["datasets"]["tab"]
    return "tabfile", {"datasets": {"tabfile": {**tab, "source": "path", "path": str(tab_folder)}}}


def split_tab_file(path: Path, folder: Path) -> Path:
    """The file's documents as echr_{train,dev,test}.json: per 7, 5 training, 1 dev and 1 test."""
    documents = json.loads(path.read_text(encoding="utf-8"))
    folder.mkdir(parents=True, exist_ok=True)
    splits = {"train": [], "dev": [], "test": []}
    for number, document in enumerate(documents):
        split = "train" if number % 7 < 5 else ("dev" if number % 7 == 5 else "test")
        splits[split].append({**document, "dataset_type": split})
    for split, chosen in splits.items():
        (folder / f"echr_{split}.json").write_text(json.dumps(chosen), encoding="utf-8")
    return folder


def run_workflow(workdir: Path, dataset: str, overrides: dict, option: str, seed: int, cores: int) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    for name in LINKED:
        if not (workdir / name).exists():
            (workdir / name).symlink_to(REPO / name)
    models = workdir / "results/models"
    if not models.exists() and (REPO / "results/models").exists():
        models.parent.mkdir(parents=True, exist_ok=True)
        models.symlink_to(REPO / "results/models")
    config = {
        **overrides,
        "codes": {**yaml.safe_load((REPO / "config/config.yaml").read_text())["codes"], "surrogates": option},
    }
    (workdir / "overrides.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    targets = [
        f"results/{dataset}/known/direct/metrics/{method}/seed{seed}_summary.parquet" for method in METHODS
    ]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--snakefile",
            str(REPO / "workflow/Snakefile"),
            "--directory",
            str(workdir),
            "--configfile",
            str(REPO / "config/config.yaml"),
            str(workdir / "overrides.yaml"),
            # the linked model folder is current: only missing outputs and changed inputs rerun
            "--rerun-triggers",
            "mtime",
            "--cores",
            str(cores),
            *targets,
        ],
        check=True,
    )


def shape(value: str) -> str:
    """A value's shape: every digit a 9, a capitalised word Aa, a lower-case word a, an upper-case run A."""
    value = re.sub(r"\d", "9", value)
    value = re.sub(r"[A-Z][a-z]+", "Aa", value)
    return re.sub(r"[A-Z]+", "A", re.sub(r"(?<![A-Za-z])[a-z]+", "a", value))


def code_measures(run: Path, dataset: str, method: str, seed: int) -> dict:
    """Over every fictional value of a corpus's target codes: the share in the shape of a value of its
    type in the prompt's context codes, and the values that hold or resemble a real value."""
    import pandas as pd

    from plainsight.codes.control_code import records_to_entities
    from plainsight.codes.fictional import corpus_real_values

    base = run / "results" / dataset
    codes = pd.read_parquet(base / "known/direct/codes.parquet")
    corpus = pd.read_parquet(base / f"known/direct/synthetic/{method}/seed{seed}.parquet")
    real = corpus_real_values(pd.read_parquet(base / "spans.parquet"), codes)
    entities_of = {
        (row.doc_id, int(row.segment)): records_to_entities(row.entities) for row in codes.itertuples()
    }
    kept, values = 0, []
    for row in corpus.itertuples():
        contexts = [
            pair
            for key in zip(row.context_doc_ids, row.context_segments)
            for pair in entities_of[(str(key[0]), int(key[1]))]
        ]
        for entity_type, value in records_to_entities(row.fictional_entities):
            values.append(value)
            kept += shape(value) in {shape(v) for kind, v in contexts if kind == entity_type}
    return {
        "fictional_values": len(values),
        "shape_kept": 100 * kept / max(1, len(values)),
        "real_or_near_real": sum(real.looks_real(value) for value in values),
    }


def method_measures(run: Path, dataset: str, method: str, seed: int) -> dict:
    import pandas as pd

    metrics = run / "results" / dataset / f"known/direct/metrics/{method}"
    summary = pd.read_parquet(metrics / f"seed{seed}_summary.parquet").set_index("segment").loc[-1]
    generations = pd.read_parquet(metrics / f"seed{seed}.parquet")
    return {
        "generations": int(summary["n_generations"]),
        "documents": float(summary["documents"]),
        **{key: float(summary[key]) for key in ("pipp", "elp", "partial_leak", "near_leak")},
        "adherence_exact": 100 * float(generations["adherence_exact"].mean()),
        "adherence_near": 100 * float(generations["adherence_near"].mean()),
    }


def examples(runs: dict[str, Path], dataset: str, method: str, seed: int, count: int = 2) -> list[str]:
    """The first `count` generations of each option, with their fictional codes, side by side."""
    import pandas as pd

    corpora = {
        option: pd.read_parquet(
            run / "results" / dataset / f"known/direct/synthetic/{method}/seed{seed}.parquet"
        )
        for option, run in runs.items()
    }
    lines = []
    for number in range(count):
        for option, corpus in corpora.items():
            if number < len(corpus):
                row = corpus.iloc[number]
                lines += [
                    f"#### {dataset}, {method}, generation {number + 1}, `{option}`",
                    "",
                    "Fictional code:",
                    "",
                    "```",
                    str(row["fictional_code"]),
                    "```",
                    "",
                    "```",
                    str(row["text"]).strip(),
                    "```",
                    "",
                ]
    return lines


def markdown(rows: list[dict]) -> str:
    header = [
        "corpus",
        "surrogates",
        "method",
        "generations",
        "documents (%)",
        "PIPP (%)",
        "ELP (%)",
        "partial (%)",
        "near (%)",
        "adherence exact (%)",
        "adherence near (%)",
        "shape kept (%)",
        "real or near-real values",
    ]
    keys = [
        "corpus",
        "surrogates",
        "method",
        "generations",
        "documents",
        "pipp",
        "elp",
        "partial_leak",
        "near_leak",
        "adherence_exact",
        "adherence_near",
        "shape_kept",
        "real_or_near_real",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [f"{row[k]:.1f}" if isinstance(row[k], float) else str(row[k]) for k in keys]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--corpora",
        nargs="+",
        default=["tab-demo", "casenotes"],
        choices=["tab-demo", "casenotes", "tab-file"],
    )
    parser.add_argument("--tab-file", type=Path, help="a TAB JSON file, for the tab-file corpus")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--workdir", type=Path, default=OUT / "runs")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if "tab-file" in args.corpora and args.tab_file is None:
        parser.error("the tab-file corpus needs --tab-file")
    rows, example_lines = [], ["# Surrogate options: example generations", ""]
    for corpus in args.corpora:
        tab_folder = (
            split_tab_file(args.tab_file, args.workdir / "tab_file") if corpus == "tab-file" else None
        )
        dataset, overrides = corpus_config(corpus, tab_folder)
        runs = {option: args.workdir / f"{corpus}_{option}" for option in OPTIONS}
        for option, run in runs.items():
            run_workflow(run, dataset, overrides, option, args.seed, args.cores)
            rows += [
                {
                    "corpus": corpus,
                    "surrogates": option,
                    "method": method,
                    **method_measures(run, dataset, method, args.seed),
                    **code_measures(run, dataset, method, args.seed),
                }
                for method in METHODS
            ]
        example_lines += examples(runs, dataset, "icl_pe", args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "surrogates.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    (args.out / "surrogates.md").write_text(markdown(rows), encoding="utf-8")
    (args.out / "examples.md").write_text("\n".join(example_lines), encoding="utf-8")
    print(markdown(rows))


if __name__ == "__main__":
    main()
