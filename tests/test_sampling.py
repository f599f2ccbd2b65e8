"""Nucleus sampling as a logits processor: the same tokens kept and the same distribution as
transformers' temperature + top-p warpers, drawn from a few candidates instead of a full sort."""

from __future__ import annotations

import math

import pytest
import torch
from transformers import TemperatureLogitsWarper, TopPLogitsWarper

from plainsight.sampling import NucleusSampler, nucleus


def test_known_nucleus_and_its_frequencies():
    # probabilities 0.5, 0.3, 0.15, 0.05 with top_p 0.9: the mass above the third token is 0.8 < 0.9,
    # above the fourth 0.95, so the nucleus is the first three, drawn as 0.5 : 0.3 : 0.15
    logits = torch.log(torch.tensor([0.15, 0.5, 0.05, 0.3])).repeat(40_000, 1)
    torch.manual_seed(0)
    scores = NucleusSampler(temperature=1.0, top_p=0.9, candidates=2)(None, logits)
    drawn = scores.argmax(-1)
    frequencies = torch.bincount(drawn, minlength=4).float() / len(drawn)
    expected = torch.tensor([0.15, 0.5, 0.0, 0.3]) / 0.95
    assert torch.allclose(frequencies, expected, atol=0.01), frequencies
    assert frequencies[2] == 0


def test_output_is_minus_infinity_except_the_drawn_token():
    scores = NucleusSampler(0.7, 0.9)(None, torch.randn(5, 300))
    assert torch.isinf(scores).sum(-1).tolist() == [299] * 5
    assert (scores.max(-1).values == 0).all()


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


def test_blocked_tokens_are_never_drawn():
    logits = torch.zeros(2000, 10)
    logits[:, 3] = 5.0  # token 3 would be drawn almost always
    assert (NucleusSampler(1.0, 0.95)(None, logits).argmax(-1) == 3).float().mean() > 0.9
    logits[:, 3] = float("-inf")  # what the blocking processor leaves for a banned token
    assert 3 not in NucleusSampler(1.0, 0.95)(None, logits).argmax(-1).tolist()


def test_top_p_one_draws_from_every_token():
    torch.manual_seed(2)
    drawn = NucleusSampler(1.0, 1.0)(None, torch.zeros(3000, 8)).argmax(-1)
    assert set(drawn.tolist()) == set(range(8))


def test_same_seed_same_draws():
    logits = torch.randn(16, 1000)
    draws = []
    for _ in range(2):
        torch.manual_seed(3)
        draws.append(NucleusSampler(0.7, 0.9)(None, logits).argmax(-1))
    assert torch.equal(*draws)


@pytest.mark.parametrize("temperature, top_p", [(0.0, 0.9), (0.7, 0.0), (0.7, 1.5), (-1.0, 0.5)])
def test_invalid_settings_are_refused(temperature, top_p):
    with pytest.raises(ValueError, match="temperature"):
        NucleusSampler(temperature, top_p)


def test_tiny_temperature_is_greedy():
    logits = torch.randn(50, 200)
    scores = NucleusSampler(1e-4, 0.9)(None, logits)
    assert torch.equal(scores.argmax(-1), logits.argmax(-1))
    assert not math.isnan(scores.max().item())
