"""Seeded generation in length-sorted groups; per-document blocking; regeneration bookkeeping.

The tiny randomly initialised Llama checks the mechanics in a second; its output head can be
given a bias so that chosen tokens dominate. The embedded SmolLM2 shows, on a prompt that makes
it copy a name, that the copy happens without blocking and that the processor alone stops it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from types import SimpleNamespace

import pytest
import torch

from conftest import GPU, device
from plainsight.code_runs import CodeRuns
from plainsight.generation.params import GenerationSettings, generation_params
from plainsight.generation.runner import (
    Generator,
    Request,
    Result,
    SamplingSettings,
    document_seed,
    length_sorted_groups,
    shard_positions,
)
from plainsight.generation.slots import Row
from plainsight.matching import leaked_values
from plainsight.methods.registry import method
from plainsight.models import load_model

SETTINGS = SamplingSettings(max_new_tokens=12, temperature=1.0, top_p=0.95, batch_size=2, group_size=4)
PROMPTS = [
    "### Private details\nPERSON: Mr Cengiz Polat\nLOC: Ankara\n### Document\nThe applicant, Mr Cengiz Polat,"
    " was born in 1960 and lives in Ankara.\n\n### Private details\nPERSON: Ms Dana Hayes\n### Document\n",
    "### Document\nThe Court\n\n### Document\n",
    "### Document\nThe Government argued that the applicant had not exhausted domestic remedies.\n\n"
    "### Document\n",
    "### Document\nThe",
    "### Private details\n(none)\n### Document\nOn 3 June 2001 the Court of Cassation upheld the decision."
    "\n\n### Private details\n(none)\n### Document\n",
]


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    model, tokenizer = load_model(tiny_model_dir)
    return model, tokenizer


def biased_model(model_dir, token_bias: dict[str, float]):
    """The tiny model with an output bias that makes the given tokens far likelier than the rest."""
    model, tokenizer = load_model(model_dir)
    head = torch.nn.Linear(model.lm_head.in_features, model.lm_head.out_features, bias=True)
    with torch.no_grad():
        head.weight.copy_(model.lm_head.weight)
        head.bias.zero_()
        for token, bias in token_bias.items():
            head.bias[tokenizer.convert_tokens_to_ids(token)] = bias
    model.lm_head = head
    return model, tokenizer


# --- the tiny model -----------------------------------------------------------------------------


def test_load_model_sets_up_left_padding(tiny, tiny_tokenizer):
    model, tokenizer = tiny
    assert tokenizer.padding_side == "left"
    assert tokenizer.pad_token_id is not None
    assert len(tokenizer) == len(tiny_tokenizer)
    assert not model.training


def test_same_seed_same_texts_other_seed_other_texts(tiny):
    model, tokenizer = tiny
    requests = [Request(p) for p in PROMPTS]
    first = Generator(model, tokenizer, SETTINGS).run(requests, seed=7)
    again = Generator(model, tokenizer, SETTINGS).run(requests, seed=7)
    other = Generator(model, tokenizer, SETTINGS).run(requests, seed=8)
    assert [r.text for r in first] == [r.text for r in again]
    assert [r.new_tokens for r in first] == [r.new_tokens for r in again]
    assert [r.text for r in first] != [r.text for r in other]


def test_results_keep_request_order_and_counts(tiny):
    model, tokenizer = tiny
    requests = [Request(p) for p in PROMPTS]
    results = Generator(model, tokenizer, SETTINGS).run(requests, seed=1)
    assert len(results) == len(requests)
    for request, result in zip(requests, results):
        assert isinstance(result, Result)
        assert result.prompt_tokens == len(tokenizer(request.prompt, add_special_tokens=False).input_ids)
        assert 0 <= result.new_tokens <= SETTINGS.max_new_tokens
        assert "###" not in result.text
        assert result.text == result.text.strip()
        assert result.regenerations == 0
        assert result.leaked_blocked == []
    assert len({r.prompt_tokens for r in results}) == len(PROMPTS)  # the prompts really differ in length


def test_batching_does_not_mix_up_rows(tiny):
    """Near-greedy decoding: each prompt gets the same text alone as in a batch of three slots."""
    model, tokenizer = tiny
    # few tokens: the random model's logits are nearly tied, and batching changes them by rounding noise
    greedy = SamplingSettings(max_new_tokens=4, temperature=1e-4, top_p=1.0, batch_size=1)
    requests = [Request(p) for p in PROMPTS]
    alone = [Generator(model, tokenizer, greedy).run([r], seed=0)[0].text for r in requests]
    together = Generator(model, tokenizer, SamplingSettings(4, 1e-4, 1.0, batch_size=3)).run(requests, seed=0)
    assert [r.text for r in together] == alone
    assert len(set(alone)) > 1  # different prompts, different continuations: an order mix-up would show


def test_a_document_samples_the_same_text_alone_as_in_a_batch(tiny):
    """Each document draws from its own generator over its own nucleus: batching changes nothing."""
    model, tokenizer = tiny
    requests = [Request(p) for p in PROMPTS]
    alone = [
        Generator(model, tokenizer, replace(SETTINGS, batch_size=1)).run([r], seed=4, ids=[n])[0].text
        for n, r in enumerate(requests)
    ]
    together = Generator(model, tokenizer, SETTINGS).run(requests, seed=4)
    assert [r.text for r in together] == alone
    assert len(set(alone)) == len(alone)


@pytest.mark.parametrize(
    "placement",
    [
        pytest.param(("cpu", torch.float32), id="cpu-float32"),
        pytest.param(("cpu", torch.bfloat16), id="cpu-bfloat16"),
        pytest.param(("cuda", torch.float32), id="cuda-float32", marks=GPU),
        pytest.param(("cuda", torch.bfloat16), id="cuda-bfloat16", marks=GPU),
    ],
)
def test_slots_stay_full_across_group_boundaries(tiny_model_dir, placement, monkeypatch):
    """Groups of 2 prompts, 3 slots: a freed slot takes the next prompt whichever group it is in, so the
    batch holds 3 rows at every step until the queue runs empty. Each document draws one block of random
    numbers (not one per step) and, in float32, writes the text it writes alone."""
    name, dtype = placement
    model, tokenizer = load_model(tiny_model_dir, device(name), dtype)
    decoders, draws = [], []
    make_decoder, rand = Generator.decoder, torch.rand
    monkeypatch.setattr(
        Generator,
        "decoder",
        lambda generator, *args: decoders.append(make_decoder(generator, *args)) or decoders[-1],
    )
    monkeypatch.setattr(torch, "rand", lambda *args, **kwargs: draws.append(args) or rand(*args, **kwargs))
    settings = replace(SETTINGS, batch_size=3, group_size=2)
    requests = [Request(p) for p in PROMPTS * 2]
    together = Generator(model, tokenizer, settings).run(requests, seed=4)

    occupancy = decoders[0].occupancy
    assert occupancy[0] == 3 > settings.group_size
    assert occupancy == sorted(occupancy, reverse=True)  # full until the queue ran empty, then rows leave
    # every token but the prefills' first ones and those of the last two rows was drawn in a full step
    tail = len(requests) + 2 * settings.max_new_tokens
    assert 3 * occupancy.count(3) >= sum(r.new_tokens for r in together) - tail > 0
    assert len(draws) == len(requests) < len(occupancy)  # one block per document, none per step
    monkeypatch.setattr(torch, "rand", rand)
    if dtype == torch.float32:  # bfloat16 rounds differently in other batches
        alone = [
            Generator(model, tokenizer, replace(settings, batch_size=1)).run([r], seed=4, ids=[n])[0].text
            for n, r in enumerate(requests)
        ]
        assert [r.text for r in together] == alone


class ScriptedDecoder:
    """Stands in for the slot decoder: each row's text comes from `script(attempt, prompt, generator)`;
    rows are decoded one by one in queue order, a retry before the rows still queued, as the slots take
    them."""

    def __init__(self, script, monkeypatch, tokenizer):
        self.groups: list[list[str]] = []  # the prompts of each `run`
        self.calls: list[tuple[str, int]] = []  # (prompt, attempt) in decoding order
        decoder = self

        class Fake:
            device = torch.device("cpu")
            slots = 1
            occupancy = ()  # read by the runner's statistics; the fake decodes no batch

            def run(self, rows, on_finished):
                decoder.groups.append([tokenizer.decode(row.prompt_ids) for row in rows])
                queue = deque(rows)
                while queue:
                    row: Row = queue.popleft()
                    prompt = tokenizer.decode(row.prompt_ids)
                    decoder.calls.append((prompt, row.key.attempt))
                    text = script(row.key.attempt, prompt, row.generator)
                    row.generated = [
                        *tokenizer(text, add_special_tokens=False).input_ids,
                        tokenizer.eos_token_id,
                    ]
                    retry = on_finished(row)
                    if retry is not None:
                        queue.appendleft(retry)

        monkeypatch.setattr(Generator, "decoder", lambda generator, longest_prompt, prompts: Fake())


def test_prompts_are_decoded_by_length_in_one_queue_and_results_mapped_back(monkeypatch, tiny_tokenizer):
    fake = ScriptedDecoder(lambda attempt, prompt, generator: f"echo {prompt}", monkeypatch, tiny_tokenizer)
    prompts = ["a b c d e f g", "a", "a b c", "a b c d e", "a b", "a b c d"]
    settings = SamplingSettings(max_new_tokens=5, temperature=1.0, top_p=1.0, batch_size=2, group_size=4)
    results = Generator(None, tiny_tokenizer, settings).run([Request(p) for p in prompts], seed=0)
    # one queue across the groups of 4: a slot freed in one group takes a prompt of the next
    assert fake.groups == [["a", "a b", "a b c", "a b c d", "a b c d e", "a b c d e f g"]]
    assert [r.text for r in results] == [f"echo {p}" for p in prompts]
    lengths = [len(tiny_tokenizer(p, add_special_tokens=False).input_ids) for p in prompts]
    assert [r.prompt_tokens for r in results] == lengths
    assert [r.new_tokens for r in results] == [
        len(tiny_tokenizer(f"echo {p}", add_special_tokens=False).input_ids) + 1 for p in prompts
    ]  # with the end-of-sequence token


def test_generation_stops_at_the_next_header(tiny_model_dir):
    model, tokenizer = biased_model(tiny_model_dir, {"ĠPolat": 8.0, "###": 9.0})
    results = Generator(model, tokenizer, SETTINGS).run([Request(PROMPTS[1]), Request(PROMPTS[3])], seed=0)
    for result in results:
        assert "#" not in result.text
        assert result.new_tokens < SETTINGS.max_new_tokens  # the stop string ended it early


def test_blocking_is_per_row_and_whole_word(tiny_model_dir):
    """' Polat' and ' Pola'+'t' are strongly preferred; blocked rows write ' Polatli' (another word)
    instead."""
    model, tokenizer = biased_model(
        tiny_model_dir, {"ĠPolat": 20.0, "ĠPola": 19.0, "t": 19.0, "ĠPolatli": 18.0}
    )
    settings = SamplingSettings(max_new_tokens=10, temperature=1.0, top_p=0.95, batch_size=2)
    prompt = PROMPTS[0]
    requests = [
        Request(prompt, ["Polat"]),
        Request(prompt),
        Request(prompt, ["Cengiz Polat", "polat"]),
        Request(prompt),
    ]
    results = Generator(model, tokenizer, settings).run(requests, seed=3)

    unblocked = [results[1], results[3]]
    assert all(leaked_values(r.text, ["Polat"]) == ["Polat"] for r in unblocked), [r.text for r in unblocked]
    blocked = [results[0], results[2]]
    for result in blocked:
        assert leaked_values(result.text, ["Polat"]) == [], result.text
        assert "polat" not in result.text.lower().replace("polatli", "")
        assert "Polatli" in result.text  # whole-word blocking leaves the longer word alone
        assert result.leaked_blocked == []
        assert result.regenerations == 0


# --- regeneration bookkeeping (no model) --------------------------------------------------------


def test_regenerates_only_leaking_rows_in_the_next_free_slot(monkeypatch, tiny_tokenizer):
    def script(attempt, prompt, generator):
        if prompt == "b" and attempt == 0:
            return "The applicant, Mr Cengiz POLAT, complained."
        return f"Clean text {prompt} {attempt}."

    fake = ScriptedDecoder(script, monkeypatch, tiny_tokenizer)
    settings = SamplingSettings(
        max_new_tokens=5, temperature=1.0, top_p=1.0, batch_size=2, max_regenerations=3, group_size=2
    )
    requests = [Request("a", ["Polat"]), Request("b", ["Cengiz Polat", "Polat"]), Request("c")]
    results = Generator(None, tiny_tokenizer, settings).run(requests, seed=0)

    # a retry takes the next free slot, before the prompts still queued
    assert fake.calls == [("a", 0), ("b", 0), ("b", 1), ("c", 0)]
    assert [r.text for r in results] == ["Clean text a 0.", "Clean text b 1.", "Clean text c 0."]
    assert [r.regenerations for r in results] == [0, 1, 0]
    assert [r.leaked_blocked for r in results] == [[], [], []]


def test_always_leaking_row_is_kept_after_the_last_attempt(monkeypatch, tiny_tokenizer):
    def script(attempt, prompt, generator):
        return "Mr Polat again." if prompt == "leaky" else "Nothing private."

    fake = ScriptedDecoder(script, monkeypatch, tiny_tokenizer)
    settings = SamplingSettings(
        max_new_tokens=5, temperature=1.0, top_p=1.0, batch_size=2, max_regenerations=2
    )
    requests = [Request("fine", ["Polat"]), Request("leaky", ["Cengiz Polat", "Polat"])]
    results = Generator(None, tiny_tokenizer, settings).run(requests, seed=0)

    assert len(results) == 2
    assert fake.calls == [("fine", 0), ("leaky", 0), ("leaky", 1), ("leaky", 2)]
    assert results[1].text == "Mr Polat again."
    assert results[1].regenerations == settings.max_regenerations
    assert results[1].leaked_blocked == ["Polat"]
    assert results[0].regenerations == 0 and results[0].leaked_blocked == []


def test_near_variants_of_blocked_values_are_regenerated(monkeypatch, tiny_tokenizer):
    texts = {
        0: "The applicant, Mr Cengiz Polatt, complained.",  # a variant of a blocked name word
        1: "The applicant lodged no. 40593/02.",  # one digit of a blocked code
        2: "Clean text.",
    }

    fake = ScriptedDecoder(
        lambda attempt, prompt, generator: (
            texts[min(attempt, 2)] if prompt == "a" else ("The Carer said." if attempt == 0 else "Fine.")
        ),
        monkeypatch,
        tiny_tokenizer,
    )
    settings = SamplingSettings(
        max_new_tokens=5, temperature=1.0, top_p=1.0, batch_size=2, max_regenerations=3
    )
    requests = [Request("a", ["Cengiz Polat", "Polat", "40593/04"]), Request("b", ["Carter"])]
    results = Generator(None, tiny_tokenizer, settings, common_words=frozenset({"carer"})).run(
        requests, seed=0
    )
    assert fake.calls == [("a", 0), ("a", 1), ("a", 2), ("b", 0)]  # a retry takes the next free slot
    assert [r.regenerations for r in results] == [2, 0]  # "Carer" is an ordinary word of the corpus
    assert results[0].text == "Clean text."


def test_a_blocked_digit_run_under_another_prefix_is_regenerated(monkeypatch, tiny_tokenizer):
    texts = {0: "Seen under case LY-2022-8363.", 1: "Seen under case LY 2022 / 83 63 again.", 2: "Seen."}
    fake = ScriptedDecoder(
        lambda attempt, prompt, generator: texts[min(attempt, 2)], monkeypatch, tiny_tokenizer
    )
    settings = SamplingSettings(
        max_new_tokens=5, temperature=1.0, top_p=1.0, batch_size=1, max_regenerations=1
    )
    request = Request("a", ["XXX-2022-8363"], digit_runs=["20228363"])
    results = Generator(None, tiny_tokenizer, settings).run([request], seed=0)
    assert fake.calls == [("a", 0), ("a", 1)]
    # the last attempt still holds it: kept, and recorded
    assert results[0].regenerations == 1 and results[0].leaked_blocked == ["20228363"]


def test_without_regenerations_a_leak_is_only_recorded(monkeypatch, tiny_tokenizer):
    fake = ScriptedDecoder(lambda attempt, prompt, generator: "mr cengiz polat", monkeypatch, tiny_tokenizer)
    settings = SamplingSettings(max_new_tokens=5, temperature=1.0, top_p=1.0, batch_size=2)
    results = Generator(None, tiny_tokenizer, settings).run([Request("x", ["Cengiz Polat"])], seed=0)
    assert len(fake.calls) == 1
    assert results[0].regenerations == 0
    assert results[0].leaked_blocked == ["Cengiz Polat"]


# --- shards: whole groups of the full run; each document seeded by its own id -------------------


@pytest.mark.parametrize("group_size", [1, 2, 3, 4])
@pytest.mark.parametrize("shards", [1, 2, 3, 7, 40])
def test_shards_split_the_full_run_into_its_own_groups(group_size, shards):
    import random

    rng = random.Random(group_size * 100 + shards)
    lengths = [rng.randint(1, 6) for _ in range(23)]  # many ties: the generation id orders them
    ids = rng.sample(range(1000), len(lengths))
    full = length_sorted_groups(lengths, ids, group_size)
    parts = [shard_positions(lengths, ids, group_size, shard, shards) for shard in range(shards)]
    assert sorted(p for part in parts for p in part) == list(range(len(lengths)))  # each generation once
    for part in parts:
        assert part == sorted(part)
        # the shard's own grouping, mapped back to positions of the full run, gives groups of the full run
        own = length_sorted_groups([lengths[p] for p in part], [ids[p] for p in part], group_size)
        assert all([part[i] for i in group] in full for group in own)
    assert parts[0] == list(range(len(lengths))) if shards == 1 else len(parts[0]) < len(lengths)


def test_document_seed_is_fixed_by_seed_attempt_and_generation():
    seeds = {
        document_seed(seed, attempt, generation)
        for seed in (1, 2)
        for attempt in (0, 1)
        for generation in (3, 4)
    }
    assert len(seeds) == 8
    assert document_seed(1, 0, 3) == document_seed(1, 0, 3)
    assert all(0 <= seed < 2**63 for seed in seeds)


def shard_results(generator: Generator, requests: list[Request], ids: list[int], shards: int) -> list[Result]:
    """The results of every shard, put back in request order."""
    results: list[Result | None] = [None] * len(requests)
    for shard in range(shards):
        positions, part = generator.run_shard(requests, ids, seed=5, shard=shard, shards=shards)
        for position, result in zip(positions, part):
            results[position] = result
    return results


def test_shards_sample_the_same_texts_as_the_full_run(tiny):
    model, tokenizer = tiny
    requests = [Request(p) for p in PROMPTS * 2]
    ids = [7 * n + 3 for n in range(len(requests))]
    generator = Generator(model, tokenizer, SETTINGS)
    full = generator.run(requests, seed=5, ids=ids)
    assert shard_results(generator, requests, ids, shards=3) == full
    assert len({r.text for r in full}) > 2


def test_shards_regenerate_as_the_full_run(monkeypatch, tiny_tokenizer):
    """Each attempt draws from its own seed, so a shard repeats the regenerations exactly."""

    def script(attempt, prompt, generator):
        draw = int(torch.randint(0, 3, (1,), generator=generator))  # the attempt's own seed decides
        return "Mr Polat wrote." if draw == 0 else f"Clean {draw}."

    ScriptedDecoder(script, monkeypatch, tiny_tokenizer)
    settings = SamplingSettings(
        max_new_tokens=5, temperature=1.0, top_p=1.0, batch_size=3, max_regenerations=2, group_size=3
    )
    requests = [Request(f"prompt {'x ' * (n % 4)}{n}", ["Polat"] if n % 2 else []) for n in range(17)]
    ids = list(range(100, 117))
    generator = Generator(None, tiny_tokenizer, settings)
    full = generator.run(requests, seed=5, ids=ids)
    assert any(r.regenerations for r in full)
    assert shard_results(generator, requests, ids, shards=3) == full
    assert generator.run(requests, seed=6, ids=ids) != full


# --- the embedded model -------------------------------------------------------------------------

COPY_DOCUMENT = (
    "### Document\nThe applicant, Mr Cengiz Polat, lodged an application. "
    "Mr Cengiz Polat was represented by counsel.\n\n"
)
COPY_PROMPT = COPY_DOCUMENT * 3 + "### Document\nThe applicant, Mr"
BLOCKED = ["Cengiz Polat", "Polat", "Cengiz"]


@pytest.fixture(scope="module")
def embedded(embedded_model_dir):
    return load_model(embedded_model_dir)


def copy_settings(max_regenerations: int) -> SamplingSettings:
    return SamplingSettings(
        max_new_tokens=24,
        temperature=0.7,
        top_p=0.9,
        batch_size=2,
        max_regenerations=max_regenerations,
        group_size=4,
    )


@pytest.mark.embedded
def test_embedded_model_copies_the_name_without_blocking(embedded):
    model, tokenizer = embedded
    results = Generator(model, tokenizer, copy_settings(0)).run(
        [Request(COPY_PROMPT) for _ in range(4)], seed=0
    )
    copied = [r for r in results if "Polat" in leaked_values(r.text, BLOCKED)]
    assert copied, [r.text for r in results]  # the prompt does make the model leak


@pytest.mark.embedded
def test_embedded_processor_alone_blocks_the_name(embedded):
    model, tokenizer = embedded
    requests = [Request(COPY_PROMPT, list(BLOCKED)) for _ in range(4)]
    results = Generator(model, tokenizer, copy_settings(0)).run(requests, seed=0)
    for result in results:
        assert leaked_values(result.text, BLOCKED) == [], result.text
        assert "polat" not in result.text.lower().split(), result.text
        assert result.regenerations == 0
        assert result.new_tokens > 0  # it did write something else
    # exact blocking alone leaves near variants ("Cengis Polats"): the tests below block those too


@pytest.mark.embedded
def test_embedded_blocking_with_regenerations_leaves_no_leak(embedded):
    model, tokenizer = embedded
    near_words = ["Cengiz", "Polat"]
    requests = [
        Request(COPY_PROMPT, list(BLOCKED), near_words),
        Request(COPY_PROMPT),
        Request(COPY_PROMPT, list(BLOCKED), near_words),
        Request(COPY_PROMPT),
    ]
    results = Generator(model, tokenizer, copy_settings(3)).run(requests, seed=0)
    for result in (results[0], results[2]):
        assert result.leaked_blocked == []
        assert leaked_values(result.text, BLOCKED) == [], result.text
    # rows without blocked values in the same batch are not affected by their neighbours' blocking
    assert any(leaked_values(r.text, ["Polat"]) for r in (results[1], results[3])), [r.text for r in results]


@pytest.mark.embedded
def test_embedded_processor_blocks_a_name_with_byte_split_characters(embedded):
    """'Ş' is two byte-level tokens in SmolLM2 (' Å' + 'ŀ'), each decoding to U+FFFD on its own.

    Turkish names are common in the ECHR documents; the processor must still block them.
    """
    model, tokenizer = embedded
    document = (
        "### Document\nThe applicant, Mr Mehmet Şahin, lodged an application. "
        "Mr Mehmet Şahin was represented by counsel.\n\n"
    )
    prompt = document * 3 + "### Document\nThe applicant, Mr"
    blocked = ["Mehmet Şahin", "Şahin", "Mehmet"]
    copied = Generator(model, tokenizer, copy_settings(0)).run([Request(prompt) for _ in range(2)], seed=0)
    assert any("Şahin" in leaked_values(r.text, blocked) for r in copied)  # it copies without blocking
    results = Generator(model, tokenizer, copy_settings(0)).run(
        [Request(prompt, blocked) for _ in range(2)], seed=0
    )
    assert [leaked_values(r.text, blocked) for r in results] == [[], []], [r.text for r in results]


# Prompts that make the model copy a value: a list repeating a name, a sentence that stops right
# before a surname, an application number written out again; (type, value) of what each shows.
COPYING = [
    (
        "### Document\nPresent at the hearing: Mr Jonas Brekkestad, Mr Jonas Brekkestad and "
        "Mr Jonas Brekkestad.\n\n### Document\nPresent at the hearing: Mr Jonas",
        [("PERSON", "Mr Jonas Brekkestad")],
    ),
    (
        "### Document\nThe applicant, Ms Ingrid Sørvik-Tveit, was born in Tromsø. Ms Ingrid Sørvik-Tveit "
        "complained.\n\n### Document\nThe applicant, Ms Ingrid",
        [("PERSON", "Ms Ingrid Sørvik-Tveit"), ("LOC", "Tromsø")],
    ),
    (
        "### Document\nThe case originated in an application (no. 51234/07) lodged with the Court. "
        "Application no. 51234/07 was communicated.\n\n### Document\n"
        "The case originated in an application (no.",
        [("CODE", "51234/07")],
    ),
]


def copy_leaks(text: str, entities: list[tuple[str, str]]) -> list[str]:
    """Exact, partial and near leaks of `entities` in `text`, as the privacy metrics count them."""
    from plainsight.matching import NearMatcher, name_words

    values = [value for _, value in entities]
    return NearMatcher([*values, *name_words([v for t, v in entities if t == "PERSON"])]).found(text)


@pytest.mark.embedded
def test_embedded_blocking_of_values_and_parts_stops_exact_partial_and_near_copies(embedded):
    from plainsight.methods.in_context import Blocking

    model, tokenizer = embedded
    prompts = [prompt for prompt, _ in COPYING for _ in range(4)]
    shown = [entities for _, entities in COPYING for _ in range(4)]
    unblocked = Generator(model, tokenizer, copy_settings(0)).run([Request(p) for p in prompts], seed=0)
    copied = [copy_leaks(r.text, e) for r, e in zip(unblocked, shown)]
    assert sum(map(bool, copied)) >= 6, [r.text for r in unblocked]  # the prompts do make it copy
    blocking = Blocking("values_and_parts")
    requests = [
        Request(p, list(blocking.blocked([e])), list(blocking.near_words([e])))
        for p, e in zip(prompts, shown)
    ]
    results = Generator(model, tokenizer, copy_settings(3)).run(requests, seed=0)
    assert [copy_leaks(r.text, e) for r, e in zip(results, shown)] == [[]] * len(prompts), [
        r.text for r in results
    ]
    assert all(r.new_tokens > 0 for r in results)


def test_sampling_settings_regenerate_only_for_icl_pe():
    generation = GenerationSettings(
        max_new_tokens=64, top_p=0.9, batch_size=4, group_size=16, temperature=0.7, max_regenerations=3
    )
    assert SamplingSettings.from_generation(generation, method("icl_pe")) == SamplingSettings(
        64, 0.7, 0.9, 4, 3, 16
    )
    for name in ("baseline", "icl", "ft", "dpsgd"):
        assert SamplingSettings.from_generation(generation, method(name)).max_regenerations == 0


# a `generation` config block, as a rule hands parts of it to its job (`generation_params`)
GENERATION_CONFIG = {
    "generations_per_segment": 4,
    "context_documents": 3,
    "max_new_tokens": 64,
    "temperature": 0.7,
    "top_p": 0.9,
    "batch_size": 4,
    "group_size": 32,
    "max_prompt_tokens": 4096,
    "max_regenerations": 3,
    "blocking": "values_and_parts",
    "threads": 1,
    "shards": 2,
}
SAMPLING_PARAMS = {"max_new_tokens": 64, "temperature": 0.7, "top_p": 0.9, "batch_size": 4, "group_size": 32}
CODE_RUNS = {"entity_types": ["CODE"], "min_digits": 4}
# the settings as a rule reads them: the generation block, and the code runs a blocking method blocks
RULE_CONFIG = SimpleNamespace(
    generation=SimpleNamespace(**GENERATION_CONFIG),
    metrics=SimpleNamespace(code_runs=CodeRuns(frozenset({"CODE"}), 4)),
)


def test_generation_params_hold_only_what_the_method_reads():
    generation, sampling = RULE_CONFIG, SAMPLING_PARAMS
    assert generation_params(method("ft_mask"), generation, "corpus") == sampling
    assert generation_params(method("icl"), generation, "corpus") == {
        **sampling,
        "context_documents": 3,
        "max_prompt_tokens": 4096,
        "generations_per_segment": 4,
    }
    assert generation_params(method("icl_pe.large"), generation, "mauve") == {
        **sampling,
        "context_documents": 3,
        "max_prompt_tokens": 4096,
        "max_regenerations": 3,
        "blocking": "values_and_parts",
        "code_runs": CODE_RUNS,
    }


def test_a_job_reads_its_generation_params_as_settings():
    icl_pe = GenerationSettings.from_params(generation_params(method("icl_pe"), RULE_CONFIG, "corpus"))
    assert icl_pe == GenerationSettings(
        **SAMPLING_PARAMS,
        max_prompt_tokens=4096,
        context_documents=3,
        generations_per_segment=4,
        max_regenerations=3,
        blocking="values_and_parts",
        code_runs=CODE_RUNS,
    )
    trained = GenerationSettings.from_params(generation_params(method("ft"), RULE_CONFIG, "corpus"))
    assert trained == GenerationSettings(**SAMPLING_PARAMS)
    assert trained.generations_per_segment is None
    with pytest.raises(TypeError, match="threads"):
        GenerationSettings.from_params(GENERATION_CONFIG)


def test_a_corpus_records_the_device_and_dtype_it_was_decoded_in(tiny_model_dir, caplog):
    from plainsight.generation.corpus import CORPUS_COLUMNS, generate_corpus
    from plainsight.methods.planned import PlannedGeneration

    model, tokenizer = load_model(tiny_model_dir, dtype=torch.bfloat16)
    planned = [PlannedGeneration(n, 0, (), (), (), f"PERSON: Mr Cengiz Polat {n}", (), ()) for n in range(3)]
    generation = GenerationSettings(
        max_new_tokens=6, top_p=0.9, batch_size="auto", group_size=2, temperature=1.0
    )
    with caplog.at_level("INFO", logger="plainsight.generation"):
        frame = generate_corpus("ft", 1, planned, model, tokenizer, generation)
    assert list(frame.columns) == list(CORPUS_COLUMNS)
    assert frame["device"].tolist() == ["cpu"] * 3 and frame["dtype"].tolist() == ["bfloat16"] * 3
    # the default 4, at most the run's prompts (a group of 2 no longer caps it: slots cross groups)
    assert "generation.batch_size: auto: 3 slots on the CPU" in caplog.text
