"""Prefix-tuning recipes on the demo TAB corpus: do the trained prefixes write documents?

For each recipe (benchmarks/prefix_recipes.yaml: overrides of the embedded default's
`prefix_tuning` block) a prefix is trained on the demo corpus's fine-tuning samples
(known setting, direct identifiers) with the embedded model, as `train_adapter` trains it.
During training every term of the objective, the learning rate and the share of private
tokens are logged per step, and every `--sample-every` steps a few documents are written from
fixed fictional codes to follow the document rate. After training, `--generations`
documents are written as `generate_trained` writes them and scored as `privacy_metrics` scores
them: document rate, mean words, ROUGE-L, PIPP, partial and near leaks.

    .venv/bin/python benchmarks/prefix_recipes.py --recipes default_ft default_ft_mask

Writes results/benchmarks/prefix_recipes/{recipe}.json, a Markdown table and a plot of the
terms per step. Needs the converted embedded model (`make run` makes it) unless --model is given.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import yaml

from common import REPO, demo_tab_frames, leak_matching

OUT = REPO / "results/benchmarks/prefix_recipes"
TERMS = ("loss", "lm", "contrastive", "kl")


def config() -> dict:
    return yaml.safe_load((REPO / "config/config.yaml").read_text(encoding="utf-8"))


def sample_documents(model, tokenizer, planned, generation, criteria) -> tuple[float, list[str]]:
    """The share of documents among generations from `planned` with the current prefix, and the texts."""
    import torch

    from plainsight.evaluation.quality import document_quality
    from plainsight.generation.corpus import generate_corpus

    was_training = model.training
    model.eval()
    with torch.no_grad():
        corpus = generate_corpus("ft", 1, planned, model, tokenizer, generation)
    model.train(was_training)
    texts = corpus["text"].tolist()
    return sum(document_quality(t, criteria)["is_document"] for t in texts) / len(texts), texts


def run_recipe(name: str, overrides: dict, args) -> dict:
    import torch

    from plainsight.codes.fictional import FictionalPools, fictional_codes_table, pool_drawer
    from plainsight.data.segments import segment_texts
    from plainsight.evaluation.privacy import ft_privacy_metrics, summarise
    from plainsight.evaluation.quality import DocumentCriteria
    from plainsight.generation.params import GenerationSettings, generation_params
    from plainsight.methods import trained
    from plainsight.methods.registry import method as registered
    from plainsight.models import load_model
    from plainsight.training.examples import corpus_init_text, training_examples
    from plainsight.training.loop import Tracking, TrainingSettings, fit
    from plainsight.training.prefix import prefix_model

    settings_block = {**config()["prefix_tuning"], **overrides}
    method = registered(settings_block.pop("method", "ft"))
    cfg = config()
    generation = GenerationSettings.from_params(generation_params(method, cfg["generation"], "corpus"))
    generation = replace(
        generation, max_new_tokens=settings_block.get("max_new_tokens", generation.max_new_tokens)
    )
    criteria = DocumentCriteria.from_config(cfg["metrics"]["document"])
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    docs, spans, codes = demo_tab_frames("direct")
    texts = segment_texts(docs)
    model, tokenizer = load_model(args.model)
    examples = training_examples(codes, texts, tokenizer, settings_block["max_length"])
    settings = TrainingSettings.from_params(settings_block, method.masked_objective)
    pools = FictionalPools.for_corpus(REPO / "resources/fictional_pools.yaml", spans, codes)
    init_text = settings_block["init_text"]
    if settings_block.get("init_from") == "corpus":
        init_text = corpus_init_text(codes, texts, pools, args.seed)
    adapter = prefix_model(
        model,
        tokenizer,
        settings_block["num_virtual_tokens"],
        init_text,
        settings_block.get("projection_hidden"),
        args.seed,
    )
    fictional = fictional_codes_table(codes, pool_drawer(pools), args.seed)
    probes = trained.plan(fictional, codes, 1000, args.probes)
    document_rates: list[dict] = []

    def on_step(step: int, record: dict) -> None:
        if step % args.sample_every == 0:
            rate, _ = sample_documents(adapter, tokenizer, probes, generation, criteria)
            document_rates.append({"step": step, "documents": rate})

    started = time.perf_counter()
    rate, _ = sample_documents(adapter, tokenizer, probes, generation, criteria)
    document_rates.append({"step": 0, "documents": rate})
    history = fit(
        adapter,
        examples,
        settings,
        seed=args.seed,
        pad_token_id=tokenizer.pad_token_id,
        tracking=Tracking(name, on_step=on_step),
    )
    seconds = time.perf_counter() - started
    planned = trained.plan(fictional, codes, args.seed, args.generations)
    from plainsight.generation.corpus import generate_corpus

    corpus = generate_corpus(method.name, args.seed, planned, adapter, tokenizer, generation)
    real = leak_matching(docs, spans, "direct")
    per_generation = ft_privacy_metrics(corpus, real, trained.training_keys(codes), criteria=criteria)
    summary = summarise(per_generation, "trained")
    averaged = summary[summary["segment"] == -1].iloc[0]
    last = history[-args.last_steps :]
    return {
        "recipe": name,
        "seed": args.seed,
        "method": method.name,
        "overrides": overrides,
        "examples": len(examples),
        "steps": len(history),
        "training_seconds": round(seconds, 1),
        "final": {term: sum(h[term] for h in last) / len(last) for term in TERMS if term in history[0]},
        "documents": float(averaged["documents"]),
        "mean_words": float(averaged["mean_words"]),
        "rougeL": float(averaged["rougeL"]),
        "pipp": float(averaged["pipp"]),
        "partial_leak": float(averaged["partial_leak"]),
        "near_leak": float(averaged["near_leak"]),
        "history": history,
        "document_rates": document_rates,
        "samples": corpus["text"].head(3).tolist(),
    }


def markdown(rows: list[dict]) -> str:
    lines = [
        "| recipe | method | steps | documents (%) | words | loss | lm | contrastive | kl | ROUGE-L "
        "| PIPP (%) | near leak (%) | training s |",
        "| :--- | :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        final = r["final"]
        cells = [f"{final[t]:.3f}" if t in final else "—" for t in TERMS]
        seed = "" if r.get("seed", 1) == 1 else f" (seed {r['seed']})"
        lines.append(
            f"| {r['recipe']}{seed} | {r['method']} | {r['steps']} | {r['documents']:.1f} "
            f"| {r['mean_words']:.0f} | "
            + " | ".join(cells)
            + f" | {r['rougeL']:.4f} | {r['pipp']:.1f} | {r['near_leak']:.1f} | "
            f"{r['training_seconds']:.0f} |"
        )
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [*TERMS, "private_share", "documents"]
    colors = {r["recipe"]: f"C{n}" for n, r in enumerate(rows)}  # one colour per recipe in every panel
    figure, axes = plt.subplots(2, 3, figsize=(13, 7))
    for axis, panel in zip(axes.flat, panels):
        for r in rows:
            if panel == "documents":
                axis.plot(
                    [d["step"] for d in r["document_rates"]],
                    [d["documents"] for d in r["document_rates"]],
                    marker="o",
                    label=r["recipe"],
                    color=colors[r["recipe"]],
                )
            elif panel in r["history"][0]:
                axis.plot(
                    range(1, len(r["history"]) + 1),
                    [h[panel] for h in r["history"]],
                    label=r["recipe"],
                    color=colors[r["recipe"]],
                )
        axis.set_title(panel if panel != "documents" else "document rate of the probe samples")
        axis.set_xlabel("step")
    axes.flat[0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipes", nargs="+", required=True)
    parser.add_argument("--model", default=str(REPO / "results/models/base/smollm2-135m"))
    parser.add_argument("--generations", type=int, default=16)
    parser.add_argument(
        "--probes", type=int, default=4, help="documents written at each probe during training"
    )
    parser.add_argument("--sample-every", type=int, default=8)
    parser.add_argument("--last-steps", type=int, default=5, help="steps averaged for the final losses")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1, help="training, fictional-code and sampling seed")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    recipes = yaml.safe_load((Path(__file__).with_suffix(".yaml")).read_text(encoding="utf-8"))
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.recipes:
        result = run_recipe(name, recipes[name], args)
        suffix = "" if args.seed == 1 else f"_seed{args.seed}"
        (args.out / f"{name}{suffix}.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(json.dumps({k: v for k, v in result.items() if k not in ("history", "samples")}))
    rows = [json.loads(p.read_text()) for p in sorted(args.out.glob("*.json"))]
    (args.out / "recipes.md").write_text(markdown(rows), encoding="utf-8")
    plot(rows, args.out / "recipes.png")


if __name__ == "__main__":
    main()
