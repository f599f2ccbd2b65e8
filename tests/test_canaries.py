"""Canary exposure: the rank estimate, insertion, and a canary seen 16 times against one seen once."""

from __future__ import annotations

import math

import pytest
import yaml

from conftest import RESOURCES
from plainsight.audit.canaries import (
    Canary,
    canary_exposures,
    draw_secrets,
    estimated_rank,
    exposure,
    insert_canaries,
)


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
    import random

    from plainsight.models import load_model
    from plainsight.training.examples import build_example
    from plainsight.training.loop import TrainingSettings, fit
    from plainsight.training.prefix import prefix_model
    from test_membership import court_document

    template = "The reference is {secret}."
    rng = random.Random(3)
    canaries = [Canary("4812", 16), Canary("7305", 1)]
    texts = insert_canaries([court_document(rng) for _ in range(16)], canaries, template, seed=1)
    model, tokenizer = load_model(learning_model_dir)
    examples = [build_example((f"d{n}", 0), "", text, [], tokenizer, 96) for n, text in enumerate(texts)]
    adapter = prefix_model(model, tokenizer, 8, "The Court held a hearing.", projection_hidden=64)
    fit(adapter, examples, TrainingSettings(60, 5e-2, 4, 96), seed=1, pad_token_id=tokenizer.pad_token_id)
    adapter.eval()
    often, once = canary_exposures(
        adapter, tokenizer, template, canaries, digits=4, candidates=300, seed=1, max_length=96
    )
    assert often > once
    assert often > 4  # ranks among the top 1/16 of the space


def test_planned_canaries_go_into_1_4_and_16_documents():
    from plainsight.audit.canaries import CanarySettings, planned_canaries

    canaries = planned_canaries(CanarySettings("ref {secret}.", 6, 2, 100, seed=1))
    assert [c.repeats for c in canaries] == [1, 1, 4, 4, 16, 16]
    assert len({c.secret for c in canaries}) == 6 and all(len(c.secret) == 6 for c in canaries)
    assert canaries == planned_canaries(CanarySettings("ref {secret}.", 6, 2, 100, seed=1))


def test_canaries_go_only_into_fine_tuning_segments():
    import pandas as pd

    from plainsight.audit.canaries import canaried_docs

    docs = pd.DataFrame(
        {
            "doc_id": [f"d{n}" for n in range(24)],
            "segment": 0,
            "text": [f"Text {n}." for n in range(24)],
            "split": ["train"] * 20 + ["test"] * 4,
        }
    )
    codes = docs[["doc_id", "segment", "split"]].copy()
    canaries = [Canary("111111", 16), Canary("222222", 4)]
    out = canaried_docs(docs, codes, canaries, "The reference is {secret}.", seed=1)
    assert out["text"].str.contains("111111").sum() == 16 and out["text"].str.contains("222222").sum() == 4
    assert (
        out.loc[out["split"] == "test", "text"].tolist() == docs.loc[docs["split"] == "test", "text"].tolist()
    )
    assert (
        out["text"].str.startswith("Text").all() and docs["text"].str.len().max() < 10
    )  # input left as it was


def test_canary_table_sums_per_insertion_count(tmp_path):
    import pandas as pd

    from plainsight.audit.canary_table import canary_markdown, canary_table

    report = pd.DataFrame(
        {
            "secret": ["1", "2", "3"],
            "repeats": [1, 16, 16],
            "exposure": [0.5, 9.0, 11.0],
            "max_exposure": 19.93,
            "generations_with_secret": [0, 1, 2],
            "generations_with_sentence": [0, 0, 1],
            "generations": 24,
        }
    )
    report.to_parquet(tmp_path / "r.parquet")
    run = {"dataset": "tab", "setting": "known", "idset": "direct", "method": "ft", "seed": 1}
    table = canary_table([str(tmp_path / "r.parquet")], [run])
    often = table[table["repeats"] == 16].iloc[0]
    assert often["canaries"] == 2 and often["mean_exposure"] == 10.0 and often["max_exposure"] == 11.0
    assert often["generations_with_secret"] == 3
    assert "| tab known direct | ft | 1 | 16 docs | 2 | 10.00 | 11.00 | 3 of 24 |" in canary_markdown(table)
