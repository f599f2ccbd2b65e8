"""Training data and the training loop of the prefix-tuned methods (ft, ft_mask).

A training example is a real control code followed by its document: the prompt
the model sees at generation time, then the text it should write. The loss
covers the document tokens only (labels are -100 on the code). For ft_mask each
document token also carries a privacy flag: True on tokens of the segment's
private values, found at every occurrence in the document.

Batches hold examples of similar length (sorted, then cut) and are padded to the
longest example of the batch, never to a fixed length.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

import torch
from tqdm.auto import tqdm

from plainsight.codes.control import records_to_entities
from plainsight.codes.fictional import FictionalPools
from plainsight.matching import value_pattern
from plainsight.methods.prompts import render
from plainsight.methods.trained import training_keys
from plainsight.rng import stable_rng
from plainsight.training.checkpoints import (
    Checkpoints,
    Owner,
    Position,
    fingerprint,
    global_rng_state,
    load_checkpoint,
    load_trainable_state,
    save_checkpoint,
    set_global_rng_state,
    trainable_state,
)
from plainsight.training.objectives import (
    IGNORE_INDEX,
    Lambdas,
    lm_loss,
    masked_objective,
    private_char_spans,
    private_token_mask,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainingExample:
    key: tuple[str, int]
    input_ids: list[int]
    labels: list[int]
    private: list[bool]


LR_SCHEDULES = ("constant", "linear", "cosine")


@dataclass(frozen=True)
class TrainingSettings:
    epochs: int
    learning_rate: float
    batch_size: int
    max_length: int
    lambdas: Lambdas = field(default_factory=Lambdas)
    warmup_steps: int = 0  # the learning rate rises linearly from 0 over these steps
    schedule: str = "constant"  # then stays, or decays to 0 at the last step (linear, cosine)

    def __post_init__(self):
        if self.schedule not in LR_SCHEDULES:
            raise ValueError(f"unknown learning-rate schedule {self.schedule!r}: expected one of {LR_SCHEDULES}")

    @classmethod
    def from_params(cls, params: Mapping, masked: bool) -> "TrainingSettings":
        """The settings of a `prefix_tuning` block (or its rule's params, `plainsight.training.params`);
        the lambdas only when `masked`."""
        lambdas = Lambdas(params["lambda_lm"], params["lambda_contrastive"], params["lambda_kl"]) \
            if masked else Lambdas()
        return cls(params["epochs"], params["learning_rate"], params["batch_size"], params["max_length"],
                   lambdas, params["warmup_steps"], params["lr_schedule"])


def learning_rate_factor(step: int, total_steps: int, warmup_steps: int, schedule: str) -> float:
    """The share of the peak learning rate at `step` (0-based): linear warm-up, then the schedule."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    if schedule == "constant":
        return 1.0
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    if schedule == "linear":
        return max(0.0, 1.0 - progress)
    return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def build_example(key: tuple[str, int], code: str, text: str, values: Iterable[str], tokenizer,
                  max_length: int) -> TrainingExample:
    """Tokenise code prompt + document (+ end of text); mark document tokens and private ones."""
    prompt = render([], code)
    full = prompt + text
    encoded = tokenizer(full, add_special_tokens=False, return_offsets_mapping=True)
    input_ids = list(encoded.input_ids) + [tokenizer.eos_token_id]
    offsets = [tuple(o) for o in encoded.offset_mapping] + [(len(full), len(full))]
    spans = [(start + len(prompt), end + len(prompt)) for start, end in private_char_spans(text, values)]
    private = private_token_mask(offsets, spans)
    document = [start >= len(prompt) for start, _ in offsets]
    document[-1] = True  # the end-of-text token teaches the model to stop
    input_ids, document, private = input_ids[:max_length], document[:max_length], private[:max_length]
    labels = [token if is_document else IGNORE_INDEX for token, is_document in zip(input_ids, document)]
    return TrainingExample(key, input_ids, labels, [p and d for p, d in zip(private, document)])


def training_examples(codes, texts: Mapping[tuple[str, int], str], tokenizer, max_length: int
                      ) -> list[TrainingExample]:
    """One example per fine-tuning sample (`plainsight.methods.trained.training_keys`): its real code,
    then its text, the code's values marked private."""
    code_of = {(str(r.doc_id), int(r.segment)): r for r in codes.itertuples(index=False)}
    return [build_example(key, code_of[key].code, texts[key],
                          [value for _, value in records_to_entities(code_of[key].entities)], tokenizer, max_length)
            for key in training_keys(codes)]


def corpus_init_text(codes, texts: Mapping[tuple[str, int], str], pools: FictionalPools, seed: int) -> str:
    """A document opening in the corpus's own style that names no one real: the first fine-tuning
    sample of the first paragraph range, each of its code's values replaced by a fictional value of
    the same type (drawn with `seed`, from pools that hold no real value)."""
    keys = training_keys(codes)
    if not keys:
        raise ValueError("no fine-tuning samples to take an init text from")
    key = min(keys, key=lambda k: (k[1], k[0]))
    row = codes[(codes["doc_id"].astype(str) == key[0]) & (codes["segment"] == key[1])].iloc[0]
    rng = stable_rng(seed, "init text", *key)
    text = texts[key]
    for entity_type, value in sorted(records_to_entities(row["entities"]), key=lambda e: -len(e[1])):
        replacement = pools.draw(entity_type, rng) if entity_type in pools.pools else entity_type
        text = value_pattern(value).sub(lambda _: replacement, text)
    return text


def length_batches(examples: Sequence[TrainingExample], batch_size: int, seed: int, epoch: int
                   ) -> list[list[TrainingExample]]:
    """Batches of similar length, in a seeded order that changes per epoch."""
    ordered = sorted(examples, key=lambda e: (len(e.input_ids), e.key))
    batches = [ordered[i:i + batch_size] for i in range(0, len(ordered), batch_size)]
    stable_rng(seed, "batches", epoch).shuffle(batches)
    return batches


def collate(batch: Sequence[TrainingExample], pad_token_id: int, width: int | None = None) -> dict[str, torch.Tensor]:
    """Right-pad to the longest example of the batch (or to a fixed `width`, for comparison only)."""
    longest = max(len(e.input_ids) for e in batch)
    if width is None:
        width = longest
    elif width < longest:
        raise ValueError(f"an example of {longest} tokens does not fit in width {width}")

    def padded(rows, fill):
        return torch.tensor([list(row) + [fill] * (width - len(row)) for row in rows])

    return {
        "input_ids": padded([e.input_ids for e in batch], pad_token_id),
        "attention_mask": padded([[1] * len(e.input_ids) for e in batch], 0),
        "labels": padded([e.labels for e in batch], IGNORE_INDEX),
        "private": padded([e.private for e in batch], False).bool(),
    }


def private_share(batch: dict[str, torch.Tensor]) -> float:
    """The share of a batch's document tokens that belong to a private value (the contrastive term's tokens)."""
    document = batch["labels"] != IGNORE_INDEX
    return float((batch["private"] & document).sum()) / max(1, int(document.sum()))


def batch_loss(model, batch: dict[str, torch.Tensor], masked: bool, lambdas: Lambdas) -> dict[str, torch.Tensor]:
    """The training loss of one batch: plain LM loss, or the privacy-masked objective.

    The base model's distribution comes from the same weights with the adapter
    switched off, so no second copy of the model is loaded.
    """
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    if not masked:
        return {"loss": lm_loss(logits, batch["labels"])}
    with torch.no_grad(), model.disable_adapter():
        base_logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    return masked_objective(logits, base_logits, batch["labels"], batch["private"], lambdas)


def train(model, examples: Sequence[TrainingExample], settings: TrainingSettings, masked: bool, seed: int,
          pad_token_id: int, desc: str = "train", checkpoints: Checkpoints | None = None,
          on_step: Callable[[int, dict[str, float]], None] | None = None) -> list[dict[str, float]]:
    """Train the trainable parameters of `model` (the adapter); returns the per-step losses, learning
    rate and share of private tokens.

    With `checkpoints`, the run saves its state as it goes and, started again, resumes
    from its last checkpoint: the batches of an epoch are a function of seed and epoch,
    so the ones already done are recomputed and skipped. `on_step(step, record)` is called
    after each step (monitoring: samples during training).
    """
    torch.manual_seed(stable_rng(seed, "train").getrandbits(63))
    parameters = [p for p in model.parameters() if p.requires_grad]
    device = parameters[0].device
    optimizer = torch.optim.AdamW(parameters, lr=settings.learning_rate)
    steps_per_epoch = -(-len(examples) // settings.batch_size)
    total_steps = steps_per_epoch * settings.epochs
    # A function of the step alone, so a resumed run continues the schedule where it stopped.
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: learning_rate_factor(
        step, total_steps, settings.warmup_steps, settings.schedule))
    position, history = Position(), []
    if checkpoints is not None:
        owner = Owner(checkpoints.method, seed,
                      fingerprint(settings, masked, examples, *trainable_state(model).values()))
        resumed = load_checkpoint(checkpoints.directory, owner)
        if resumed is not None:
            position, state = resumed
            load_trainable_state(model, state["adapter"])
            optimizer.load_state_dict(state["optimizer"])
            scheduler.load_state_dict(state["scheduler"])
            set_global_rng_state(state["rng"])
            history = state["history"]
    model.train()
    tokens, started = 0, time.perf_counter()
    for epoch in range(position.epoch, settings.epochs):
        batches = length_batches(examples, settings.batch_size, seed, epoch)
        progress = tqdm(batches[position.batch:], desc=f"{desc} epoch {epoch + 1}/{settings.epochs}", unit="batch",
                        initial=position.batch, total=len(batches))
        for batch_examples in progress:
            batch = {name: tensor.to(device) for name, tensor in collate(batch_examples, pad_token_id).items()}
            terms = batch_loss(model, batch, masked, settings.lambdas)
            terms["loss"].backward()
            learning_rate = scheduler.get_last_lr()[0]
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            tokens += int(batch["attention_mask"].sum())
            step = {name: value.item() for name, value in terms.items()}
            history.append({"epoch": epoch, **step, "learning_rate": learning_rate,
                            "private_share": private_share(batch)})
            if on_step is not None:
                on_step(len(history), history[-1])
            progress.set_postfix(loss=f"{step['loss']:.3f}", tokens_per_s=f"{tokens / (time.perf_counter() - started):.0f}")
            position = position.after_step(len(batches))
            if checkpoints is not None and position.is_due(checkpoints.every_steps):
                save_checkpoint(checkpoints.directory, owner, position, {
                    "adapter": trainable_state(model), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "rng": global_rng_state(), "history": history})
        epoch_losses = [h["loss"] for h in history if h["epoch"] == epoch]
        log.info("%s epoch %d: mean loss %.4f over %d steps, %.0f tokens/s", desc, epoch + 1,
                 sum(epoch_losses) / len(epoch_losses), len(epoch_losses), tokens / (time.perf_counter() - started))
    model.eval()
    return history
