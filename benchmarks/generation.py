"""Batched against one-prompt-at-a-time generation: tokens/s and peak memory.

Runs each mode in its own process on the same ICL prompts (demo TAB corpus,
known setting, direct identifiers) with the same model and sampling settings,
all prompts in one group (a finished document's slot goes to the next prompt):

    .venv/bin/python benchmarks/generation.py --prompts 32 --batch-size 16 --max-new-tokens 400

The model is the converted embedded model (`results/models/base/smollm2-135m`,
built by `snakemake results/models/base/smollm2-135m`) unless --model is given.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from common import demo_tab, peak_rss_mb, run_isolated, write_report

REPO = Path(__file__).resolve().parents[1]


def build_requests(count: int, seed: int):
    from plainsight.codes.fictional import FictionalPools
    from plainsight.generation.runner import Request
    from plainsight.methods.in_context import plan
    from plainsight.methods.prompts import render

    codes, texts = demo_tab()
    pools = FictionalPools.from_yaml(REPO / "resources/fictional_pools.yaml")
    planned = plan("icl", codes, texts, pools, seed, generations_per_segment=(count + 1) // 2)[:count]
    return [Request(render(list(g.examples), g.target_code)) for g in planned]


def run_mode(args) -> dict:
    import torch

    from plainsight.generation.runner import Generator, SamplingSettings
    from plainsight.models import load_model

    torch.set_num_threads(args.threads)
    model, tokenizer = load_model(args.model)
    requests = build_requests(args.prompts, args.seed)
    settings = SamplingSettings(args.max_new_tokens, 0.7, 0.9, args.batch_size, group_size=args.prompts)
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
        "peak_rss_mb": peak_rss_mb(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(REPO / "results/models/base/smollm2-135m"))
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=400)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--single-mode", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=REPO / "results/benchmarks/generation.json")
    args = parser.parse_args()
    if args.single_mode:
        print(json.dumps(run_mode(args)))
        return
    rows = run_isolated(__file__, [
        ["--single-mode", "--model", args.model, "--prompts", str(args.prompts), "--batch-size", str(batch_size),
         "--max-new-tokens", str(args.max_new_tokens), "--threads", str(args.threads), "--seed", str(args.seed)]
        for batch_size in (1, args.batch_size)])
    speedup = rows[1]["tokens_per_s"] / rows[0]["tokens_per_s"]
    write_report({"runs": rows, "batched_speedup": round(speedup, 2)}, args.out)
    print(f"batched ({args.batch_size}) vs one at a time: {speedup:.2f}x tokens/s")


if __name__ == "__main__":
    main()
