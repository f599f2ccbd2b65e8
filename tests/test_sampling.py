"""Nucleus sampling: the same tokens kept and the same distribution as transformers' temperature +
top-p warpers, drawn from a few candidates instead of a full sort, each row with a uniform number of
its own generator, on the CPU and (tests marked `gpu`) on CUDA; the bans of batch slots kept on the
device."""

from __future__ import annotations

import pytest
import torch
from transformers import TemperatureLogitsWarper, TopPLogitsWarper

from conftest import GPU, device
from plainsight.generation.sampling import (
    NucleusSampler,
    SlotBans,
    inverse_transform,
    mask_banned,
    nucleus,
    uniform_block,
)

DEVICES = ["cpu", pytest.param("cuda", marks=GPU)]


def uniforms(count: int, seed: int = 0, on: str = "cpu") -> torch.Tensor:
    """One uniform number per row, each from its own generator, on device `on`."""
    return torch.cat(
        [
            uniform_block(torch.Generator().manual_seed(seed * 1_000_003 + n), 1, device(on))
            for n in range(count)
        ]
    )


@pytest.mark.parametrize("name", DEVICES)
def test_known_nucleus_and_its_frequencies(name):
    # probabilities 0.5, 0.3, 0.15, 0.05 with top_p 0.9: the mass above the third token is 0.8 < 0.9,
    # above the fourth 0.95, so the nucleus is the first three, drawn as 0.5 : 0.3 : 0.15
    logits = torch.log(torch.tensor([0.15, 0.5, 0.05, 0.3], device=device(name))).repeat(40_000, 1)
    drawn = NucleusSampler(temperature=1.0, top_p=0.9, candidates=2).draw(
        logits, uniforms(len(logits), on=name)
    )
    assert (drawn.device, drawn.dtype) == (logits.device, torch.long)
    frequencies = torch.bincount(drawn.cpu(), minlength=4).float() / len(drawn)
    expected = torch.tensor([0.15, 0.5, 0.0, 0.3]) / 0.95
    assert torch.allclose(frequencies, expected, atol=0.01), frequencies
    assert frequencies[2] == 0


def test_one_token_id_per_row():
    drawn = NucleusSampler(0.7, 0.9).draw(torch.randn(5, 300), uniforms(5))
    assert drawn.shape == (5,) and drawn.dtype == torch.long
    assert all(0 <= token < 300 for token in drawn.tolist())


@pytest.mark.parametrize("temperature", [0.3, 0.7, 1.0, 1.5])
def test_kept_tokens_are_those_transformers_keeps(temperature):
    torch.manual_seed(1)
    logits = torch.randn(6, 5000) * 3
    logits[0] = 0.01 * torch.randn(5000)  # nearly flat: the nucleus is most of the vocabulary
    warped = TopPLogitsWarper(0.9)(None, TemperatureLogitsWarper(temperature)(None, logits.clone()))
    probs, token_ids = nucleus(torch.softmax(logits / temperature, -1), 0.9, candidates=16)
    for row in range(len(logits)):
        ours = set(token_ids[row][probs[row] > 0].tolist())
        theirs = set(torch.isfinite(warped[row]).nonzero().flatten().tolist())
        assert ours == theirs
    assert probs.shape[1] > 4000  # the flat row made the candidates grow


@pytest.mark.parametrize("name", DEVICES)
def test_banned_tokens_are_never_drawn(name):
    logits = torch.zeros(2000, 10, device=device(name))
    logits[:, 3] = 5.0  # token 3 would be drawn almost always
    assert (NucleusSampler(1.0, 0.95).draw(logits, uniforms(2000, on=name)) == 3).float().mean() > 0.9
    mask_banned(logits, [{3}] * len(logits))  # what blocking leaves for a banned token
    assert 3 not in NucleusSampler(1.0, 0.95).draw(logits, uniforms(2000, on=name)).tolist()


def test_banned_tokens_are_masked_where_each_row_bans_them():
    scores = torch.zeros(3, 6)
    mask_banned(scores, [{1, 4}, (), [5, 9]])  # 9 is beyond the vocabulary
    assert torch.isinf(scores).nonzero().tolist() == [[0, 1], [0, 4], [2, 5]]
    mask_banned(scores, [(), (), ()])
    assert int(torch.isinf(scores).sum()) == 3


