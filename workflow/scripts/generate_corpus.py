"""Rules `generate_icl`, `generate_trained` and `mauve_texts`: a synthetic corpus of one method and seed.

The corpus rules write the method's generations (or one shard of them); `mauve_texts` writes
one text per sampled real test segment, from that segment's real code, for MAUVE to compare.
"""

import pandas as pd
import torch

from plainsight.codes.fictional import FictionalPools
from plainsight.data.segments import segment_texts
from plainsight.evaluation.utility import mauve_targets
from plainsight.generation.corpus import generate_corpus
from plainsight.io import write_parquet
from plainsight.methods import in_context, registry, trained
from plainsight.methods.in_context import Blocking
from plainsight.models import load_model, resolve_placement
from plainsight.snakemake_job import RuleJob, run_rule
from plainsight.training.prefix import load_adapter


def blocking(job: RuleJob, method: registry.Method, codes: pd.DataFrame, texts) -> Blocking:
    """What the method blocks: nothing unless it blocks its context values (then as configured)."""
    if not method.blocks_context_values:
        return Blocking()
    return Blocking.for_corpus(job.params.generation["blocking"], codes, texts)


def corpus_plan(job: RuleJob, method: registry.Method, codes: pd.DataFrame, texts, blocked: Blocking):
    settings = job.params.generation
    if method.trained:
        return trained.plan(pd.read_parquet(job.input.fictional), codes, job.seed, job.params.generations)
    pools = FictionalPools.for_corpus(job.input.pools, pd.read_parquet(job.input.spans), codes)
    return in_context.plan(method.name, codes, texts, pools, job.seed, settings["generations_per_segment"],
                           settings["context_documents"], blocked)


def mauve_plan(job: RuleJob, method: registry.Method, codes: pd.DataFrame, texts, targets, blocked: Blocking):
    if method.trained:
        return trained.plan_for_segments(codes, targets)
    return in_context.plan_for_segments(method.name, codes, texts, targets, job.seed,
                                        job.params.generation["context_documents"], blocked)


def main(job: RuleJob) -> None:
    method = registry.method(job.method)
    torch.set_num_threads(job.threads)
    codes = pd.read_parquet(job.input.codes)
    docs = pd.read_parquet(job.input.docs) if method.in_context or job.params.purpose == "mauve" else None
    texts = segment_texts(docs) if docs is not None else {}
    blocked = blocking(job, method, codes, texts)
    targets = None
    if job.params.purpose == "mauve":
        targets = mauve_targets(docs, job.params.mauve_samples)
        planned = mauve_plan(job, method, codes, texts, targets, blocked)
    else:
        planned = corpus_plan(job, method, codes, texts, blocked)
    model, tokenizer = load_model(job.params.model, *resolve_placement(job.params.placement))
    if method.trained:
        model = load_adapter(model, job.input.adapter)
    shard = job.params.shard
    frame = generate_corpus(job.method, job.seed, planned, model, tokenizer, job.params.generation,
                            shard["index"], shard["count"], blocked.common_words)
    if targets is not None:
        frame.insert(4, "target_doc_id", [targets[g][0] for g in frame["generation_id"]])
    write_parquet(frame, job.output[0])


run_rule(main)
