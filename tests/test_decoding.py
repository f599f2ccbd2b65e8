"""Continuous batching against `generate`: the same greedy tokens, prompt by prompt.

Two slots for seven prompts of different lengths force every path: prompts prefilled into
slots freed mid-run, rows finishing at different steps, the window moving to the buffer's
front, and rows leaving the batch at the end. A tiny Gemma 3 with a 4-token sliding window
checks that sliding-window layers see the same keys as in `generate`. The tiny Llama runs in
float32 and bfloat16, on the CPU and (tests marked `gpu`) on CUDA, where every tensor the decoder
and the sampler make must be on the model's device, in its dtype or in float32 for sampling, and
the banned tokens are copied there only when they change.
"""

from __future__ import annotations

import pytest
import torch

from conftest import GPU, device
from plainsight.generation import slots as decoding
from plainsight.generation.sampling import NucleusSampler
from plainsight.generation.slots import Row, SlotDecoder
from plainsight.models import load_model

PROMPTS = [
    "### Document\nThe",
    "### Private details\nPERSON: Mr Cengiz Polat\nLOC: Ankara\n### Document\n"
    "The applicant, Mr Cengiz Polat,",
    "### Document\nThe Government argued that the applicant had not exhausted domestic remedies.\n\n"
    "### Document\n",
    "The Court",
    "### Private details\n(none)\n### Document\nOn 3 June 2001 the Court of Cassation upheld the decision.",
    "The applicant was born in 1960 and lives in Ankara.",
    "PERSON: Ms Dana Hayes\n### Document\n",
]
GREEDY = NucleusSampler(temperature=1.0, top_p=1e-9)  # the nucleus is the single most probable token
NEVER = "\x00never\x00"  # a stop string no text holds: runs end at EOS or the token limit, as in `generate`


PLACEMENTS = [
    pytest.param(("cpu", torch.float32), id="cpu-float32"),
    pytest.param(("cpu", torch.bfloat16), id="cpu-bfloat16"),
    pytest.param(("cuda", torch.float32), id="cuda-float32", marks=GPU),
    pytest.param(("cuda", torch.bfloat16), id="cuda-bfloat16", marks=GPU),
]


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    return load_model(tiny_model_dir)


@pytest.fixture(scope="module", params=PLACEMENTS)
def placed(request, tiny_model_dir):
    """The tiny Llama on each device and in each dtype."""
    name, dtype = request.param
    return load_model(tiny_model_dir, device(name), dtype)


@pytest.fixture(scope="module")
def tiny_gemma(tiny_model_dir, tiny_tokenizer):
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(0)
    config = Gemma3TextConfig(
        vocab_size=len(tiny_tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        sliding_window=4,
        layer_types=["sliding_attention", "full_attention"],
        max_position_embeddings=1024,
        eos_token_id=tiny_tokenizer.eos_token_id,
        pad_token_id=tiny_tokenizer.pad_token_id,
        bos_token_id=tiny_tokenizer.eos_token_id,
    )
    model = Gemma3ForCausalLM(config).eval()
    _, tokenizer = load_model(tiny_model_dir)
    return model, tokenizer


def reference(model, tokenizer, prompt_ids: list[int], max_new_tokens: int) -> list[int]:
    ids = torch.tensor([prompt_ids], device=model.device)
    with torch.no_grad():
        output = model.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            do_sample=False,
            max_new_tokens=max_new_tokens,
            pad_token_id=tokenizer.pad_token_id,
        )
    return output[0, len(prompt_ids) :].tolist()


def decode_all(
    model, tokenizer, slots: int, max_new_tokens: int, stop_string: str = NEVER
) -> tuple[dict[int, list[int]], list[int], int]:
    """Generated ids by prompt number, the order in which rows finished, and the tokens sampled."""
    rows = [
        Row(
            number,
            tokenizer(p, add_special_tokens=False).input_ids,
            torch.Generator(model.device).manual_seed(0),
        )
        for number, p in enumerate(PROMPTS)
    ]
    finished: dict[int, list[int]] = {}
    order: list[int] = []

    def on_finished(row: Row) -> None:
        finished[row.key] = row.generated
        order.append(row.key)

    decoder = SlotDecoder(model, tokenizer, GREEDY, max_new_tokens, slots, stop_string)
    sampled = decoder.run(rows, on_finished)
    return finished, order, sampled