def test_inverse_transform_picks_by_cumulative_weight_and_never_a_zero():
    weights = torch.tensor([[0.5, 0.3, 0.2, 0.0], [0.6, 0.4, 0.0, 0.0]])
    assert inverse_transform(weights, torch.tensor([0.0, 0.0])).tolist() == [0, 0]
    assert inverse_transform(weights, torch.tensor([0.6, 0.7])).tolist() == [1, 1]
    assert inverse_transform(weights, torch.tensor([0.9, 0.3])).tolist() == [2, 0]
    # a uniform at the very top (as rounding can make one) still lands on the last positive weight
    assert inverse_transform(weights, torch.tensor([1.0, 1.0])).tolist() == [2, 1]


def test_top_p_one_draws_from_every_token():
    drawn = NucleusSampler(1.0, 1.0).draw(torch.zeros(3000, 8), uniforms(3000))
    assert set(drawn.tolist()) == set(range(8))


@pytest.mark.parametrize("name", DEVICES)
def test_a_row_draws_the_same_whatever_its_neighbours(name):
    torch.manual_seed(3)
    logits = (torch.randn(16, 1000) * 3).to(device(name))
    logits[5] = 0.01 * torch.randn(1000)  # a flat row: the batch's candidates grow for every row
    sampler = NucleusSampler(0.7, 0.9)
    together = sampler.draw(logits, uniforms(16, seed=4, on=name))
    alone = [
        sampler.draw(logits[n : n + 1], uniforms(16, seed=4, on=name)[n : n + 1]).item() for n in range(16)
    ]
    assert together.tolist() == alone
    assert sampler.draw(logits, uniforms(16, seed=5, on=name)).tolist() != together.tolist()


def test_a_uniform_number_per_row_is_required():
    with pytest.raises(ValueError, match=r"3 rows of scores but \(2,\) uniform numbers"):
        NucleusSampler(0.7, 0.9).draw(torch.zeros(3, 10), uniforms(2))


def test_a_block_of_uniforms_is_what_one_draw_per_token_gives():
    """A document's block, drawn at its prefill, holds the numbers a draw per step gave: the same texts."""
    block = uniform_block(torch.Generator().manual_seed(11), 300, torch.device("cpu"))
    one_by_one = torch.Generator().manual_seed(11)
    assert torch.equal(block, torch.cat([torch.rand(1, generator=one_by_one) for _ in range(300)]))


@pytest.mark.parametrize("name", DEVICES)
def test_slot_bans_live_on_the_device_and_are_copied_only_when_they_change(name):
    bans = SlotBans(3, device(name))
    bans.update(0, {1, 4})
    bans.update(2, [5, 9])  # 9 is beyond the vocabulary
    for _ in range(5):  # steps with unchanged sets: one copy
        scores = torch.zeros(3, 6, device=device(name))
        bans.apply(scores, range(3))
        assert torch.isinf(scores).nonzero().tolist() == [[0, 1], [0, 4], [2, 5]]
    assert bans.uploads == 1 and bans.pairs[0].device == scores.device
    bans.update(0, {4, 1})  # the same set: nothing to copy
    bans.update(1, {2})
    scores = torch.zeros(3, 6, device=device(name))
    bans.apply(scores, range(3))
    assert torch.isinf(scores).nonzero().tolist() == [[0, 1], [0, 4], [1, 2], [2, 5]]
    assert bans.uploads == 2
    bans.keep([2, 0])  # slot 1 left the batch: the others are renumbered
    scores = torch.zeros(2, 6, device=device(name))
    bans.apply(scores, range(2))
    assert torch.isinf(scores).nonzero().tolist() == [[0, 5], [1, 1], [1, 4]]
    single = torch.zeros(1, 6, device=device(name))  # a prefill's row: its own set
    bans.apply(single, range(1, 2))
    assert torch.isinf(single).nonzero().tolist() == [[0, 1], [0, 4]]


@pytest.mark.parametrize("temperature, top_p", [(0.0, 0.9), (0.7, 0.0), (0.7, 1.5), (-1.0, 0.5)])
def test_invalid_settings_are_refused(temperature, top_p):
    with pytest.raises(ValueError, match="temperature"):
        NucleusSampler(temperature, top_p)


def test_tiny_temperature_is_greedy():
    logits = torch.randn(50, 200)
    assert torch.equal(NucleusSampler(1e-4, 0.9).draw(logits, uniforms(50)), logits.argmax(-1))
