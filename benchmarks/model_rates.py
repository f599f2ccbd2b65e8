"""Throughput of models of different sizes doing the same kind of pass: does a rate measured on one model
carry over to another in the ratio of their parameters, as the cost plan assumes for a job whose model is
not `model` (`plainsight.scheduling.tokens.JobTokens.size_ratio`)?

Each architecture of resources/model_shapes.yaml named by --models is built with random weights (its own
vocabulary; the cost of a pass does not depend on the weights' values) and passes --batches batches of
--sequences x --tokens random token ids, after one warm-up batch, in its own process:

- `forward`: inference only, as the sentence embedder, MAUVE's featurizer and the membership scores run;
- `training`: forward, backward and an AdamW step over every weight, as the downstream encoder and
  perplexity's fine-tuning train.

The report gives tokens/s, and per kind of pass the measured rate over the rate the reference model's
(--reference) predicts through the parameter ratio: 1 where the assumption holds, over 1 where the plan's
scaled rate is conservative (the model is faster than predicted), under 1 where it is optimistic.

    .venv/bin/python benchmarks/model_rates.py                       # the CPU, 2 threads, float32
    .venv/bin/python benchmarks/model_rates.py --device cuda --dtype bfloat16 --sequences 16 --tokens 512 \\
        --models princeton-nlp/Sheared-LLaMA-1.3B minilm FacebookAI/roberta-base gpt2-large \\
        --reference princeton-nlp/Sheared-LLaMA-1.3B
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import yaml

from common import REPO, peak_rss_mb, run_isolated, write_report

SHAPES = REPO / "resources/model_shapes.yaml"
ENCODER_TYPES = ("bert", "roberta")  # no causal LM head: the embedder's and the encoder's trunk


def build(shape: dict, device, dtype):
    """The architecture in random weights: a causal LM (its head is part of every pass), or an encoder's
    trunk."""
    import torch
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

    settings = {key: value for key, value in shape.items() if key != "model_type"}
    config = AutoConfig.for_model(shape["model_type"], **settings)
    factory = AutoModel if shape["model_type"] in ENCODER_TYPES else AutoModelForCausalLM
    with torch.device(device):
        return factory.from_config(config, dtype=dtype), config.vocab_size


def passes(model, batch, kind: str, optimizer) -> None:
    import torch

    if kind == "forward":
        with torch.inference_mode():
            model(input_ids=batch)
        return
    output = model(input_ids=batch)
    hidden = output.logits if hasattr(output, "logits") else output.last_hidden_state
    hidden.float().pow(2).mean().backward()  # a scalar of every output: the backward pass of a loss
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def run_one(args) -> dict:
    import torch

    from plainsight.models import resolve_placement

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    device, dtype = resolve_placement({"device": args.device, "dtype": args.dtype})
    shapes = yaml.safe_load(SHAPES.read_text(encoding="utf-8"))
    model, vocab = build(shapes[args.model], device, dtype)
    model.train(args.kind == "training")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5) if args.kind == "training" else None
    batch = torch.randint(0, vocab, (args.sequences, args.tokens), device=device)
    passes(model, batch, args.kind, optimizer)  # warm-up: allocations, kernels chosen
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    started = time.perf_counter()
    for _ in range(args.batches):
        passes(model, batch, args.kind, optimizer)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    seconds = time.perf_counter() - started
    tokens = args.batches * args.sequences * args.tokens
    return {
        "model": args.model,
        "kind": args.kind,
        "parameters": sum(p.numel() for p in model.parameters()),
        "device": str(device),
        "dtype": str(dtype).removeprefix("torch."),
        "tokens": tokens,
        "seconds": round(seconds, 2),
        "tokens_per_s": round(tokens / seconds, 1),
        "peak_rss_mb": peak_rss_mb(),
    }


def against_prediction(rows: list[dict], reference: str) -> list[dict]:
    """Each row with `measured_over_predicted`: its rate over the reference model's rate for the same kind of
    pass times reference parameters / its parameters."""
    by_kind = {row["kind"]: row for row in rows if row["model"] == reference}
    for row in rows:
        base = by_kind.get(row["kind"])
        if base is not None:
            predicted = base["tokens_per_s"] * base["parameters"] / row["parameters"]
            row["predicted_tokens_per_s"] = round(predicted, 1)
            row["measured_over_predicted"] = round(row["tokens_per_s"] / predicted, 2)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--models", nargs="+", default=["smollm2-135m", "minilm", "FacebookAI/roberta-base", "gpt2-large"]
    )
    parser.add_argument("--reference", default="smollm2-135m", help="the model the rates are measured on")
    parser.add_argument(
        "--kinds", nargs="+", default=["forward", "training"], choices=["forward", "training"]
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--sequences", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--batches", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--kind", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=REPO / "results/benchmarks/model_rates.json")
    args = parser.parse_args()
    if args.model:
        print(json.dumps(run_one(args)))
        return
    shared = ["--device", args.device, "--dtype", args.dtype, "--threads", str(args.threads)]
    shared += [
        "--sequences",
        str(args.sequences),
        "--tokens",
        str(args.tokens),
        "--batches",
        str(args.batches),
    ]
    rows = run_isolated(
        __file__,
        [["--model", model, "--kind", kind, *shared] for model in args.models for kind in args.kinds],
    )
    write_report({"runs": against_prediction(rows, args.reference)}, args.out)
    for row in rows:
        print(
            f"{row['model']:>34} {row['kind']:>8}: {row['tokens_per_s']:>9.1f} tokens/s, "
            f"measured / predicted {row.get('measured_over_predicted', '-')}"
        )


if __name__ == "__main__":
    main()
