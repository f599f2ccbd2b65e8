"""Prefix training of the trained methods, and ft_mask against a naive implementation: tokens/s,
steps/s and peak memory.

Both train the same prefix with the same privacy-masked objective on the same
demo TAB examples (known setting, direct identifiers), each in its own process:

- `project`: `plainsight.training.loop.fit`: batches of similar length padded to
  their longest example, the base distribution from the same weights with the
  prefix switched off;
- `naive`: every sequence padded to a fixed length (the paper profile's 2048
  tokens) and the base distribution from a second loaded copy of the model.

    .venv/bin/python benchmarks/training.py --examples 8 --batch-size 4

--method picks the trained method of the project mode, as `train_adapter` trains it: `fit` with the
LM loss (ft), the masked objective (ft_mask, the default) or DP-SGD's per-unit clipping and noise (dpsgd,
at the default privacy settings and units of one document); the naive mode runs only beside ft_mask.
Throughput counts real (unpadded) tokens; a step is one optimizer step (DP-SGD's batches are Poisson
samples of about --batch-size documents). The model is the converted embedded model
(`results/models/base/smollm2-135m`) unless --model is given; --device, --dtype and --model-config
(an architecture of resources/model_shapes.yaml in random weights) measure it where the paper runs.
--physical-batch-size passes each batch in micro-batches of at most that many sequences, as
`prefix_tuning.physical_batch_size` does (docs/performance.md: peak memory with and without):

    .venv/bin/python benchmarks/training.py --device cuda --model-config princeton-nlp/Sheared-LLaMA-1.3B \
        --examples 128 --epochs 3 --batch-size 8 --max-length 2048 --method dpsgd
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
from plainsight.methods import registry

REPO = Path(__file__).resolve().parents[1]


def default_prefix_settings() -> dict:
    """The embedded default's prefix settings (virtual tokens, init text), so both modes train that prefix."""
    import yaml

    return yaml.safe_load((REPO / "config/config.yaml").read_text(encoding="utf-8"))["prefix_tuning"]


def build_examples(tokenizer, count: int, max_length: int):
    from plainsight.codes.control_code import records_to_entities
    from plainsight.training.examples import build_example

    codes, texts = demo_tab()
    train = codes[codes["split"] == "train"].sort_values(["doc_id", "segment"]).head(count)
    return [
        build_example(
            (r.doc_id, r.segment),
            r.code,
            texts[(r.doc_id, r.segment)],
            [value for _, value in records_to_entities(r.entities)],
            tokenizer,
            max_length,
        )
        for r in train.itertuples(index=False)
    ]


def naive_train(
    model, base_copy, examples, batch_size: int, width: int, learning_rate: float, pad_token_id: int
):
    import torch

    from plainsight.training.examples import collate
    from plainsight.training.objectives import Lambdas, masked_objective

    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=learning_rate)
    model.train()
    for start in range(0, len(examples), batch_size):
        batch = collate(examples[start : start + batch_size], pad_token_id, width=width)
        inputs = {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}
        logits = model(**inputs).logits
        with torch.no_grad():
            base_logits = base_copy(**inputs).logits
        masked_objective(logits, base_logits, batch["labels"], batch["private"], Lambdas())["loss"].backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


def project_train(model, tokenizer, examples, args) -> tuple[float, list[dict]]:
    """(start time, step history) of `train_adapter`'s training of --method's prefix (seed 1); the clock
    starts once the prefix is built."""
    from plainsight.training.dp import DPTrainingSettings, dp_adapter_model, train_dp
    from plainsight.training.loop import Backprop, TrainingSettings, fit
    from plainsight.training.objectives import lm_loss
    from plainsight.training.prefix import prefix_model

    spec, prefix = registry.method(args.method), default_prefix_settings()
    if spec.differentially_private:
        adapter = dp_adapter_model(model, prefix["num_virtual_tokens"], tokenizer, prefix["init_text"])
        started = time.perf_counter()
        report = train_dp(
            adapter,
            examples,
            tokenizer.pad_token_id,
            DPTrainingSettings(
                args.batch_size, args.epochs, args.learning_rate, physical_batch_size=args.physical_batch_size
            ),
            seed=1,
            loss_fn=lm_loss,
        )
        return started, report["history"]
    adapter = prefix_model(model, tokenizer, prefix["num_virtual_tokens"], prefix["init_text"])
    settings = TrainingSettings(
        args.epochs, args.learning_rate, args.batch_size, args.max_length, masked=spec.masked_objective
    )
    started = time.perf_counter()
    strategy = Backprop(args.physical_batch_size)
    return started, fit(adapter, examples, settings, 1, tokenizer.pad_token_id, strategy)


