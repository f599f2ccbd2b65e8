"""Nucleus sampling: the same tokens kept and the same distribution as transformers' temperature +
top-p warpers, drawn from a few candidates instead of a full sort, each row from its own generator,
on the CPU and (tests marked `gpu`) on CUDA."""

from __future__ import annotations

import pytest
import torch
from conftest import GPU, device
from transformers import TemperatureLogitsWarper, TopPLogitsWarper

from plainsight.generation.sampling import NucleusSampler, inverse_transform, mask_banned, nucleus

DEVICES = ["cpu", pytest.param("cuda", marks=GPU)]


def generators(count: int, seed: int = 0, on: str = "cpu") -> list[torch.Generator]:
    return [torch.Generator(on).manual_seed(seed * 1_000_003 + n) for n in range(count)]


@pytest.mark.parametrize("name", DEVICES)
def test_known_nucleus_and_its_frequencies(name):
    # probabilities 0.5, 0.3, 0.15, 0.05 with top_p 0.9: the mass above the third token is 0.8 < 0.9,
    # above the fourth 0.95, so the nucleus is the first three, drawn as 0.5 : 0.3 : 0.15
    logits = torch.log(torch.tensor([0.15, 0.5, 0.05, 0.3], device=device(name))).repeat(40_000, 1)
    drawn = NucleusSampler(temperature=1.0, top_p=0.9, candidates=2).draw(logits, generators(len(logits), on=name))
    assert (drawn.device, drawn.dtype) == (logits.device, torch.long)
    frequencies = torch.bincount(drawn.cpu(), minlength=4).float() / len(drawn)
    expected = torch.tensor([0.15, 0.5, 0.0, 0.3]) / 0.95
    assert torch.allclose(frequencies, expected, atol=0.01), frequencies
    assert frequencies[2] == 0


def test_one_token_id_per_row():
    drawn = NucleusSampler(0.7, 0.9).draw(torch.randn(5, 300), generators(5))
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
    assert (NucleusSampler(1.0, 0.95).draw(logits, generators(2000, on=name)) == 3).float().mean() > 0.9
    mask_banned(logits, [{3}] * len(logits))  # what blocking leaves for a banned token
    assert 3 not in NucleusSampler(1.0, 0.95).draw(logits, generators(2000, on=name)).tolist()


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
    drawn = NucleusSampler(1.0, 1.0).draw(torch.zeros(3000, 8), generators(3000))
    assert set(drawn.tolist()) == set(range(8))


@pytest.mark.parametrize("name", DEVICES)
def test_a_row_draws_the_same_whatever_its_neighbours(name):
    torch.manual_seed(3)
    logits = (torch.randn(16, 1000) * 3).to(device(name))
    logits[5] = 0.01 * torch.randn(1000)  # a flat row: the batch's candidates grow for every row
    sampler = NucleusSampler(0.7, 0.9)
    together = sampler.draw(logits, generators(16, seed=4, on=name))
    alone = [sampler.draw(logits[n:n + 1], generators(16, seed=4, on=name)[n:n + 1]).item() for n in range(16)]
    assert together.tolist() == alone
    assert sampler.draw(logits, generators(16, seed=5, on=name)).tolist() != together.tolist()


def test_a_generator_per_row_is_required():
    with pytest.raises(ValueError, match="3 rows of scores but 2 generators"):
        NucleusSampler(0.7, 0.9).draw(torch.zeros(3, 10), generators(2))


@pytest.mark.parametrize("temperature, top_p", [(0.0, 0.9), (0.7, 0.0), (0.7, 1.5), (-1.0, 0.5)])
def test_invalid_settings_are_refused(temperature, top_p):
    with pytest.raises(ValueError, match="temperature"):
        NucleusSampler(temperature, top_p)


def test_tiny_temperature_is_greedy():
    logits = torch.randn(50, 200)
    assert torch.equal(NucleusSampler(1e-4, 0.9).draw(logits, generators(50)), logits.argmax(-1))
