"""Canary exposure: the rank estimate, insertion, and a canary seen 16 times against one seen once."""

from __future__ import annotations

import math

import pytest
import yaml
from conftest import RESOURCES
from test_membership import learning_model_dir  # noqa: F401  (the fixture)

from plainsight.evaluation.canaries import (Canary, canary_exposures, draw_secrets, estimated_rank, exposure,
                                            insert_canaries)


def test_exposure_of_hand_made_ranks():
    # the secret beats every one of 3 candidates: rank |R| / 4, exposure log2 4 = 2 bits
    assert exposure(-1.0, [-5.0, -6.0, -7.0], 1024) == pytest.approx(2.0)
    # half the candidates are at least as likely: rank 1 + 512, exposure about 1 bit
    assert estimated_rank(-5.0, [-1.0, -5.0, -6.0, -7.0], 1024) == 1 + 512
    assert exposure(-5.0, [-1.0, -5.0, -6.0, -7.0], 1024) == pytest.approx(10 - math.log2(513))
    # every candidate is more likely: rank about |R|, exposure about 0
    assert exposure(-9.0, [-1.0, -2.0], 1024) == pytest.approx(10 - math.log2(1025))


def test_secrets_are_distinct_seeded_and_keep_leading_zeros():
    secrets = draw_secrets(50, 3, seed=1)
    assert len(set(secrets)) == 50 and all(len(s) == 3 and s.isdigit() for s in secrets)
    assert draw_secrets(50, 3, seed=1) == secrets and draw_secrets(50, 3, seed=2) != secrets
    with pytest.raises(ValueError):
        draw_secrets(11, 1, seed=1)


def test_insert_canaries_puts_each_into_as_many_distinct_documents():
    template = yaml.safe_load((RESOURCES / "canaries.yaml").read_text())["template"]
    texts = [f"Document {n}." for n in range(20)]
    canaries = [Canary("111111", 16), Canary("222222", 4), Canary("333333", 1)]
    inserted = insert_canaries(texts, canaries, template, seed=1)
    for canary in canaries:
        assert sum(canary.text(template) in text for text in inserted) == canary.repeats
    assert insert_canaries(texts, canaries, template, seed=1) == inserted
    with pytest.raises(ValueError, match="needs as many documents"):
        insert_canaries(texts[:3], canaries, template, seed=1)


def test_a_canary_seen_16_times_is_more_exposed_than_one_seen_once(learning_model_dir):
    from test_membership import court_document
    import random

    import pandas as pd

    from plainsight.models import load_model
    from plainsight.training.loop import TrainingSettings, build_example, fit
    from plainsight.training.prefix import prefix_model

    template = "The reference is {secret}."
    rng = random.Random(3)
    canaries = [Canary("4812", 16), Canary("7305", 1)]
    texts = insert_canaries([court_document(rng) for _ in range(16)], canaries, template, seed=1)
    model, tokenizer = load_model(learning_model_dir)
    examples = [build_example((f"d{n}", 0), "", text, [], tokenizer, 96) for n, text in enumerate(texts)]
    adapter = prefix_model(model, tokenizer, 8, "The Court held a hearing.", projection_hidden=64)
    fit(adapter, examples, TrainingSettings(60, 5e-2, 4, 96), seed=1, pad_token_id=tokenizer.pad_token_id)
    adapter.eval()
    often, once = canary_exposures(adapter, tokenizer, template, canaries, digits=4, candidates=300, seed=1,
                                   max_length=96)
    assert often > once
    assert often > 4  # ranks among the top 1/16 of the space
