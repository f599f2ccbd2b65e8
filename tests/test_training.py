"""Training examples, length batching, the training loop, and planning generations of trained methods."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from plainsight.codes.control_code import build_entities, entities_to_records, format_code
from plainsight.methods.prompts import render
from plainsight.methods.trained import cut_unfinished_paragraph, plan, training_keys
from plainsight.models import load_model
from plainsight.training.examples import build_example, collate, length_batches, private_share
from plainsight.training.loop import TrainingSettings, fit, learning_rate_factor
from plainsight.training.objectives import IGNORE_INDEX, Lambdas

CODE = "PERSON: Mr Cengiz Polat"
TEXT = "The applicant, Mr Cengiz Polat, lives in Ankara. Polat appealed."


def decoded(tokenizer, ids) -> str:
    return tokenizer.decode(ids)


def test_example_trains_on_the_document_and_end_of_text_only(tiny_tokenizer):
    example = build_example(("d1", 0), CODE, TEXT, ["Cengiz Polat", "Polat"], tiny_tokenizer, 512)
    prompt_tokens = len(tiny_tokenizer(render([], CODE), add_special_tokens=False).input_ids)
    assert example.labels[:prompt_tokens] == [IGNORE_INDEX] * prompt_tokens
    document = [t for t in example.labels if t != IGNORE_INDEX]
    assert decoded(tiny_tokenizer, document[:-1]) == TEXT
    assert document[-1] == tiny_tokenizer.eos_token_id
    assert example.input_ids[-1] == tiny_tokenizer.eos_token_id


def test_private_tokens_cover_every_occurrence_and_nothing_else(tiny_tokenizer):
    example = build_example(("d1", 0), CODE, TEXT, ["Cengiz Polat", "Polat"], tiny_tokenizer, 512)
    private_ids = [t for t, p in zip(example.input_ids, example.private) if p]
    text = decoded(tiny_tokenizer, private_ids)
    assert text.replace(" ", "") == "CengizPolatPolat"
    # the code line also names the value, but the prompt is never private (it is not trained on)
    prompt_tokens = len(tiny_tokenizer(render([], CODE), add_special_tokens=False).input_ids)
    assert not any(example.private[:prompt_tokens])


def test_truncation_keeps_prompt_and_cuts_the_document(tiny_tokenizer):
    example = build_example(("d1", 0), CODE, TEXT, ["Polat"], tiny_tokenizer, 16)
    assert len(example.input_ids) == len(example.labels) == len(example.private) == 16


def test_batches_group_similar_lengths_and_are_seeded(tiny_tokenizer):
    texts = [" ".join(["word"] * n) for n in (3, 30, 4, 28, 5, 31)]
    examples = [build_example((f"d{i}", 0), "", t, [], tiny_tokenizer, 512) for i, t in enumerate(texts)]
    batches = length_batches(examples, 2, seed=1, epoch=0)
    # sorted by length (d0 < d2 < d4 < d3 < d1 < d5), then cut into pairs
    assert sorted(sorted(e.key[0] for e in b) for b in batches) == [["d0", "d2"], ["d1", "d5"], ["d3", "d4"]]
    assert batches == length_batches(examples, 2, seed=1, epoch=0)
    orders = {tuple(b[0].key for b in length_batches(examples, 2, seed=1, epoch=epoch)) for epoch in range(6)}
    assert len(orders) > 1  # the batch order changes between epochs


def test_collate_pads_to_the_longest_in_the_batch(tiny_tokenizer):
    short = build_example(("a", 0), "", "Short text.", ["Short"], tiny_tokenizer, 512)
    long = build_example(("b", 0), "", "A much longer text with several more words.", [], tiny_tokenizer, 512)
    batch = collate([short, long], tiny_tokenizer.pad_token_id)
    width = len(long.input_ids)
    assert batch["input_ids"].shape == (2, width)
    pad = width - len(short.input_ids)
    assert batch["attention_mask"][0].tolist() == [1] * len(short.input_ids) + [0] * pad
    assert batch["labels"][0, len(short.input_ids) :].tolist() == [IGNORE_INDEX] * pad
    assert batch["private"].dtype == torch.bool and not batch["private"][0, len(short.input_ids) :].any()
    assert batch["private"][0].sum() >= 1
    fixed = collate([short, long], tiny_tokenizer.pad_token_id, width=width + 5)
    assert (
        fixed["input_ids"].shape == (2, width + 5)
        and fixed["attention_mask"].sum() == batch["attention_mask"].sum()
    )
    with pytest.raises(ValueError, match="does not fit"):
        collate([short, long], tiny_tokenizer.pad_token_id, width=width - 1)


@pytest.mark.parametrize("masked", [False, True])
def test_training_lowers_the_loss_and_only_moves_the_adapter(tiny_model_dir, masked):
    from plainsight.training.prefix import prefix_model

    model, tokenizer = load_model(tiny_model_dir)
    base_state = {name: p.detach().clone() for name, p in model.named_parameters()}
    examples = [build_example((f"d{i}", 0), CODE, TEXT, ["Cengiz Polat"], tokenizer, 64) for i in range(4)]
    adapter = prefix_model(model, tokenizer, 4, TEXT)
    settings = TrainingSettings(
        epochs=8, learning_rate=1e-2, batch_size=2, max_length=64, lambdas=Lambdas(), masked=masked
    )
    history = fit(adapter, examples, settings, seed=3, pad_token_id=tokenizer.pad_token_id)
    assert len(history) == 16
    assert history[-1]["lm" if masked else "loss"] < history[0]["lm" if masked else "loss"]
    if masked:
        assert {"loss", "lm", "contrastive", "kl"} <= set(history[0])
    for name, parameter in model.named_parameters():
        if name in base_state:
            assert torch.equal(parameter, base_state[name]), name


def test_training_is_deterministic(tiny_model_dir):
    from plainsight.training.prefix import prefix_model

    losses = []
    for _ in range(2):
        model, tokenizer = load_model(tiny_model_dir)
        examples = [build_example((f"d{i}", 0), CODE, TEXT, ["Polat"], tokenizer, 48) for i in range(3)]
        adapter = prefix_model(model, tokenizer, 4, TEXT)
        settings = TrainingSettings(epochs=2, learning_rate=1e-2, batch_size=2, max_length=48, masked=True)
        losses.append([h["loss"] for h in fit(adapter, examples, settings, 5, tokenizer.pad_token_id)])
    assert losses[0] == losses[1]


# --- planning generations of trained methods ------------------------------------------------------


def codes_frame(rows) -> pd.DataFrame:
    data = []
    for doc_id, segment, split, pairs in rows:
        entities = build_entities(pairs)
        data.append((doc_id, segment, split, format_code(entities), entities_to_records(entities)))
    return pd.DataFrame(data, columns=["doc_id", "segment", "split", "code", "entities"])


CODES = codes_frame(
    [
        ("d1", 0, "train", [("PERSON", "Cengiz Polat")]),
        ("d1", 1, "train", [("LOC", "Ankara")]),
        ("d2", 0, "train", [("PERSON", "Nina Holst"), ("DATETIME", "3 May 2001")]),
        ("t1", 0, "test", [("PERSON", "Olga Petrov")]),
    ]
)
FICTIONAL = codes_frame(
    [
        ("d1", 0, "train", [("PERSON", "Dr Alex Adams")]),
        ("d1", 1, "train", [("LOC", "Tokyo")]),
        ("d2", 0, "train", [("PERSON", "Ms Kai Lewis"), ("DATETIME", "01 May 1999")]),
        ("t1", 0, "test", [("PERSON", "Mr Dana Ellis")]),
    ]
).assign(seed=1)


def test_trained_plan_uses_each_samples_fictional_code():
    planned = plan(FICTIONAL, CODES, seed=1, generations=None)
    assert training_keys(CODES) == [("d1", 0), ("d1", 1), ("d2", 0)]
    assert [p.context_keys for p in planned] == [(("d1", 0),), (("d1", 1),), (("d2", 0),)]
    assert [p.target_code for p in planned] == [
        "PERSON: Dr Alex Adams",
        "LOC: Tokyo",
        "PERSON: Ms Kai Lewis\nDATETIME: 01 May 1999",
    ]
    assert [p.segment for p in planned] == [0, 1, 0]
    assert all(p.examples == () and p.blocked_values == () for p in planned)


def test_trained_plan_samples_with_the_seed():
    first = plan(FICTIONAL, CODES, seed=1, generations=2)
    assert len(first) == 2 and first == plan(FICTIONAL, CODES, seed=1, generations=2)
    picks = {tuple(p.context_keys for p in plan(FICTIONAL, CODES, seed=s, generations=2)) for s in range(10)}
    assert len(picks) > 1


def test_trained_plan_needs_a_fictional_code_per_sample():
    with pytest.raises(ValueError, match="no fictional code for segment 1 of document d1"):
        plan(FICTIONAL[FICTIONAL["segment"] == 0], CODES, seed=1, generations=None)


@pytest.mark.parametrize(
    "text, finished, expected",
    [
        ("First paragraph.\n\nSecond one is cut mid", False, "First paragraph."),
        ("First paragraph.\n\nSecond one ends.", True, "First paragraph.\n\nSecond one ends."),
        ("Only one paragraph cut mid", False, "Only one paragraph cut mid"),
        ("A.\n\nB.\n\n", False, "A."),
    ],
)
def test_cut_unfinished_paragraph(text, finished, expected):
    assert cut_unfinished_paragraph(text, finished) == expected


def test_cut_unfinished_paragraphs_only_where_the_token_limit_was_hit():
    from plainsight.generation.runner import Result
    from plainsight.methods.trained import cut_unfinished_paragraphs

    hit, finished = Result("First.\n\nSecond, cut", 0, 10), Result("First.\n\nSecond, cut", 0, 9)
    cut_unfinished_paragraphs([hit, finished], max_new_tokens=10)
    assert hit.text == "First." and finished.text == "First.\n\nSecond, cut"


def test_training_params_hold_only_what_the_adapter_depends_on():
    from plainsight.methods.registry import method
    from plainsight.training.params import training_params

    prefix_tuning = {
        "num_virtual_tokens": 20,
        "epochs": 1,
        "learning_rate": 2e-3,
        "batch_size": 4,
        "max_length": 128,
        "init_text": "Public text.",
        "init_from": "corpus",
        "projection_hidden": 512,
        "warmup_steps": 3,
        "lr_schedule": "cosine",
        "lambda_lm": 1.0,
        "lambda_contrastive": 0.5,
        "lambda_kl": 2.0,
        "generations": 8,
        "threads": 1,
        "checkpoint_every_steps": 50,
    }
    dpsgd = {"epsilon": 8.0, "max_grad_norm": 1.0}
    shared = {
        "num_virtual_tokens": 20,
        "epochs": 1,
        "learning_rate": 2e-3,
        "batch_size": 4,
        "max_length": 128,
        "init_text": "Public text.",
        "projection_hidden": 512,
    }
    reparametrised = {"init_from": "corpus", "warmup_steps": 3, "lr_schedule": "cosine"}
    assert training_params(method("ft"), prefix_tuning, dpsgd) == {**shared, **reparametrised}
    assert training_params(method("ft_mask"), prefix_tuning, dpsgd) == {
        **shared,
        **reparametrised,
        "lambda_lm": 1.0,
        "lambda_contrastive": 0.5,
        "lambda_kl": 2.0,
    }
    # DP-SGD starts from the public text at a constant learning rate: those settings retrain nothing
    assert training_params(method("dpsgd"), prefix_tuning, dpsgd) == {**shared, "dp": dpsgd}


@pytest.mark.parametrize(
    ("schedule", "factors"),
    [
        # 2 warm-up steps of 10: 1/2, 2/2, then constant, linear to 0, or half a cosine to 0
        ("constant", [0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
        ("linear", [0.5, 1.0, 1.0, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25, 0.125]),
        ("cosine", [0.5, 1.0, 1.0, 0.9619398, 0.8535534, 0.6913417, 0.5, 0.3086583, 0.1464466, 0.0380602]),
    ],
)
def test_learning_rate_factor(schedule, factors):
    assert [learning_rate_factor(step, 10, 2, schedule) for step in range(10)] == pytest.approx(
        factors, abs=1e-6
    )


def test_unknown_schedule_is_refused():
    with pytest.raises(ValueError, match="schedule"):
        TrainingSettings(1, 1e-3, 2, 32, schedule="exponential")


def test_private_share_counts_private_document_tokens():
    batch = {
        "labels": torch.tensor([[-100, 5, 6, 7], [-100, -100, 8, -100]]),
        "private": torch.tensor([[True, True, False, False], [False, False, True, False]]),
    }
    # document tokens: 5, 6, 7, 8; private among them: 5 and 8 (the first row's prompt token is not counted)
    assert private_share(batch) == 0.5


def test_corpus_init_text_is_the_first_opening_with_fictional_values():
    from conftest import FICTIONAL_POOLS
    from plainsight.codes.fictional import FictionalPools
    from plainsight.training.examples import corpus_init_text

    texts = {
        ("d1", 0): "The applicant, Mr Cengiz Polat, was born in Ankara. Cengiz Polat appealed.",
        ("d1", 1): "Ankara is far.",
        ("d2", 0): "Ms Nina Holst wrote on 3 May 2001.",
        ("t1", 0): "Olga Petrov.",
    }
    pools = FictionalPools.from_yaml(FICTIONAL_POOLS)
    text = corpus_init_text(CODES, texts, pools, seed=1)
    # d1 segment 0 comes first; its one value is replaced, at every occurrence, by one fictional name
    assert "Polat" not in text and "Cengiz" not in text
    assert text.startswith("The applicant, Mr ") and text.endswith(" appealed.")
    name = text[len("The applicant, Mr ") : text.index(", was born")]
    assert text.count(name) == 2 and name.split()[-1] in pools.pools["PERSON"]["last_names"]
    assert "Ankara" in text  # not a value of this segment's code (the direct identifiers)
    assert corpus_init_text(CODES, texts, pools, seed=1) == text


def test_masked_step_with_a_bfloat16_model_matches_float32(tiny_model_dir, tiny_tokenizer):
    """The frozen model in bfloat16, the prefix and the loss terms in float32: each term within 2% and the
    prefix gradient within a cosine similarity of 0.99 of the float32 model's (bfloat16 keeps 8 bits)."""
    from plainsight.models import load_model
    from plainsight.training.loop import batch_loss
    from plainsight.training.objectives import Lambdas
    from plainsight.training.prefix import prefix_model

    examples = [
        build_example((f"d{n}", 0), CODE, TEXT, ["Cengiz Polat", "Polat"], tiny_tokenizer, 64)
        for n in range(2)
    ]
    batch = collate(examples, tiny_tokenizer.pad_token_id)
    runs = {}
    for dtype in (torch.float32, torch.bfloat16):
        model, tokenizer = load_model(tiny_model_dir, dtype=dtype)
        adapter = prefix_model(model, tokenizer, 4, "The Court held a hearing.")
        (prefix,) = [p for p in adapter.parameters() if p.requires_grad]
        terms = batch_loss(adapter, batch, masked=True, lambdas=Lambdas())
        terms["loss"].backward()
        assert prefix.dtype == torch.float32 and prefix.grad.dtype == torch.float32
        assert all(value.dtype == torch.float32 for value in terms.values())
        assert next(adapter.get_base_model().parameters()).dtype == dtype
        runs[dtype] = ({name: value.item() for name, value in terms.items()}, prefix.grad.flatten())
    (reference, reference_grad), (half, half_grad) = runs[torch.float32], runs[torch.bfloat16]
    for name in ("loss", "lm", "contrastive", "kl"):
        assert half[name] == pytest.approx(reference[name], rel=0.02, abs=1e-3), name
    assert torch.nn.functional.cosine_similarity(half_grad, reference_grad, dim=0) > 0.99


