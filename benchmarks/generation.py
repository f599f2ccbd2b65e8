"""Batched against one-prompt-at-a-time generation: tokens/s and peak memory.

Runs each mode in its own process on the same ICL prompts (demo TAB corpus,
known setting, direct identifiers) with the same model and sampling settings,
a finished document's slot going to the next prompt:

    .venv/bin/python benchmarks/generation.py --prompts 32 --batch-size 16 --max-new-tokens 400

--group-size sets `generation.group_size` (default: all prompts in one group); since slots take the next
prompt across groups it changes nothing but the shards' unit, which a run with groups smaller than the
batch shows.

With --with-generate, transformers' own `generate` (nucleus sampling, left-padded batches of
--batch-size, and one prompt at a time) runs on the same prompts as the baseline of the slot decoder.

The model is the converted embedded model (`results/models/base/smollm2-135m`,
built by `snakemake results/models/base/smollm2-135m`) unless --model is given. On a GPU, with the
paper's architecture in random weights (nothing to download; speed does not depend on the values):

    .venv/bin/python benchmarks/generation.py --device cuda --model-config princeton-nlp/Sheared-LLaMA-1.3B \
        --prompts 1000 --batch-size 64 --max-new-tokens 400
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from common import (
    add_model_arguments,
    demo_tab,
    device_record,
    load_benchmark_model,
    model_arguments,
    peak_rss_mb,
    run_isolated,
    write_report,
)

REPO = Path(__file__).resolve().parents[1]


def build_requests(count: int, seed: int):
    from plainsight.codes.fictional import FictionalPools, pool_drawer
    from plainsight.generation.runner import Request
    from plainsight.methods.in_context import plan
    from plainsight.methods.prompts import render

    codes, texts = demo_tab()
    pools = FictionalPools.from_yaml(REPO / "resources/fictional_pools.yaml")
    planned = plan("icl", codes, texts, pool_drawer(pools), seed, generations_per_segment=(count + 1) // 2)[
        :count
    ]
    return [Request(render(list(g.examples), g.target_code)) for g in planned]


def slot_decoder_run(model, tokenizer, requests, args) -> tuple[int, int]:
    """(prompt tokens, new tokens) of the project's generator: continuous batching in slots."""
    from plainsight.generation.runner import Generator, SamplingSettings

    settings = SamplingSettings(
        args.max_new_tokens, 0.7, 0.9, args.batch_size, group_size=args.group_size or args.prompts
    )
    results = Generator(model, tokenizer, settings).run(requests, args.seed, desc=f"batch {args.batch_size}")
    return sum(r.prompt_tokens for r in results), sum(r.new_tokens for r in results)


def generate_run(model, tokenizer, requests, args) -> tuple[int, int]:
    """The same with transformers' `generate`: left-padded batches, stopped at EOS or the token limit."""
    import torch
    from tqdm import tqdm

    torch.manual_seed(args.seed)
    tokenizer.padding_side = "left"
    prompt_tokens = new_tokens = 0
    for start in tqdm(range(0, len(requests), args.batch_size), desc=f"generate {args.batch_size}"):
        batch = tokenizer(
            [r.prompt for r in requests[start : start + args.batch_size]],
            return_tensors="pt",
            padding=True,
            add_special_tokens=False,
        )
        with torch.no_grad():
            output = model.generate(
                **batch,
                do_sample=True,
                temperature=0.7,
                top_p=0.9,
                max_new_tokens=args.max_new_tokens,
                pad_token_id=tokenizer.pad_token_id,
            )
        generated = output[:, batch.input_ids.shape[1] :]
        prompt_tokens += int(batch.attention_mask.sum())
        new_tokens += int((generated != tokenizer.pad_token_id).sum())
    return prompt_tokens, new_tokens


def run_mode(args) -> dict:
    import torch

    torch.set_num_threads(args.threads)
    model, tokenizer = load_benchmark_model(args)
    requests = build_requests(args.prompts, args.seed)
    decode = generate_run if args.decoder == "generate" else slot_decoder_run
    started, cpu_started = time.perf_counter(), time.process_time()
    prompt_tokens, new_tokens = decode(model, tokenizer, requests, args)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    return {
        "decoder": args.decoder,
        "batch_size": args.batch_size,
        "group_size": args.group_size or len(requests),
        "prompts": len(requests),
        "mean_prompt_tokens": prompt_tokens / len(requests),
        "new_tokens": new_tokens,
        "seconds": round(elapsed, 2),
        "tokens_per_s": round(new_tokens / elapsed, 2),
        # CPU seconds of the process: on a machine shared with other jobs, the steadier measure
        "cpu_seconds": round(cpu, 2),
        "tokens_per_cpu_s": round(new_tokens / cpu, 2),
        "peak_rss_mb": peak_rss_mb(),
        **device_record(model),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_model_arguments(parser)
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument(
        "--group-size", type=int, default=None, help="generation.group_size (default: --prompts)"
    )
    parser.add_argument("--max-new-tokens", type=int, default=400)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--with-generate", action="store_true", help="also time transformers' generate")
    parser.add_argument("--decoder", choices=["slots", "generate"], default="slots", help=argparse.SUPPRESS)
    parser.add_argument("--single-mode", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=REPO / "results/benchmarks/generation.json")
    args = parser.parse_args()
    if args.single_mode:
        print(json.dumps(run_mode(args)))
        return
    decoders = ("slots", "generate") if args.with_generate else ("slots",)
    rows = run_isolated(
        __file__,
        [
            [
                "--single-mode",
                "--decoder",
                decoder,
                *model_arguments(args),
                "--prompts",
                str(args.prompts),
                "--batch-size",
                str(batch_size),
                "--max-new-tokens",
                str(args.max_new_tokens),
                "--threads",
                str(args.threads),
                "--seed",
                str(args.seed),
                "--group-size",
                str(args.group_size or args.prompts),
            ]
            for decoder in decoders
            for batch_size in (1, args.batch_size)
        ],
    )
    speedup = rows[1]["tokens_per_s"] / rows[0]["tokens_per_s"]
    report = {"runs": rows, "batched_speedup": round(speedup, 2)}
    print(f"batched ({args.batch_size}) vs one at a time: {speedup:.2f}x tokens/s")
    if args.with_generate:
        report["slots_vs_generate_batched"] = round(rows[1]["tokens_per_s"] / rows[3]["tokens_per_s"], 2)
        report["slots_vs_generate_one_at_a_time"] = round(
            rows[0]["tokens_per_s"] / rows[2]["tokens_per_s"], 2
        )
        print(
            f"slots vs generate: {report['slots_vs_generate_batched']:.2f}x batched, "
            f"{report['slots_vs_generate_one_at_a_time']:.2f}x one at a time"
        )
    write_report(report, args.out)


if __name__ == "__main__":
    main()
