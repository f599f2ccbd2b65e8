"""Rule `train_adapter`: the adapter of a trained method, fitted on (real code, document) pairs."""

import logging
from pathlib import Path

import pandas as pd
import torch

from plainsight.codes.fictional import FictionalPools
from plainsight.data.segments import segment_texts
from plainsight.methods.registry import method as registered_method
from plainsight.models import load_model, model_placement, resolve_placement
from plainsight.snakemake_job import RuleJob, run_rule
from plainsight.training.checkpoints import Checkpoints, remove_checkpoint
from plainsight.training.dp import DPSettings, dp_adapter_model, train_dp
from plainsight.training.loop import TrainingSettings, corpus_init_text, train, training_examples
from plainsight.training.objectives import lm_loss
from plainsight.training.prefix import prefix_model, save_adapter

log = logging.getLogger("plainsight")


def main(job: RuleJob) -> None:
    method, seed = job.method, job.seed
    spec = registered_method(method)
    params = job.params.training
    torch.set_num_threads(job.threads)
    docs = pd.read_parquet(job.input.docs)
    codes = pd.read_parquet(job.input.codes)
    texts = segment_texts(docs)
    # The frozen model runs in the configured dtype; the prefix and the optimizer state stay float32.
    model, tokenizer = load_model(job.params.model, *resolve_placement(job.params.placement))
    examples = training_examples(codes, texts, tokenizer, params["max_length"])
    private_tokens = sum(sum(e.private) for e in examples)
    log.info("%d training examples, %d tokens, %d private document tokens", len(examples),
             sum(len(e.input_ids) for e in examples), private_tokens)
    # Outside the rule's output, which Snakemake deletes when a job fails: a rerun resumes from it.
    checkpoint_dir = Path(job.params.checkpoints)
    # How often to checkpoint decides nothing about the adapter: read from the config, not the params.
    checkpoints = Checkpoints(checkpoint_dir, job.config["prefix_tuning"]["checkpoint_every_steps"], method)
    # DP-SGD starts from public text: its guarantee does not cover the initialisation. The others start from
    # init_text or from a corpus opening whose private values are replaced by fictional ones.
    if spec.differentially_private:
        adapter = dp_adapter_model(model, params["num_virtual_tokens"], tokenizer, params["init_text"],
                                   params["projection_hidden"])
        dp = params["dp"]
        if "unit_id" not in docs.columns:
            raise ValueError(f"{job.input.docs} has no unit_id column (written by an older ingestion): "
                             "rerun its ingest rule")
        # The privacy unit of each example: its document (TAB) or its patient (MIMIC).
        unit_of = dict(zip(docs["doc_id"].astype(str), docs["unit_id"].astype(str)))
        units = [unit_of[example.key[0]] for example in examples]
        dp_settings = DPSettings(epsilon=dp["epsilon"], max_grad_norm=dp["max_grad_norm"], delta=dp["delta"],
                                 privacy_unit=dp["privacy_unit"])
        report = train_dp(adapter, examples, tokenizer.pad_token_id, params["batch_size"], params["epochs"],
                          params["learning_rate"], dp_settings, seed, lm_loss, checkpoints, units=units)
        log.info("DP-SGD: privacy unit %s (%d units), epsilon %.3f at delta %.2e, noise multiplier %.3f, "
                 "sample rate %.4f, %d steps", report["privacy_unit"], report["units"], report["epsilon"],
                 report["delta"], report["noise_multiplier"], report["sample_rate"], report["steps"])
        history = report.pop("losses")
    else:
        init_text = params["init_text"]
        if params["init_from"] == "corpus":
            pools = FictionalPools.for_corpus(job.input.pools, pd.read_parquet(job.input.spans), codes)
            init_text = corpus_init_text(codes, texts, pools, seed)
        adapter = prefix_model(model, tokenizer, params["num_virtual_tokens"], init_text, params["projection_hidden"])
        settings = TrainingSettings.from_params(params, spec.masked_objective)
        history = train(adapter, examples, settings, masked=spec.masked_objective, seed=seed,
                        pad_token_id=tokenizer.pad_token_id, desc=f"{method} seed {seed}", checkpoints=checkpoints)
        report = {"adapter": "prefix"}
    save_adapter(adapter, job.output[0], {
        "training.json": {"method": method, "seed": seed, "examples": len(examples),
                          "private_tokens": private_tokens, **model_placement(model), **report, "history": history},
    })
    remove_checkpoint(checkpoints.directory)


run_rule(main)
