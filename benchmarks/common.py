"""Shared by the benchmarks: the demo TAB corpus, one process per measured mode, the report."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def demo_tab_frames(idset: str = "direct"):
    """(docs, spans, codes) of the demo TAB corpus, as the workflow's ingest and control_codes rules write them."""
    from plainsight.codes.control import codes_table, select_spans
    from plainsight.data.ingest import ingest_dataset

    dataset = {"format": "tab", "segments": [[1, 6], [6, 12]]}
    paths = [REPO / "resources/demo/tab" / f"echr_{split}.json" for split in ("train", "dev", "test")]
    docs, spans = ingest_dataset(paths, dataset, "error", REPO / "resources/mimic_placeholder_types.yaml")
    return docs, spans, codes_table(docs, select_spans(spans, idset))


def demo_tab(idset: str = "direct"):
    """(codes, texts): the control codes of every segment and each segment's text by (doc_id, segment)."""
    from plainsight.data.segments import segment_texts

    docs, _, codes = demo_tab_frames(idset)
    return codes, segment_texts(docs)


def run_isolated(script: str, runs: list[list[str]]) -> list[dict]:
    """Run `script` once per argument list, each in a fresh process (so peak memory is its own);
    each run prints its result as JSON on its last line."""
    rows = []
    for arguments in runs:
        output = subprocess.run([sys.executable, script, *arguments], check=True, capture_output=True,
                                text=True).stdout
        rows.append(json.loads(output.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]))
    return rows


def write_report(report: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