def naive_run(model, tokenizer, examples, args) -> tuple[float, list[dict]]:
    """(start time, steps with their real tokens) of the naive mode; the second model copy loads
    before the clock starts."""
    from plainsight.training.prefix import prefix_model

    prefix = default_prefix_settings()
    adapter = prefix_model(model, tokenizer, prefix["num_virtual_tokens"], prefix["init_text"])
    base_copy, _ = load_benchmark_model(args)
    started = time.perf_counter()
    for _ in range(args.epochs):
        naive_train(
            adapter,
            base_copy,
            examples,
            args.batch_size,
            args.naive_length,
            args.learning_rate,
            tokenizer.pad_token_id,
        )
    batches = range(0, len(examples), args.batch_size)
    steps = [{"tokens": sum(len(e.input_ids) for e in examples[b : b + args.batch_size])} for b in batches]
    return started, steps * args.epochs


def run_mode(args) -> dict:
    import torch

    torch.set_num_threads(args.threads)
    model, tokenizer = load_benchmark_model(args)
    placement = device_record(model)
    examples = build_examples(tokenizer, args.examples, args.max_length)
    train = project_train if args.mode == "project" else naive_run
    started, history = train(model, tokenizer, examples, args)
    elapsed = time.perf_counter() - started
    tokens = sum(step.get("tokens", 0) for step in history)
    return {
        "mode": args.mode,
        "method": args.method if args.mode == "project" else "ft_mask",
        "examples": len(examples),
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "physical_batch_size": args.physical_batch_size if args.mode == "project" else None,
        "largest_batch_sequences": max(
            (step.get("sequences", args.batch_size) for step in history), default=0
        ),
        "real_tokens": tokens,
        "padded_to": args.naive_length if args.mode == "naive" else "longest in batch",
        "steps": len(history),
        "seconds": round(elapsed, 2),
        "tokens_per_s": round(tokens / elapsed, 2),
        "steps_per_s": round(len(history) / elapsed, 3),
        "peak_rss_mb": peak_rss_mb(),
        **placement,
        **{key: value for key, value in device_record(model).items() if key.startswith("peak")},
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_model_arguments(parser)
    parser.add_argument("--examples", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--max-length", type=int, default=256, help="truncation of each example (both modes)")
    parser.add_argument("--naive-length", type=int, default=2048, help="the naive mode's fixed padded length")
    parser.add_argument("--learning-rate", type=float, default=2e-3)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument(
        "--physical-batch-size", type=int, default=None, help="sequences per forward and backward pass"
    )
    parser.add_argument(
        "--method", choices=registry.names("trained"), default="ft_mask", help="the project mode's method"
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--mode", choices=["project", "naive"], help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=REPO / "results/benchmarks/training.json")
    args = parser.parse_args()
    if args.mode:
        print(json.dumps(run_mode(args)))
        return
    with_naive = registry.method(args.method).masked_objective
    rows = run_isolated(
        __file__,
        [
            [
                "--mode",
                mode,
                *model_arguments(args),
                "--examples",
                str(args.examples),
                "--batch-size",
                str(args.batch_size),
                "--max-length",
                str(args.max_length),
                "--naive-length",
                str(args.naive_length),
                "--learning-rate",
                str(args.learning_rate),
                "--epochs",
                str(args.epochs),
                *(
                    ["--physical-batch-size", str(args.physical_batch_size)]
                    if args.physical_batch_size
                    else []
                ),
                "--method",
                args.method,
                "--threads",
                str(args.threads),
            ]
            for mode in ("project", "naive")[: 2 if with_naive else 1]
        ],
    )
    if not with_naive:
        write_report({"runs": rows}, args.out)
        return
    speedup = rows[0]["tokens_per_s"] / rows[1]["tokens_per_s"]
    write_report({"runs": rows, "speedup": round(speedup, 2)}, args.out)
    print(f"project vs naive ft_mask training: {speedup:.2f}x tokens/s")


if __name__ == "__main__":
    main()
