"""Canaries for released text: their design, insertion, the attacks on them, and the canary table."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest

from conftest import RESOURCES
from plainsight.audit.canaries import (
    Canary,
    CanaryDesign,
    CanaryPlan,
    allowed_tokens,
    assign_segments,
    built_canaries,
    canaried_docs,
    check_plan,
    prefix_sentences,
    read_canary_design,
    sentences,
)
from plainsight.audit.canary_attacks import NgramSettings, attack_frame, likelihood_ratios
from plainsight.audit.canary_table import DpClaim, canary_markdown, method_rows
from plainsight.audit.epsilon import max_certifiable_epsilon
from plainsight.audit.ngram import continuation_log_prob, fit_ngram
from plainsight.errors import InputError
from test_membership import court_document


def design(**changes) -> CanaryDesign:
    settings = {
        "prefix_min_words": 3,
        "prefix_max_words": 30,
        "suffix_tokens": 10,
        "target_perplexity": 500.0,
        "tolerance": 0.05,
        "nearest_tokens": 4,
        "token_pattern": "^ [A-Za-z]{3,}$",
    }
    return CanaryDesign(**{**settings, **changes})


# --- the n-gram model --------------------------------------------------------------------------


def test_ngram_probabilities_by_hand():
    # unigram counts a 2, b 2, c 1, d 1 (6 words, 4 types), add-1: P(c) = 2 / (6 + 5)
    model = fit_ngram([["a", "b", "c"], ["a", "b", "d"]], order=2, add_k=1.0)
    assert model.probability("c", []) == pytest.approx(2 / 11)
    # after b: c and d once each (2 words, 2 types): (1 + 2 x 2/11) / (2 + 2)
    assert model.probability("c", ["b"]) == pytest.approx((1 + 2 * 2 / 11) / 4)
    # a word the corpus never holds keeps the add-k share: (0 + 2 x 1/11) / 4 after b
    assert model.probability("zebra", ["b"]) == pytest.approx((2 / 11) / 4)
    # an unseen context falls back to the unigram estimate
    assert model.probability("c", ["zebra"]) == pytest.approx(2 / 11)
    # the mean log-probability of a continuation: ln P(b | a) and ln P(c | b)
    p_b_after_a = (2 + 1 * 3 / 11) / (2 + 1)
    expected = (math.log(p_b_after_a) + math.log((1 + 2 * 2 / 11) / 4)) / 2
    assert continuation_log_prob(model, ["a"], ["b", "c"]) == pytest.approx(expected)
    with pytest.raises(ValueError, match="order >= 1"):
        fit_ngram([["a"]], order=0, add_k=1.0)


# --- the design --------------------------------------------------------------------------------


def test_sentences_and_prefix_candidates():
    text = "THE FACTS\n\nMr Smith was born in 1975. He lives in Belfast! Was it so? yes it was."
    assert sentences(text) == [
        "THE FACTS",
        "Mr Smith was born in 1975.",
        "He lives in Belfast!",
        "Was it so? yes it was.",
    ]
    assert prefix_sentences([text, text], design(prefix_min_words=3, prefix_max_words=6)) == [
        "He lives in Belfast!",
        "Mr Smith was born in 1975.",
        "Was it so? yes it was.",
    ]


def test_the_shipped_design_reads_and_bad_designs_stop_with_one_line(tmp_path):
    shipped = read_canary_design(str(RESOURCES / "canaries.yaml"))
    assert shipped.target_perplexity > 100 and shipped.within_tolerance(shipped.target_perplexity * 1.01)
    text = (RESOURCES / "canaries.yaml").read_text(encoding="utf-8")
    for old, new, message in [
        ("tolerance: 0.05", "tolerance: 2", "tolerance: out of range"),
        ("suffix_tokens: 12", "suffix_tokens: twelve", "not a number"),
        ("target_perplexity: 1000", "", "incomplete"),
    ]:
        bad = tmp_path / "canaries.yaml"
        bad.write_text(text.replace(old, new), encoding="utf-8")
        with pytest.raises(InputError, match=message) as error:
            read_canary_design(str(bad))
        assert str(error.value).startswith(str(bad)) and "\n" not in str(error.value)
    for plan, message in [(CanaryPlan(0, (1, 4), 1), "must be >= 1"), (CanaryPlan(2, (4, 4), 1), "twice")]:
        with pytest.raises(ValueError, match=message):
            check_plan(plan)


def plain_suffix_perplexity(model, tokenizer, prefix: str, suffix: str) -> float:
    """exp(mean surprisal) of the suffix's tokens after the prefix's, by one plain forward pass."""
    import torch

    context = tokenizer(prefix, add_special_tokens=False).input_ids
    target = tokenizer(suffix, add_special_tokens=False).input_ids
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([context + target])).logits[0].float()
    log_probs = logits.log_softmax(-1)[len(context) - 1 : -1].gather(1, torch.tensor(target)[:, None])
    return math.exp(-float(log_probs.mean()))


PREFIXES = [
    "The applicant was born in 1975 and lives in Ankara.",
    "The Court held a hearing.",
    "The Government argued that the applicant had not exhausted domestic remedies.",
    "Mr Polat lodged an appeal with the Supreme Court in Oslo.",
]


@pytest.mark.parametrize("target", [200.0, 2000.0])
def test_suffixes_reach_the_target_perplexity_under_the_base_model(learning_model_dir, target):
    from plainsight.models import load_model

    model, tokenizer = load_model(learning_model_dir)
    plan = CanaryPlan(per_repeat=1, repeats=(1, 4), seed=3)
    canaries = built_canaries(model, tokenizer, PREFIXES, design(target_perplexity=target), plan, "c.yaml")
    for canary in canaries:
        measured = plain_suffix_perplexity(model, tokenizer, canary.prefix, canary.suffix)
        assert measured == pytest.approx(target, rel=0.05) and canary.perplexity == pytest.approx(measured)
        assert len(tokenizer(canary.suffix, add_special_tokens=False).input_ids) == 10
        assert all(len(word) >= 3 and word.isalpha() for word in canary.suffix.split())
    assert sorted(c.repeats for c in canaries) == [0, 0, 1, 4] and sum(c.member for c in canaries) == 2
    assert len({c.suffix for c in canaries}) == 4
    again = built_canaries(model, tokenizer, PREFIXES, design(target_perplexity=target), plan, "c.yaml")
    assert again == canaries  # seeded


def test_an_unreachable_perplexity_stops_with_one_line(tiny_model_dir):
    from plainsight.models import load_model

    model, tokenizer = load_model(tiny_model_dir)  # near uniform: no suffix reaches perplexity 20
    with pytest.raises(InputError, match="c.yaml: target_perplexity: canary 0's suffix reaches") as error:
        built_canaries(
            model, tokenizer, PREFIXES[:2], design(target_perplexity=20.0), CanaryPlan(1, (1,), 1), "c.yaml"
        )
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="no token of the vocabulary"):
        allowed_tokens(tokenizer, "^ [0-9]{9}$")


# --- insertion ---------------------------------------------------------------------------------


def hand_canary(number: int, member: bool, repeats: int, suffix: str = " alpha beta gamma") -> Canary:
    return Canary(f"c{number:03d}", member, repeats, f"Prefix sentence {number}.", suffix, 500.0)


def test_each_member_goes_into_its_repeats_in_distinct_documents_one_per_segment():
    hosts = [(f"d{doc}", segment) for doc in range(12) for segment in (0, 1)]
    canaries = [
        hand_canary(0, True, 8),
        hand_canary(1, True, 4),
        hand_canary(2, True, 1),
        hand_canary(3, False, 0),
    ]
    placed = assign_segments(canaries, hosts, seed=1)
    used = [key for canary in placed for key in canary.segments]
    assert [len(c.segments) for c in placed] == [8, 4, 1, 0] and len(set(used)) == len(used) == 13
    for canary in placed:
        assert len({doc for doc, _ in canary.segments}) == canary.repeats
    assert (
        assign_segments(canaries, hosts, seed=1) == placed
        and assign_segments(canaries, hosts, seed=2) != placed
    )
    with pytest.raises(ValueError, match="in distinct documents") as error:
        assign_segments([hand_canary(0, True, 13)], hosts, seed=1)
    assert "\n" not in str(error.value)

    docs = pd.DataFrame(
        {
            "doc_id": [doc for doc, _ in hosts],
            "segment": [s for _, s in hosts],
            "text": ["Real text."] * len(hosts),
        }
    )
    out = canaried_docs(docs, placed)
    assert out["text"].str.startswith("Prefix sentence 0. alpha beta gamma\n\nReal text.").sum() == 8
    assert (out["text"] == "Real text.").sum() == len(hosts) - 13 and (docs["text"] == "Real text.").all()


# --- the attacks -------------------------------------------------------------------------------

VOCABULARY = ["appeal", "court", "hearing", "decision", "judgment", "lawyer", "prison", "article", "remedy"]


def canary_set(members: int, seed: int) -> list[Canary]:
    """`members` members inserted once and as many non-members, their suffixes five words of
    VOCABULARY (seeded)."""
    rng = random.Random(seed)
    return [
        Canary(
            f"c{n:03d}",
            n < members,
            1 if n < members else 0,
            f"The applicant number {n} lodged an application.",
            " " + " ".join(rng.choice(VOCABULARY) for _ in range(5)),
            500.0,
        )
        for n in range(2 * members)
    ]


def corpus(texts: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {"text": texts, "context_doc_ids": [[]] * len(texts), "context_segments": [[]] * len(texts)}
    )


def released_text_rows(canaries: list[Canary], texts: list[str]) -> dict[str, dict]:
    frame = attack_frame(canaries, corpus(texts), NgramSettings(order=3, add_k=0.1), in_context=False)
    return {row["attack"]: row for row in method_rows(frame, delta=1e-5, claim=None, resamples=200)}


def test_a_corpus_holding_every_member_gives_auc_1_and_a_positive_bound():
    canaries = canary_set(12, seed=1)
    rng = random.Random(2)
    texts = [court_document(rng) for _ in range(20)] + [
        f"{c.text} {court_document(rng)}" for c in canaries if c.member
    ]
    rows = released_text_rows(canaries, texts)
    assert set(rows) == {"ngram", "shared_run"}  # no adapter: no likelihood ratio
    best = max_certifiable_epsilon(12, 12, delta=1e-5)
    for row in rows.values():
        assert row["auc"] == 1.0 and row["tpr1"] == 1.0 and row["members"] == row["non_members"] == 12
        assert row["epsilon_lower_bound"] == pytest.approx(best) and best > 1.0


def test_a_corpus_that_never_saw_them_gives_chance_and_no_bound():
    # the corpus holds the suffixes' words, in random order, but no canary: members and non-members
    # score alike
    canaries = canary_set(30, seed=2)
    rng = random.Random(2)
    texts = [
        court_document(rng) + " " + " ".join(rng.choice(VOCABULARY) for _ in range(30)) for _ in range(20)
    ]
    for row in released_text_rows(canaries, texts).values():
        assert row["auc_low"] + 0.05 < 0.5 < row["auc_high"] - 0.04 and row["members"] == 30
        assert row["epsilon_lower_bound"] == 0.0


def test_in_context_canaries_count_the_prompts_that_showed_them():
    canaries = [
        Canary("c000", True, 2, "A b c.", " alpha beta gamma", 500.0, (("d1", 0), ("d2", 1))),
        Canary("c001", False, 0, "A b c.", " delta epsilon zeta", 500.0),
    ]
    shown = pd.DataFrame(
        {
            "text": ["x", "y", "z"],
            "context_doc_ids": [["d1", "d3"], ["d2", "d1"], ["d2", "d3"]],
            "context_segments": [[0, 0], [1, 1], [0, 0]],  # d1 seg 0; d2 seg 1 (and d1 seg 1); d2 seg 0
        }
    )
    frame = attack_frame(canaries, shown, NgramSettings(2, 1.0), in_context=True)
    assert frame["prompts_showing"].tolist() == [2, 0]


def test_a_canary_inserted_16_times_beats_one_inserted_once_under_an_over_trained_adapter(learning_model_dir):
    from plainsight.models import load_model
    from plainsight.training.examples import build_example
    from plainsight.training.loop import TrainingSettings, fit
    from plainsight.training.prefix import prefix_model

    model, tokenizer = load_model(learning_model_dir)
    plan = CanaryPlan(per_repeat=1, repeats=(1, 16), seed=5)
    canaries = built_canaries(model, tokenizer, PREFIXES, design(target_perplexity=300.0), plan, "c.yaml")
    hosts = [(f"d{n}", 0) for n in range(20)]
    canaries = assign_segments(canaries, hosts, seed=1)
    rng = random.Random(3)
    docs = pd.DataFrame(
        {"doc_id": [d for d, _ in hosts], "segment": 0, "text": [court_document(rng) for _ in hosts]}
    )
    texts = canaried_docs(docs, canaries)["text"]
    examples = [build_example((f"d{n}", 0), "", text, [], tokenizer, 96) for n, text in enumerate(texts)]
    adapter = prefix_model(model, tokenizer, 8, "The Court held a hearing.", projection_hidden=64)
    fit(adapter, examples, TrainingSettings(15, 5e-2, 4, 96), seed=1, pad_token_id=tokenizer.pad_token_id)
    adapter.eval()
    base, _ = load_model(learning_model_dir)
    ratios = dict(
        zip([c.canary_id for c in canaries], likelihood_ratios(base, lambda: adapter, tokenizer, canaries, 4))
    )
    by_repeats = {r: np.mean([ratios[c.canary_id] for c in canaries if c.repeats == r]) for r in (0, 1, 16)}
    assert by_repeats[16] > by_repeats[1] and by_repeats[16] > by_repeats[0] + 1.0


# --- the table ---------------------------------------------------------------------------------


def scored(member_scores: dict[int, list[float]], non_member_scores: list[float]) -> pd.DataFrame:
    rows = [
        {"member": True, "repeats": repeats, "score": s}
        for repeats, scores in member_scores.items()
        for s in scores
    ] + [{"member": False, "repeats": 0, "score": s} for s in non_member_scores]
    frame = pd.DataFrame(rows)
    return frame.assign(
        ngram=frame["score"],
        shared_run=frame["score"],
        likelihood_ratio=frame["score"],
        prompts_showing=math.nan,
    )


def test_group_privacy_of_the_dp_claim_by_hand():
    claim = DpClaim(epsilon=1.0, delta=1e-5)
    assert claim.for_group(1) == DpClaim(1.0, 1e-5)
    four = claim.for_group(4)
    assert four.epsilon == 4.0 and four.delta == pytest.approx(4 * math.exp(3) * 1e-5)
    assert DpClaim(8.0, 1e-5).for_group(4) is None  # 4 e^24 1e-5 > 1: no claim left


def test_table_rows_flag_a_dp_claim_the_canaries_disprove():
    # ten members inserted once score above every one of ten non-members: the bound is the most 10 + 10
    # canaries certify (about 1.05 at delta 0), above a claimed epsilon of 0.5
    frame = scored(
        {1: [10.0 + n for n in range(10)], 4: [0.5 * n for n in range(10)]}, [0.5 * n for n in range(10)]
    )
    rows = method_rows(frame, delta=1e-5, claim=DpClaim(0.5, 1e-8), resamples=0)
    once = next(r for r in rows if r["attack"] == "ngram" and r["repeats"] == 1)
    assert once["auc"] == 1.0 and once["epsilon_lower_bound"] == pytest.approx(
        max_certifiable_epsilon(10, 10, 1e-5)
    )
    assert once["claimed_epsilon"] == 0.5 and once["exceeds_claim"] is True
    assert once["claim_bound"] == pytest.approx(max_certifiable_epsilon(10, 10, 1e-8))
    four = next(r for r in rows if r["attack"] == "ngram" and r["repeats"] == 4)
    assert four["auc"] == 0.5 and four["epsilon_lower_bound"] == 0.0 and four["exceeds_claim"] is False
    assert four["claimed_epsilon"] == 2.0  # group privacy: 4 x 0.5
    table = pd.DataFrame(
        [
            {"dataset": "tab", "setting": "known", "idset": "direct", "method": "dpsgd", "seed": 1, **r}
            for r in rows
        ]
    )
    text = canary_markdown(table)
    assert "**Check failed: 3 DP-SGD row(s) prove more than the accountant's claim**" in text
    assert "| 0.00 | 1.05 | 0.50 (2.00 for 4 documents) |" in text
    assert (
        "| tab known direct | dpsgd | 1 | n-gram model of the corpus | 1 | 10 / 10 | - | 1.00 | 100 | 100 "
        "| 1.05 | 1.05 | 0.50 **exceeded** |" in text
    )


def test_the_release_gate_reads_the_largest_bound_of_the_released_text_attacks():
    from plainsight.audit.canary_table import canary_evidence

    run = {"dataset": "tab", "setting": "known", "idset": "direct", "method": "ft", "seed": 1}
    table = pd.DataFrame(
        [
            {
                **run,
                "attack": attack,
                "repeats": repeats,
                "epsilon_lower_bound": bound,
                "max_certifiable_epsilon": most,
            }
            for attack, repeats, bound, most in [
                ("ngram", 1, 0.0, 1.4),
                ("ngram", 16, 0.7, 1.4),
                ("shared_run", 16, 0.2, 1.4),
                ("likelihood_ratio", 16, 1.3, 1.4),
            ]
        ]
    )
    released = canary_evidence(table)
    assert released.to_dict("records") == [
        {**run, "canary_epsilon": 0.7, "canary_max_certifiable_epsilon": 1.4}
    ]
    with_adapter = canary_evidence(table, ("ngram", "shared_run", "likelihood_ratio"))
    assert with_adapter["canary_epsilon"].tolist() == [1.3]


# --- the cost plan -----------------------------------------------------------------------------


def test_the_cost_plan_counts_the_canary_jobs():
    from plainsight import scheduling
    from plainsight.report.plan import DryRunJob, plan_table
    from test_plan import SHAPES, config, cost_model

    cfg = config(gpus_per_job=1, gpu_memory_gb=80, training_tokens_per_second=1000)
    cfg["audit"]["canaries"].update(per_repeat=5, repeats=[1, 4])
    costs = cost_model(cfg, SHAPES, lambda dataset, split: {"train": 50, "test": 10}[split])
    run = {"dataset": "tab", "setting": "known", "idset": "direct", "seed": "1"}
    example = scheduling.CANARY_TOKENS
    # 2 x 5 x 2 = 20 canaries; drawing their suffixes: 16 passes each; attacking them on a trained
    # method: under the base model and the adapter; on an in-context method: no model at all
    assert costs.work("canary_docs", run) == (20 * 16 * example, 1000)
    assert costs.work("canary_attacks", {**run, "method": "ft"}) == (20 * 2 * example, 1000)
    assert costs.work("canary_attacks", {**run, "method": "icl"}) == (0, 1000)
    for twin, rule, method in [
        ("canary_adapter", "train_adapter", "dpsgd"),
        ("canary_generations", "generate_trained", "ft"),
        ("canary_generations_in_context", "generate_icl", "icl"),
    ]:
        wildcards = {**run, "method": method}
        assert costs.hours(twin, wildcards) == costs.hours(rule, wildcards) > 0
        assert costs.gpu_bytes(twin, wildcards) == costs.gpu_bytes(rule, wildcards) > 0
    jobs = [DryRunJob("canary_adapter", {**run, "method": "ft"}, {}), DryRunJob("canary_docs", run, {})]
    table = plan_table(jobs, costs).set_index("rule")
    assert table.loc["canary_adapter", "device_hours"] == pytest.approx(
        costs.hours("train_adapter", {**run, "method": "ft"})
    )
    assert {"canary_docs", "canary_attacks", "canary_adapter"} <= set(scheduling.MODEL_RULES)
