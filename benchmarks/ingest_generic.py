"""Time and peak memory of ingesting a large generic JSONL corpus (the `ingest` rule's work).

Writes a JSONL file of about --megabytes MB of made-up documents (twelve paragraphs, four spans
each) under /tmp, then ingests it into docs/spans Parquet in a fresh process, once per size, and
prints one JSON line per size: input MB, documents, seconds, MB/s and the process's peak RSS. Memory
that stays flat while the file grows is what bounded-memory ingestion means.

    python benchmarks/ingest_generic.py --megabytes 50 400
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FILLER_TEXT = (
    "the client said that the visit went well and that the rent was paid late again this month while "
    "the school asked for a meeting about the child who missed several days"
)
WORDS = FILLER_TEXT.split()
LABEL_MAP = {
    "NAME": {"type": "PERSON", "identifier": "direct"},
    "CITY": {"type": "LOC", "identifier": "quasi"},
}


def document(rng: random.Random, number: int) -> dict:
    paragraphs, spans, position = [], [], 0
    for index in range(12):
        name = f"Person{rng.randrange(10**6)} Surname{rng.randrange(10**6)}"
        filler = " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 60)))
        paragraph = f"{name} met the worker. {filler}."
        if index % 3 == 0:
            spans.append({"start": position, "end": position + len(name), "label": "NAME"})
        paragraphs.append(paragraph)
        position += len(paragraph) + 2
    return {
        "doc_id": f"d{number}",
        "text": "\n\n".join(paragraphs),
        "spans": spans,
        "label": "housing",
        "group": rng.choice(["north", "south"]),
        "unit_id": f"u{number // 3}",
    }


def write_corpus(path: Path, megabytes: float, seed: int = 0) -> int:
    rng, written, count = random.Random(seed), 0, 0
    with open(path, "w", encoding="utf-8") as handle:
        while written < megabytes * 1e6:
            line = json.dumps(document(rng, count)) + "\n"
            handle.write(line)
            written += len(line.encode())
            count += 1
    return count


def ingest_once(corpus: str, out: str) -> None:
    """Child process: ingest and report seconds and peak RSS."""
    from plainsight.data.ingest import write_dataset

    dataset = {"format": "generic", "path": corpus, "segments": [[1, 6], [6, 12]], "label_map": LABEL_MAP}
    start = time.perf_counter()
    write_dataset(
        [corpus],
        dataset,
        "error",
        REPO / "resources/mimic_placeholder_types.yaml",
        Path(out) / "docs.parquet",
        Path(out) / "spans.parquet",
    )
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": round(seconds, 1), "peak_rss_mb": round(peak_mb)}))


def measure(megabytes: float, folder: Path) -> dict:
    corpus = folder / f"corpus_{megabytes:g}mb.jsonl"
    documents = write_corpus(corpus, megabytes)
    run = subprocess.run(
        [sys.executable, __file__, "--child", str(corpus), str(folder)],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(run.stdout.strip().splitlines()[-1])
    size_mb = corpus.stat().st_size / 1e6
    corpus.unlink()
    return {
        "input_mb": round(size_mb),
        "documents": documents,
        **result,
        "mb_per_second": round(size_mb / result["seconds"], 1),
        "docs_parquet_mb": round((folder / "docs.parquet").stat().st_size / 1e6),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, nargs="+", default=[50, 400])
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        ingest_once(*args.child)
        return
    with tempfile.TemporaryDirectory(prefix="ingest_generic_", dir="/tmp") as folder:
        for megabytes in args.megabytes:
            print(json.dumps(measure(megabytes, Path(folder))), flush=True)


if __name__ == "__main__":
    main()
