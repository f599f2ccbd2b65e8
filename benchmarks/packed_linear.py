"""Decoding-shaped products: the model's `nn.Linear` layers against the same layers packed for oneDNN.

Times one pass through every linear layer of the model (as a decode step does) at 1, 8 and 16
rows, with the default kernel and inside `packed_linears`, and checks the products agree:

    .venv/bin/python benchmarks/packed_linear.py --repeats 30

The model is the converted embedded model unless --model is given.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from common import REPO, write_report


def linear_pass_ms(layers, rows: int, repeats: int) -> tuple[float, list]:
    """Median milliseconds of one product per layer at `rows` rows, and the last outputs."""
    import torch

    inputs = [
        torch.randn(
            rows, getattr(layer, "linear", layer).in_features, generator=torch.Generator().manual_seed(i)
        )
        for i, layer in enumerate(layers)
    ]
    timings, outputs = [], []
    with torch.no_grad():
        for _ in range(repeats):
            started = time.perf_counter()
            outputs = [layer(x) for layer, x in zip(layers, inputs)]
            timings.append(time.perf_counter() - started)
    return 1000 * sorted(timings)[len(timings) // 2], outputs


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default=str(REPO / "results/models/base/smollm2-135m"))
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 8, 16])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO / "results/benchmarks/packed_linear.json")
    args = parser.parse_args()

    import torch
    from torch import nn

    from plainsight.generation.packed_linear import packed_linears
    from plainsight.models import load_model

    torch.set_num_threads(args.threads)
    model, _ = load_model(args.model)
    model.eval()
    rows_report = []
    for rows in args.rows:
        plain = [m for m in model.modules() if type(m) is nn.Linear]
        plain_ms, expected = linear_pass_ms(plain, rows, args.repeats)
        with packed_linears(model, rows):
            packed = [m for m in model.modules() if type(m).__name__ == "PackedLinear"]
            packed_ms, got = linear_pass_ms(packed, rows, args.repeats)
        worst = max(float((a - b).abs().max()) for a, b in zip(expected, got))
        rows_report.append(
            {
                "rows": rows,
                "layers": len(plain),
                "nn_linear_ms": round(plain_ms, 2),
                "packed_ms": round(packed_ms, 2),
                "speedup": round(plain_ms / packed_ms, 2),
                "max_abs_difference": worst,
            }
        )
        print(json.dumps(rows_report[-1]))
    write_report({"threads": args.threads, "rows": rows_report}, args.out)


if __name__ == "__main__":
    main()
