"""Shared by the benchmarks: the demo TAB corpus, one process per measured mode, the report."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def demo_tab_frames(idset: str = "direct"):
    """(docs, spans, codes) of the demo TAB corpus, as the workflow's ingest and control_codes rules
    write them."""
    from plainsight.codes.control_code import codes_table, select_spans
    from plainsight.data.ingest import ingest_dataset

    dataset = {"format": "tab", "segments": [[1, 6], [6, 12]]}
    paths = [REPO / "resources/demo/tab" / f"echr_{split}.json" for split in ("train", "dev", "test")]
    docs, spans = ingest_dataset(paths, dataset, "error", REPO / "resources/mimic_placeholder_types.yaml")
    return docs, spans, codes_table(docs, select_spans(spans, idset))


def metrics_settings() -> dict:
    """The embedded default's `metrics` settings with the audit's `verbatim_ngram`, as rule
    `privacy_metrics` reads them."""
    import yaml

    config = yaml.safe_load((REPO / "config/config.yaml").read_text(encoding="utf-8"))
    return {**config["metrics"], "verbatim_ngram": config["audit"]["verbatim_ngram"]}


def leak_matching(docs, spans, idset: str):
    """The real segments as the leak metrics match them, with the embedded default's matching settings."""
    from plainsight.evaluation.privacy import configured_real_values

    return configured_real_values(docs, spans, idset, metrics_settings())


def demo_tab(idset: str = "direct"):
    """(codes, texts): the control codes of every segment and each segment's text by (doc_id, segment)."""
    from plainsight.data.segments import segment_texts

    docs, _, codes = demo_tab_frames(idset)
    return codes, segment_texts(docs)


def add_model_arguments(parser) -> None:
    """--model, --device, --dtype and --model-config, shared by the model benchmarks."""
    parser.add_argument(
        "--model",
        default=str(REPO / "results/models/base/smollm2-135m"),
        help="model folder or id (with --model-config: only its tokenizer is used)",
    )
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    parser.add_argument("--dtype", default="auto", help="auto, float32, bfloat16 or float16 (model.dtype)")
    parser.add_argument(
        "--model-config",
        default=None,
        help="a name in resources/model_shapes.yaml (princeton-nlp/Sheared-LLaMA-1.3B, "
        "meta-llama/Llama-3.1-8B-Instruct): that architecture with random weights",
    )


def model_arguments(args) -> list[str]:
    """The model arguments to hand on to a benchmark's isolated runs."""
    passed = ["--model", args.model, "--device", args.device, "--dtype", args.dtype]
    return passed + (["--model-config", args.model_config] if args.model_config else [])


def load_benchmark_model(args):
    """(model, tokenizer) on --device in --dtype: the --model, or --model-config's architecture with random
    weights and the --model's tokenizer (its vocabulary replaces the architecture's)."""
    import yaml

    from plainsight.models import load_model, random_weight_model, resolve_placement

    device, dtype = resolve_placement({"device": args.device, "dtype": args.dtype})
    model, tokenizer = load_model(args.model, device, dtype)
    if args.model_config is None:
        return model, tokenizer
    shapes = yaml.safe_load((REPO / "resources/model_shapes.yaml").read_text(encoding="utf-8"))
    if args.model_config not in shapes:
        raise SystemExit(f"--model-config {args.model_config!r} is not in resources/model_shapes.yaml")
    del model
    random_model = random_weight_model(shapes[args.model_config], len(tokenizer), device, dtype)
    random_model.generation_config.pad_token_id = tokenizer.pad_token_id
    random_model.config.eos_token_id = tokenizer.eos_token_id
    return random_model, tokenizer


def device_record(model) -> dict:
    """Where the benchmark ran: device, dtype, parameters, and the peak GPU memory on a GPU."""
    import torch

    parameter = next(model.parameters())
    record = {
        "device": str(parameter.device),
        "dtype": str(parameter.dtype).removeprefix("torch."),
        "parameters": sum(p.numel() for p in model.parameters()),
    }
    if parameter.device.type == "cuda":
        record["gpu"] = torch.cuda.get_device_name(parameter.device)
        record["peak_gpu_memory_gb"] = round(torch.cuda.max_memory_allocated(parameter.device) / 1e9, 2)
    return record


def run_isolated(script: str, runs: list[list[str]]) -> list[dict]:
    """Run `script` once per argument list, each in a fresh process (so peak memory is its own);
    each run prints its result as JSON on its last line."""
    rows = []
    for arguments in runs:
        output = subprocess.run(
            [sys.executable, script, *arguments], check=True, capture_output=True, text=True
        ).stdout
        rows.append(json.loads(output.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]))
    return rows


def write_report(report: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
