"""ICL against ICL with privacy enhancement under both blocking options: leak rates and cost.

The same planned generations (contexts and fictional codes, drawn per seed) are written by
`icl` and by `icl_pe` with `generation.blocking: values` (the paper) and `values_and_parts`
(the default), with the embedded model and the default `generation` settings, and scored as
the `privacy_metrics` rule scores them (known setting). The corpus is the demo TAB corpus, or
any TAB JSON file (`--tab`, e.g. the real sample in ../shared/data/tab), all of whose documents
then serve as contexts.

    .venv/bin/python benchmarks/blocking.py --tab ../shared/data/tab/echr_dev_sample.json

Reports, per setting, exact / partial / near leak rates (%), regenerations per document,
documents at the regeneration limit and new tokens per second (all attempts counted).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import yaml

from common import REPO, demo_tab_frames, leak_matching, write_report

SETTINGS = (("icl", "values"), ("icl_pe", "values"), ("icl_pe", "values_and_parts"))


def frames(tab: Path | None, idset: str):
    """(docs, spans, codes); a given TAB file's documents all count as training documents."""
    from plainsight.codes.control_code import codes_table, select_spans
    from plainsight.data.ingest import ingest_dataset

    if tab is None:
        return demo_tab_frames(idset)
    dataset = {"format": "tab", "segments": [[1, 6], [6, 12]]}
    docs, spans = ingest_dataset([tab], dataset, "error", REPO / "resources/mimic_placeholder_types.yaml")
    docs = docs.assign(split="train")
    return docs, spans, codes_table(docs, select_spans(spans, idset))


def run_setting(
    method: str, blocking_mode: str, docs, spans, codes, model, tokenizer, generation: dict, args
) -> dict:
    from plainsight.codes.fictional import FictionalPools, pool_drawer
    from plainsight.data.segments import segment_texts
    from plainsight.evaluation.privacy import icl_privacy_metrics
    from plainsight.generation.corpus import generate_corpus
    from plainsight.generation.params import GenerationSettings, generation_params
    from plainsight.methods import in_context, registry
    from plainsight.methods.in_context import Blocking

    settings = GenerationSettings.from_params(
        generation_params(registry.method(method), {**generation, "blocking": blocking_mode}, "corpus")
    )
    texts = segment_texts(docs)
    pools = FictionalPools.for_corpus(REPO / "resources/fictional_pools.yaml", spans, codes)
    blocking = Blocking.for_corpus(blocking_mode, codes, texts)
    planned = in_context.plan(
        method,
        codes,
        texts,
        pool_drawer(pools),
        args.seed,
        args.generations_per_segment,
        settings.context_documents,
        blocking,
    )
    started = time.perf_counter()
    corpus = generate_corpus(
        method,
        args.seed,
        planned,
        model,
        tokenizer,
        settings,
        common_words=blocking.common_words,
    )
    seconds = time.perf_counter() - started
    metrics = icl_privacy_metrics(corpus, leak_matching(docs, spans, args.idset))
    # every attempt's tokens: the kept one's are new_tokens, a regeneration repeats the work
    return {
        "method": method,
        "blocking": blocking_mode if method == "icl_pe" else "none",
        "generations": len(corpus),
        "exact_leak": 100 * float(metrics["leaked"].mean()),
        "partial_leak": 100 * float(metrics["partial_leak"].mean()),
        "near_leak": 100 * float(metrics["near_leak"].mean()),
        "regenerations_per_document": float(corpus["regenerations"].mean()),
        "hit_max_regenerations": int(corpus["hit_max_regenerations"].sum()),
        "new_tokens": int(corpus["new_tokens"].sum()),
        "seconds": round(seconds, 1),
        "kept_tokens_per_s": round(float(corpus["new_tokens"].sum()) / seconds, 2),
        "near_leaked_values": sorted({v for values in metrics["near_leaked_values"] for v in values}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tab", type=Path, help="a TAB JSON file (default: the demo corpus)")
    parser.add_argument("--idset", default="direct", choices=["direct", "quasi", "both"])
    parser.add_argument("--generations-per-segment", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", default=str(REPO / "results/models/base/smollm2-135m"))
    parser.add_argument("--out", type=Path, default=REPO / "results/benchmarks/blocking.json")
    args = parser.parse_args()

    import torch

    from plainsight.models import load_model

    torch.set_num_threads(args.threads)
    generation = yaml.safe_load((REPO / "config/config.yaml").read_text(encoding="utf-8"))["generation"]
    docs, spans, codes = frames(args.tab, args.idset)
    model, tokenizer = load_model(args.model)
    rows = []
    for method, blocking_mode in SETTINGS:
        rows.append(
            run_setting(method, blocking_mode, docs, spans, codes, model, tokenizer, generation, args)
        )
        print(json.dumps(rows[-1]))
    write_report({"corpus": str(args.tab or "demo"), "idset": args.idset, "settings": rows}, args.out)


if __name__ == "__main__":
    main()