# --- micro-batches: gradient accumulation under a physical batch size ----------------------------


@pytest.mark.parametrize(
    "group_rows, most_rows, expected",
    [
        ([1, 1, 1, 1, 1], 2, [(0, 2), (2, 4), (4, 5)]),
        ([1, 1, 1], None, [(0, 3)]),
        ([1, 1, 1], 8, [(0, 3)]),
        ([2, 2, 3, 1], 4, [(0, 4), (4, 8)]),  # units kept whole: 2 + 2, then 3 + 1
        ([2, 5, 1], 4, [(0, 2), (2, 7), (7, 8)]),  # a unit of 5 rows goes alone
        ([], 2, []),
    ],
)
def test_micro_batches_take_whole_groups_up_to_the_physical_size(group_rows, most_rows, expected):
    from plainsight.training.examples import micro_batches

    assert micro_batches(group_rows, most_rows) == expected


def test_a_micro_batch_holds_a_row_at_least():
    from plainsight.training.examples import micro_batches

    with pytest.raises(ValueError, match="at least one row"):
        micro_batches([1, 1], 0)


# Three documents of different lengths and private shares: a micro-batch's own token means would weigh
# them differently from the batch's, so only the batch's counts give the batch's gradient.
ACCUMULATED_TEXTS = [
    (TEXT, ["Cengiz Polat"]),
    ("Ms Nina Holst of Oslo complained.", ["Nina Holst", "Oslo"]),
    ("The Government contested the claim in a long memorial of several pages and annexes.", []),
]