def staggering_stop_string(tokenizer, references: list[list[int]]) -> str:
    """The text of a token that first appears at different steps of different references, so that
    rows stop at different steps."""
    for token in sorted({t for ids in references for t in ids}):
        text = tokenizer.decode([token]).strip()
        firsts = {ids.index(token) for ids in references if token in ids}
        if (
            len(text) >= 2
            and len(firsts) >= 3
            and all(
                text not in tokenizer.decode(ids[: ids.index(token)]) for ids in references if token in ids
            )
        ):
            return text
    raise AssertionError("no token staggers the references")


def test_slots_give_the_tokens_generate_gives_each_prompt_alone(placed):
    assert_slots_give_the_tokens_of_generate(*placed)


def test_sliding_window_layers_see_the_keys_they_see_in_generate(tiny_gemma):
    assert_slots_give_the_tokens_of_generate(*tiny_gemma)


def assert_slots_give_the_tokens_of_generate(model, tokenizer) -> None:
    references = [
        reference(model, tokenizer, tokenizer(p, add_special_tokens=False).input_ids, 12) for p in PROMPTS
    ]
    stop_string = staggering_stop_string(tokenizer, references)
    finished, order, sampled = decode_all(
        model, tokenizer, slots=2, max_new_tokens=12, stop_string=stop_string
    )
    assert sorted(finished) == list(range(len(PROMPTS)))
    for number, expected in enumerate(references):
        if stop_string in tokenizer.decode(expected):  # generate went on past the stop string
            cut = next(
                k for k in range(1, len(expected) + 1) if stop_string in tokenizer.decode(expected[:k])
            )
            expected = expected[:cut]
        assert finished[number] == expected, number
    assert len({len(ids) for ids in finished.values()}) >= 3  # rows ended at different steps
    assert order != sorted(order)  # so slots were refilled out of step
    assert sampled == sum(len(ids) for ids in finished.values())


def test_the_window_moves_to_the_front_and_rows_leave(tiny, monkeypatch):
    """Long runs with one slot: the window must move several times; the tokens stay those of `generate`."""
    moves: list[int] = []
    original = decoding._Batch.move_window_to_front

    def counted(batch):
        moves.append(batch.end)
        original(batch)

    monkeypatch.setattr(decoding._Batch, "move_window_to_front", counted)
    model, tokenizer = tiny
    finished, _, _ = decode_all(model, tokenizer, slots=3, max_new_tokens=40)
    assert len(moves) >= 2
    for number in (1, 4):
        expected = reference(
            model, tokenizer, tokenizer(PROMPTS[number], add_special_tokens=False).input_ids, 40
        )
        assert finished[number] == expected


def test_rows_leave_the_batch_within_the_cache_buffers(tiny, monkeypatch):
    """Finished rows leave by compacting the cache in place, never through a second copy of it (on a GPU
    `batch_size: auto` leaves no room for one); the tokens stay those of `generate` (the test above)."""
    drops: list[tuple[list[int], list[int], int, int]] = []
    original = decoding._Batch.drop_free_slots

    def recorded(batch):
        rows, before = len(batch.rows), [t.untyped_storage().data_ptr() for t in (*batch.keys, *batch.values)]
        original(batch)
        after = [t.untyped_storage().data_ptr() for t in (*batch.keys, *batch.values)]
        if len(batch.rows) < rows:
            drops.append((before, after, len(batch.rows), batch.keys[0].shape[0]))

    monkeypatch.setattr(decoding._Batch, "drop_free_slots", recorded)
    model, tokenizer = tiny
    decode_all(model, tokenizer, slots=3, max_new_tokens=12)
    assert drops  # rows did leave the batch
    for before, after, rows, buffer_rows in drops:
        assert after == before and buffer_rows == rows


def test_a_row_ends_at_the_stop_string_or_eos(tiny):
    model, tokenizer = tiny
    decoder = SlotDecoder(model, tokenizer, GREEDY, 50, 2, "###")
    row = Row(0, [1, 2], torch.Generator())
    row.generated = tokenizer("The Court held #", add_special_tokens=False).input_ids
    assert not decoder.finished(row)
    row.generated += tokenizer("##", add_special_tokens=False).input_ids
    assert decoder.finished(row)
    row.generated = [5, tokenizer.eos_token_id]
    assert decoder.finished(row)
    row.generated = [5] * 50
    assert decoder.finished(row)


