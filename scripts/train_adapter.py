"""Rule `train_adapter`: a prefix (ft, ft_mask) or DP-SGD adapter trained on code -> document pairs."""

import logging
from pathlib import Path

import pandas as pd
import torch

from plainsight.codes.control import records_to_entities
from plainsight.data.segments import segment_texts
from plainsight.logs import run_step
from plainsight.methods.trained import training_keys
from plainsight.models import load_model
from plainsight.training.checkpoints import Checkpoints, remove_checkpoint
from plainsight.training.dp import DPSettings, dp_adapter_model, train_dp
from plainsight.training.loop import TrainingSettings, build_example, train
from plainsight.training.objectives import Lambdas, lm_loss
from plainsight.training.prefix import prefix_model, save_adapter

log = logging.getLogger("plainsight")


def main():
    method, seed = snakemake.wildcards.method, int(snakemake.wildcards.seed)  # noqa: F821
    params = snakemake.params.training  # noqa: F821
    torch.set_num_threads(snakemake.threads)  # noqa: F821
    docs = pd.read_parquet(snakemake.input.docs)  # noqa: F821
    codes = pd.read_parquet(snakemake.input.codes)  # noqa: F821
    texts = segment_texts(docs)
    model, tokenizer = load_model(snakemake.params.model)  # noqa: F821
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
    checkpoint_dir = Path(snakemake.params.checkpoints)  # noqa: F821
    checkpoints = Checkpoints(checkpoint_dir, params["checkpoint_every_steps"], method)
    # Every method starts from the same public text: a training document would put its identifiers in the prefix.
    if method == "dpsgd":
        adapter = dp_adapter_model(model, params["num_virtual_tokens"], tokenizer, params["init_text"])
        dp = snakemake.params.dpsgd  # noqa: F821
        report = train_dp(adapter, examples, tokenizer.pad_token_id, settings.batch_size, settings.epochs,
                          settings.learning_rate, DPSettings(dp["epsilon"], dp["max_grad_norm"]), seed, lm_loss,
                          checkpoints)
        log.info("DP-SGD: epsilon %.3f at delta %.2e (noise multiplier %.3f, %d steps)", report["epsilon"],
                 report["delta"], report["noise_multiplier"], report["steps"])
        history = report.pop("losses")
    else:
        adapter = prefix_model(model, tokenizer, params["num_virtual_tokens"], params["init_text"])
        history = train(adapter, examples, settings, masked=method == "ft_mask", seed=seed,
                        pad_token_id=tokenizer.pad_token_id, desc=f"{method} seed {seed}", checkpoints=checkpoints)
        report = {"adapter": "prefix"}
    save_adapter(adapter, snakemake.output[0], {  # noqa: F821
        "training.json": {"method": method, "seed": seed, "examples": len(examples),
                          "private_tokens": private_tokens, **report, "history": history},
    })
    remove_checkpoint(checkpoints.directory)


run_step(main, snakemake.log[0])  # noqa: F821