@pytest.mark.parametrize("masked, objective", [(False, "paper"), (True, "paper"), (True, "reference_code")])
def test_accumulated_micro_batches_give_the_whole_batchs_gradient(learning_model_dir, masked, objective):
    """Known answer: the prefix gradient and loss terms of one batch of three, passed whole or in
    micro-batches of one or two sequences (padded to the batch's width), agree to float rounding, and
    differ from micro-batches each normalised by its own tokens."""
    from plainsight.training.loop import Backprop, batch_loss
    from plainsight.training.prefix import prefix_model

    model, tokenizer = load_model(learning_model_dir)
    adapter = prefix_model(model, tokenizer, 4, "The Court held a hearing.")
    (prefix,) = [p for p in adapter.parameters() if p.requires_grad]
    examples = [
        build_example((f"d{n}", 0), CODE, text, values, tokenizer, 64)
        for n, (text, values) in enumerate(ACCUMULATED_TEXTS)
    ]
    batch = collate(examples, tokenizer.pad_token_id)
    settings = TrainingSettings(1, 1e-2, 3, 64, masked=masked, objective=objective)

    def step(physical_batch_size):
        adapter.zero_grad(set_to_none=True)
        strategy = Backprop(physical_batch_size)
        strategy.prepare(adapter, None, examples, settings, 0, tokenizer.pad_token_id)
        return strategy.backward(adapter, batch), prefix.grad.clone()

    (whole, whole_grad), *split = step(None), step(1), step(2)
    for record, grad in split:
        torch.testing.assert_close(grad, whole_grad, rtol=1e-4, atol=1e-6 * whole_grad.abs().max().item())
        for name in ("loss", "lm", "contrastive", "kl") if masked else ("loss",):
            assert record[name] == pytest.approx(whole[name], rel=1e-5, abs=1e-7), name
        assert (record["tokens"], record["private_share"]) == (whole["tokens"], whole["private_share"])

    adapter.zero_grad(set_to_none=True)
    for row in range(3):  # each micro-batch normalised by its own counts: not the batch's gradient
        part = {name: tensor[row : row + 1] for name, tensor in batch.items()}
        (batch_loss(adapter, part, masked, settings.lambdas, objective)["loss"] / 3).backward()
    assert not torch.allclose(prefix.grad, whole_grad, rtol=1e-2, atol=0)


