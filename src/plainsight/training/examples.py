"""Training examples and their batches, as every trained model in the project sees them.

A training example is a real control code followed by its document: the prompt the model sees at
generation time, then the text it should write. The loss covers the document tokens only (labels
are -100 on the code). For ft_mask each document token also carries a privacy flag: True on tokens
of the segment's private values, found at every occurrence in the document.

Batches hold examples of similar length (sorted, then cut) and are padded to the longest example of
the batch, never to a fixed length.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import torch

from plainsight.codes.control_code import records_to_entities
from plainsight.codes.fictional import FictionalPools
from plainsight.matching import value_pattern
from plainsight.methods.prompts import render
from plainsight.methods.trained import training_keys
from plainsight.rng import stable_rng
from plainsight.training.objectives import IGNORE_INDEX, private_char_spans, private_token_mask


@dataclass(frozen=True)
class TrainingExample:
    key: tuple[str, int]
    input_ids: list[int]
    labels: list[int]
    private: list[bool]


def build_example(
    key: tuple[str, int], code: str, text: str, values: Iterable[str], tokenizer, max_length: int
) -> TrainingExample:
    """Tokenise code prompt + document (+ end of text); mark document tokens and private ones."""
    prompt = render([], code)
    full = prompt + text
    encoded = tokenizer(full, add_special_tokens=False, return_offsets_mapping=True)
    input_ids = [*encoded.input_ids, tokenizer.eos_token_id]
    offsets = [tuple(o) for o in encoded.offset_mapping] + [(len(full), len(full))]
    spans = [(start + len(prompt), end + len(prompt)) for start, end in private_char_spans(text, values)]
    private = private_token_mask(offsets, spans)
    document = [start >= len(prompt) for start, _ in offsets]
    document[-1] = True  # the end-of-text token teaches the model to stop
    input_ids, document, private = input_ids[:max_length], document[:max_length], private[:max_length]
    labels = [token if is_document else IGNORE_INDEX for token, is_document in zip(input_ids, document)]
    return TrainingExample(key, input_ids, labels, [p and d for p, d in zip(private, document)])


def training_examples(
    codes, texts: Mapping[tuple[str, int], str], tokenizer, max_length: int
) -> list[TrainingExample]:
    """One example per fine-tuning sample (`plainsight.methods.trained.training_keys`)."""
    return coded_examples(codes, texts, training_keys(codes), tokenizer, max_length)


def coded_examples(
    codes, texts: Mapping[tuple[str, int], str], keys: Iterable[tuple[str, int]], tokenizer, max_length: int
) -> list[TrainingExample]:
    """The segments `keys` as training examples: each one's real code, then its text, the code's values
    marked private."""
    code_of = {(str(r.doc_id), int(r.segment)): r for r in codes.itertuples(index=False)}
    return [
        build_example(
            key,
            code_of[key].code,
            texts[key],
            [value for _, value in records_to_entities(code_of[key].entities)],
            tokenizer,
            max_length,
        )
        for key in keys
    ]


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
        text = value_pattern(value).sub(lambda _, fill=replacement: fill, text)
    return text


def length_batches(
    examples: Sequence[TrainingExample], batch_size: int, seed: int, epoch: int
) -> list[list[TrainingExample]]:
    """Batches of similar length, in a seeded order that changes per epoch."""
    ordered = sorted(examples, key=lambda e: (len(e.input_ids), e.key))
    batches = [ordered[i : i + batch_size] for i in range(0, len(ordered), batch_size)]
    stable_rng(seed, "batches", epoch).shuffle(batches)
    return batches


def collate(
    batch: Sequence[TrainingExample], pad_token_id: int, width: int | None = None
) -> dict[str, torch.Tensor]:
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


def micro_batches(group_rows: Sequence[int], most_rows: int | None) -> list[tuple[int, int]]:
    """(start, end) rows of the micro-batches of a batch whose consecutive groups hold `group_rows` rows
    each: groups are taken in order while they fit in `most_rows` rows, and a group is never split (a
    DP-SGD privacy unit's sequences, clipped together), so a group larger than `most_rows` goes alone.
    `most_rows` None: the whole batch at once."""
    if most_rows is not None and most_rows < 1:
        raise ValueError(f"a micro-batch holds at least one row, not {most_rows}")
    bounds, start, end = [], 0, 0
    for rows in group_rows:
        if most_rows is not None and end > start and end + rows - start > most_rows:
            bounds.append((start, end))
            start = end
        end += rows
    return [*bounds, (start, end)] if end > start else bounds


def private_share(batch: dict[str, torch.Tensor]) -> float:
    """The share of a batch's document tokens that belong to a private value (the contrastive term's
    tokens)."""
    document = batch["labels"] != IGNORE_INDEX
    return float((batch["private"] & document).sum()) / max(1, int(document.sum()))
