"""Rule `train_adapter`: the adapter of a trained method, fitted on (real code, document) pairs."""

import logging
from pathlib import Path

import pandas as pd
import torch

from plainsight.codes.control import records_to_entities
from plainsight.data.segments import segment_texts
from plainsight.methods.registry import method as registered_method
from plainsight.methods.trained import training_keys
from plainsight.models import load_model
from plainsight.snakemake_job import RuleJob, run_rule
from plainsight.training.checkpoints import Checkpoints, remove_checkpoint
from plainsight.training.dp import DPSettings, dp_adapter_model, train_dp
from plainsight.training.loop import TrainingSettings, build_example, train
from plainsight.training.objectives import Lambdas, lm_loss
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
    model, tokenizer = load_model(job.params.model)
    code_of = {(str(r.doc_id), int(r.segment)): r for r in codes.itertuples(index=False)}
    examples = [build_example(key, code_of[key].code, texts[key],
                              [value for _, value in records_to_entities(code_of[key].entities)], tokenizer,
                              params["max_length"])
                for key in training_keys(codes)]
    private_tokens = sum(sum(e.private) for e in examples)
    log.info("%d training examples, %d tokens, %d private document tokens", len(examples),
             sum(len(e.input_ids) for e in examples), private_tokens)
    settings = TrainingSettings(params["epochs"], params["learning_rate"], params["batch_size"], params["max_length"],
                                Lambdas(params["lambda_lm"], params["lambda_contrastive"], params["lambda_kl"]))
    # Outside the rule's output, which Snakemake deletes when a job fails: a rerun resumes from it.
    checkpoint_dir = Path(job.params.checkpoints)
    checkpoints = Checkpoints(checkpoint_dir, params["checkpoint_every_steps"], method)
    # Every method starts from the same public text: a training document would put its identifiers in the prefix.
    if spec.differentially_private:
        adapter = dp_adapter_model(model, params["num_virtual_tokens"], tokenizer, params["init_text"])
        dp = job.params.dpsgd
        report = train_dp(adapter, examples, tokenizer.pad_token_id, settings.batch_size, settings.epochs,
                          settings.learning_rate, DPSettings(dp["epsilon"], dp["max_grad_norm"]), seed, lm_loss,
                          checkpoints)
        log.info("DP-SGD: epsilon %.3f at delta %.2e (noise multiplier %.3f, %d steps)", report["epsilon"],
                 report["delta"], report["noise_multiplier"], report["steps"])
        history = report.pop("losses")
    else:
        adapter = prefix_model(model, tokenizer, params["num_virtual_tokens"], params["init_text"])
        history = train(adapter, examples, settings, masked=spec.masked_objective, seed=seed,
                        pad_token_id=tokenizer.pad_token_id, desc=f"{method} seed {seed}", checkpoints=checkpoints)
        report = {"adapter": "prefix"}
    save_adapter(adapter, job.output[0], {
        "training.json": {"method": method, "seed": seed, "examples": len(examples),
                          "private_tokens": private_tokens, **report, "history": history},
    })
    remove_checkpoint(checkpoints.directory)


run_rule(main)