def test_training_in_micro_batches_ends_where_the_whole_batches_do(learning_model_dir):
    """Two epochs of batches of two, whole or one sequence at a time: the same steps, losses and prefix
    to float rounding (AdamW after the same gradients)."""
    from plainsight.training.loop import Backprop
    from plainsight.training.prefix import prefix_model

    runs = []
    for physical_batch_size in (None, 1):
        model, tokenizer = load_model(learning_model_dir)
        adapter = prefix_model(model, tokenizer, 4, "The Court held a hearing.")
        examples = [
            build_example((f"d{n}", 0), CODE, text, values, tokenizer, 64)
            for n, (text, values) in enumerate(ACCUMULATED_TEXTS)
        ]
        settings = TrainingSettings(2, 1e-2, 2, 64, masked=True)
        history = fit(adapter, examples, settings, 5, tokenizer.pad_token_id, Backprop(physical_batch_size))
        runs.append(
            (
                [h["loss"] for h in history],
                [p.detach().clone() for p in adapter.parameters() if p.requires_grad],
            )
        )
    (losses, prefix), (split_losses, split_prefix) = runs
    assert len(losses) == len(split_losses) == 4
    assert split_losses == pytest.approx(losses, rel=1e-5)
    for whole, split in zip(prefix, split_prefix):
        torch.testing.assert_close(split, whole, rtol=1e-4, atol=1e-6)
