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
from plainsight.models import load_model, model_placement, resolve_placement
from plainsight.snakemake_job import RuleJob, run_rule

log = logging.getLogger("plainsight")


def main(job: RuleJob) -> None:
    params = job.params.perplexity
    torch.set_num_threads(job.threads)
    docs = pd.read_parquet(job.input.docs)
    texts = segment_texts(docs)
    test_texts = [texts[key] for key in test_segments(docs)]
    settings = FinetuneSettings(params["finetune"], params["epochs"], params["learning_rate"],
                                params["batch_size"], params["max_length"], params["lora_rank"])
    device, dtype = resolve_placement(job.params.placement)
    model, tokenizer = load_model(job.params.model, device, settings.weights_dtype(dtype))
    record = {}
    if "corpus" in job.input.keys():
        method, seed = job.method, job.seed
        corpus = pd.read_parquet(job.input.corpus)
        synthetic = corpus["text"].tolist()
        model, history = finetune(model, tokenizer, synthetic, settings, seed,
                                  desc=f"fine-tune on {method} seed {seed}")
        record = {"method": method, "seed": seed, "setting": job.wildcards.setting,
                  "training_texts": sum(1 for t in synthetic if t.strip()), "training_steps": len(history),
                  "final_loss": history[-1]["loss"] if history else None}
    else:
        record = {"method": BASE_MODEL}
    scored = corpus_perplexity(model, tokenizer, test_texts, settings.max_length, settings.batch_size)
    log.info("perplexity %.3f over %d test tokens (%d test segments)", scored.perplexity, scored.tokens,
             len(test_texts))
    write_json({**record, "perplexity": scored.perplexity, "test_tokens": scored.tokens,
                "test_segments": len(test_texts), "finetune": dataclasses.asdict(settings),
                **model_placement(model)}, job.output[0])


run_rule(main)