def test_retries_are_queued_and_decoded(tiny):
    model, tokenizer = tiny
    prompt_ids = tokenizer(PROMPTS[2], add_special_tokens=False).input_ids
    seen: list[tuple[int, list[int]]] = []

    def on_finished(row: Row) -> Row | None:
        seen.append((row.key, row.generated))
        if row.key < 3:
            return Row(row.key + 1, prompt_ids, torch.Generator())
        return None

    decoder = SlotDecoder(model, tokenizer, GREEDY, 6, 2, NEVER)
    decoder.run([Row(0, prompt_ids, torch.Generator())], on_finished)
    assert [key for key, _ in seen] == [0, 1, 2, 3]
    assert all(generated == seen[0][1] for _, generated in seen)  # greedy: each retry writes the same


def test_nothing_to_decode(tiny):
    model, tokenizer = tiny
    assert SlotDecoder(model, tokenizer, GREEDY, 6, 2, NEVER).run([], lambda row: None) == 0


class RecordingSampler(NucleusSampler):
    """The greedy sampler, recording the device and dtype of the scores it gets and the ids it draws."""

    def __init__(self):
        super().__init__(temperature=1.0, top_p=1e-9)
        self.seen: set[tuple[torch.device, torch.dtype, torch.device, torch.dtype]] = set()

    def draw(self, scores: torch.Tensor, uniforms: torch.Tensor) -> torch.Tensor:
        drawn = super().draw(scores, uniforms)
        self.seen.add((scores.device, scores.dtype, drawn.device, drawn.dtype))
        return drawn


class BansTokens:
    """Stands in for a value blocker: bans the same tokens at every step."""

    def __init__(self, tokens: set[int]):
        self.tokens = tokens

    def banned(self, generated: list[int]) -> set[int]:
        return self.tokens


def test_decoder_and_sampler_tensors_are_on_the_model_device_in_its_dtype(placed, monkeypatch):
    model, tokenizer = placed
    weight = next(model.parameters())
    batches, logits = [], set()
    original_init, original_sample = decoding._Batch.__init__, decoding._Batch.sample

    def recording_init(batch, *args):
        original_init(batch, *args)
        batches.append(batch)

    def recording_sample(batch, slots, scores):
        logits.add((scores.device, scores.dtype))
        original_sample(batch, slots, scores)

    monkeypatch.setattr(decoding._Batch, "__init__", recording_init)
    monkeypatch.setattr(decoding._Batch, "sample", recording_sample)
    free, _, _ = decode_all(model, tokenizer, slots=3, max_new_tokens=8)
    banned = {token for ids in free.values() for token in ids[:2]}
    sampler = RecordingSampler()
    rows = [
        Row(
            number,
            tokenizer(p, add_special_tokens=False).input_ids,
            torch.Generator(weight.device),
            BansTokens(banned),
        )
        for number, p in enumerate(PROMPTS)
    ]
    finished: dict[int, list[int]] = {}
    SlotDecoder(model, tokenizer, sampler, 8, 3, NEVER).run(
        rows, lambda row: finished.update({row.key: row.generated})
    )
    assert len(finished) == len(PROMPTS)
    assert not banned & {token for ids in finished.values() for token in ids}  # the ban held on the device
    for batch in batches:
        for buffer in (*batch.keys, *batch.values):
            assert (buffer.device, buffer.dtype) == (weight.device, weight.dtype)
        assert (batch.mask.device, batch.mask.dtype) == (weight.device, torch.bool)
        for ids in (batch.positions, batch.last_tokens, batch.used):
            assert (ids.device, ids.dtype) == (weight.device, torch.long)
        assert (batch.uniforms.device, batch.uniforms.dtype) == (weight.device, torch.float32)
        # the banned pairs went to the device once, and again only when rows left the batch, not every step
        assert batch.bans.uploads <= len(set(batch.occupancy)) < len(batch.occupancy)
    assert logits == {(weight.device, weight.dtype)}  # the model's logits, in its dtype
    assert sampler.seen == {(weight.device, torch.float32, weight.device, torch.long)}  # sampled in float32
