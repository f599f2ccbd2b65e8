"""Rules `perplexity` and `base_perplexity`: perplexity on the real test split of a fresh model
fine-tuned on one synthetic corpus, or of the configured model untouched (the reference)."""

import dataclasses
import logging

import pandas as pd
import torch

from plainsight.data.segments import segment_texts
from plainsight.evaluation.perplexity import FinetuneSettings, corpus_perplexity, finetune
from plainsight.evaluation.utility import BASE_MODEL, test_segments
from plainsight.io import write_json
from plainsight.logs import run_step
from plainsight.models import load_model

log = logging.getLogger("plainsight")


def main():
    params = snakemake.params.perplexity  # noqa: F821
    torch.set_num_threads(snakemake.threads)  # noqa: F821
    docs = pd.read_parquet(snakemake.input.docs)  # noqa: F821
    texts = segment_texts(docs)
    test_texts = [texts[key] for key in test_segments(docs)]
    model, tokenizer = load_model(snakemake.params.model)  # noqa: F821
    settings = FinetuneSettings(params["finetune"], params["epochs"], params["learning_rate"],
                                params["batch_size"], params["max_length"], params["lora_rank"])
    record = {}
    if "corpus" in snakemake.input.keys():  # noqa: F821
        method, seed = snakemake.wildcards.method, int(snakemake.wildcards.seed)  # noqa: F821
        corpus = pd.read_parquet(snakemake.input.corpus)  # noqa: F821
        synthetic = corpus["text"].tolist()
        model, history = finetune(model, tokenizer, synthetic, settings, seed, desc=f"fine-tune on {method} seed {seed}")
        record = {"method": method, "seed": seed, "setting": snakemake.wildcards.setting,  # noqa: F821
                  "training_texts": sum(1 for t in synthetic if t.strip()), "training_steps": len(history),
                  "final_loss": history[-1]["loss"] if history else None}
    else:
        record = {"method": BASE_MODEL}
    scored = corpus_perplexity(model, tokenizer, test_texts, settings.max_length, settings.batch_size)
    log.info("perplexity %.3f over %d test tokens (%d test segments)", scored.perplexity, scored.tokens,
             len(test_texts))
    write_json({**record, "perplexity": scored.perplexity, "test_tokens": scored.tokens,
                "test_segments": len(test_texts), "finetune": dataclasses.asdict(settings)},
               snakemake.output[0])  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
