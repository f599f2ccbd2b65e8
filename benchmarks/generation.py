"""Batched against one-prompt-at-a-time generation: tokens/s and peak memory.

Runs each mode in its own process on the same ICL prompts (demo TAB corpus,
known setting, direct identifiers) with the same model and sampling settings:

    .venv/bin/python benchmarks/generation.py --prompts 8 --batch-size 8 --max-new-tokens 400

The model is the converted embedded model (`results/models/base/smollm2-135m`,
built by `snakemake results/models/base/smollm2-135m`) unless --model is given.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def build_requests(count: int, seed: int):
    from plainsight.codes import codes_table, select_spans
    from plainsight.fictional import FictionalPools
    from plainsight.generation import Request
    from plainsight.icl import plan
    from plainsight.ingest import ingest_dataset
    from plainsight.prompts import render

    dataset = {"format": "tab", "segments": [[1, 6], [6, 12]]}
    paths = [REPO / "resources/demo/tab" / f"echr_{split}.json" for split in ("train", "dev", "test")]
    docs, spans = ingest_dataset(paths, dataset, "error", REPO / "resources/mimic_placeholder_types.yaml")
    codes = codes_table(docs, select_spans(spans, "direct"))
    texts = {(r.doc_id, r.segment): r.text for r in docs.itertuples(index=False)}
    pools = FictionalPools.from_yaml(REPO / "resources/fictional_pools.yaml")
    planned = plan("icl", codes, texts, pools, seed, generations_per_segment=(count + 1) // 2)[:count]
    return [Request(render(list(g.examples), g.target_code)) for g in planned]


def run_mode(args) -> dict:
    import torch

    from plainsight.generation import Generator, SamplingSettings
    from plainsight.models import load_model

    torch.set_num_threads(args.threads)
    model, tokenizer = load_model(args.model)
    requests = build_requests(args.prompts, args.seed)
    settings = SamplingSettings(args.max_new_tokens, 0.7, 0.9, args.batch_size)
    started = time.perf_counter()
    results = Generator(model, tokenizer, settings).run(requests, args.seed, desc=f"batch {args.batch_size}")
    elapsed = time.perf_counter() - started
    new_tokens = sum(r.new_tokens for r in results)
    return {
        "batch_size": args.batch_size,
        "prompts": len(requests),
        "mean_prompt_tokens": sum(r.prompt_tokens for r in results) / len(results),
        "new_tokens": new_tokens,
        "seconds": round(elapsed, 2),
        "tokens_per_s": round(new_tokens / elapsed, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(REPO / "results/models/base/smollm2-135m"))
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=400)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--single-mode", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=REPO / "results/benchmarks/generation.json")
    args = parser.parse_args()
    if args.single_mode:
        print(json.dumps(run_mode(args)))
        return
    rows = []
    for batch_size in (1, args.batch_size):
        command = [sys.executable, __file__, "--single-mode", "--model", args.model, "--prompts", str(args.prompts),
                   "--batch-size", str(batch_size), "--max-new-tokens", str(args.max_new_tokens),
                   "--threads", str(args.threads), "--seed", str(args.seed)]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        rows.append(json.loads(output.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]))
    speedup = rows[1]["tokens_per_s"] / rows[0]["tokens_per_s"]
    report = {"runs": rows, "batched_speedup": round(speedup, 2)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"batched ({args.batch_size}) vs one at a time: {speedup:.2f}x tokens/s")


if __name__ == "__main__":
    main()
