"""Canaries for released text: their design, coins and insertion, the attacks on them, the one-run audit
and the canary table."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from conftest import RESOURCES
from plainsight.audit.canaries import (
    Canary,
    CanaryDesign,
    CanaryPlan,
    PrefixSource,
    allowed_tokens,
    assign_segments,
    built_canaries,
    canaried_codes,
    canaried_docs,
    check_plan,
    check_room,
    draw_prefixes,
    own_documents,
    prefix_sources,
    read_canary_design,
    sentences,
)
from plainsight.audit.canary_attacks import NgramSettings, attack_frame, likelihood_ratios
from plainsight.audit.canary_table import (
    DpClaim,
    claim_steps,
    family_confidence,
    guesses_per_side,
    method_rows,
    one_run_guesses,
)
from plainsight.audit.epsilon import one_run_epsilon, one_run_max_epsilon
from plainsight.audit.ngram import continuation_log_prob, fit_ngram
from plainsight.errors import InputError
from plainsight.report.canary_markdown import canary_markdown
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


def test_sentences_and_prefix_sources_with_the_values_they_name():
    text = "THE FACTS\n\nMr Smith was born in 1975. He lives in Belfast! Was it so? yes it was."
    assert sentences(text) == [
        "THE FACTS",
        "Mr Smith was born in 1975.",
        "He lives in Belfast!",
        "Was it so? yes it was.",
    ]
    texts = {("d2", 0): text, ("d1", 1): "He lives in Belfast! Smithson came."}
    entities = {("d2", 0): [("PERSON", "Smith"), ("LOC", "Belfast")], ("d1", 1): [("PERSON", "Smith")]}
    found = prefix_sources(texts, entities, design(prefix_min_words=3, prefix_max_words=6))
    assert found == [
        # the first segment in key order that holds a sentence is its source; "Smith" is no part of
        # "Smithson", and d1's code does not name Belfast
        PrefixSource("He lives in Belfast!", ("d1", 1), []),
        PrefixSource("Mr Smith was born in 1975.", ("d2", 0), [("PERSON", "Smith")]),
        PrefixSource("Was it so? yes it was.", ("d2", 0), []),
    ]


def test_single_insertion_prefixes_name_a_value_and_the_kinds_never_share_one():
    sources = [
        PrefixSource(f"Sentence {n}.", (f"d{n}", 0), [("PERSON", f"P{n}")] if n % 3 else [])
        for n in range(30)
    ]
    plan = CanaryPlan(single=6, per_repeat=3, repeats=(4, 16), seed=1)
    drawn = draw_prefixes(sources, plan)
    assert len(drawn) == len(plan.kinds) == 12 and len({p.sentence for p in drawn}) == 12
    assert all(p.entities for p in drawn[:6])
    assert (
        draw_prefixes(sources, plan) == drawn
        and draw_prefixes(sources, CanaryPlan(6, 3, (4, 16), 2)) != drawn
    )
    with pytest.raises(ValueError, match="naming a value of their segment's code"):
        draw_prefixes(sources, CanaryPlan(single=21, per_repeat=1, repeats=(), seed=1))


def test_each_candidate_is_included_by_a_fair_coin_of_its_own():
    plan = CanaryPlan(single=2000, per_repeat=500, repeats=(4, 16), seed=7)
    coins = np.array(plan.coins())
    kinds = np.array(plan.kinds)
    assert len(coins) == 3000 and plan.kinds[:2000] == [1] * 2000 and plan.kinds[2000:2500] == [4] * 500
    # 3,000 fair coins: the share of heads lies within 0.5 +- 0.035 (over 3.8 standard errors) overall
    # and per kind, and a coin says nothing about its neighbour (the same pair of sides 1/2 of the time)
    for chosen in (kinds > 0, kinds == 1, kinds == 4, kinds == 16):
        assert abs(coins[chosen].mean() - 0.5) < 0.035 * (3000 / chosen.sum()) ** 0.5
    assert abs((coins[1:] == coins[:-1]).mean() - 0.5) < 0.035
    # seeded and recorded: the same coins from the same seed, others from another; not a fixed count
    assert plan.coins() == CanaryPlan(2000, 500, (4, 16), 7).coins()
    assert plan.coins() != CanaryPlan(2000, 500, (4, 16), 8).coins()
    small = [sum(CanaryPlan(6, 1, (), seed).coins()) for seed in range(40)]
    assert len(set(small)) > 2


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
    for plan, message in [
        (CanaryPlan(1, 2, (4,), 1), "at least 2 candidates"),
        (CanaryPlan(10, 0, (4,), 1), "per_repeat 0 must be >= 1"),
        (CanaryPlan(10, 2, (1, 4), 1), "repeats \\[1, 4\\] >= 2"),
        (CanaryPlan(10, 2, (4, 4), 1), "twice"),
    ]:
        with pytest.raises(ValueError, match=message):
            check_plan(plan)
    check_plan(CanaryPlan(10, 0, (), 1))  # single-insertion canaries alone
    hosts = [(f"d{doc}", segment) for doc in range(12) for segment in (0, 1)]
    check_room(CanaryPlan(10, 1, (4, 16), 1), [(f"d{doc}", 0) for doc in range(20)])
    for plan in (CanaryPlan(10, 2, (4, 9), 1), CanaryPlan(10, 1, (13,), 1)):  # 24 segments; 12 documents
        with pytest.raises(ValueError, match="lower audit.canaries.per_repeat") as error:
            check_room(plan, hosts)
        assert "\n" not in str(error.value)


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
    plan = CanaryPlan(single=2, per_repeat=1, repeats=(4, 16), seed=3)
    canaries = built_canaries(model, tokenizer, PREFIXES, design(target_perplexity=target), plan, "c.yaml")
    for canary in canaries:
        measured = plain_suffix_perplexity(model, tokenizer, canary.prefix, canary.suffix)
        assert measured == pytest.approx(target, rel=0.05) and canary.perplexity == pytest.approx(measured)
        assert len(tokenizer(canary.suffix, add_special_tokens=False).input_ids) == 10
        assert all(len(word) >= 3 and word.isalpha() for word in canary.suffix.split())
    assert [c.repeats for c in canaries] == [1, 1, 4, 16]
    assert [c.member for c in canaries] == plan.coins()  # the coins, recorded
    assert len({c.suffix for c in canaries}) == 4
    again = built_canaries(model, tokenizer, PREFIXES, design(target_perplexity=target), plan, "c.yaml")
    assert again == canaries  # seeded


def test_an_unreachable_perplexity_stops_with_one_line(tiny_model_dir):
    from plainsight.models import load_model

    model, tokenizer = load_model(tiny_model_dir)  # near uniform: no suffix reaches perplexity 20
    with pytest.raises(InputError, match="c.yaml: target_perplexity: canary 0's suffix reaches") as error:
        built_canaries(
            model, tokenizer, PREFIXES[:2], design(target_perplexity=20.0), CanaryPlan(2, 1, (), 1), "c.yaml"
        )
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="no token of the vocabulary"):
        allowed_tokens(tokenizer, "^ [0-9]{9}$")


# --- insertion ---------------------------------------------------------------------------------


def hand_canary(
    number: int, member: bool, repeats: int, suffix: str = " alpha beta gamma", source=None
) -> Canary:
    return Canary(
        f"c{number:03d}", member, repeats, f"Prefix sentence {number}.", suffix, 500.0, source=source
    )


def test_included_multi_insertion_canaries_go_into_their_repeats_in_distinct_documents():
    hosts = [(f"d{doc}", segment) for doc in range(12) for segment in (0, 1)]
    canaries = [
        hand_canary(0, True, 8),
        hand_canary(1, True, 4),
        hand_canary(2, False, 4),  # its coin left it out
        hand_canary(3, True, 1),  # a document of its own, never a host segment
    ]
    placed = assign_segments(canaries, hosts, seed=1)
    used = [key for canary in placed for key in canary.segments]
    assert [len(c.segments) for c in placed] == [8, 4, 0, 0] and len(set(used)) == len(used) == 12
    for canary in placed[:2]:
        assert len({doc for doc, _ in canary.segments}) == canary.repeats
    assert (
        assign_segments(canaries, hosts, seed=1) == placed
        and assign_segments(canaries, hosts, seed=2) != placed
    )

    docs = pd.DataFrame(
        {
            "doc_id": [doc for doc, _ in hosts],
            "segment": [s for _, s in hosts],
            "text": ["Real text."] * len(hosts),
            "unit_id": [doc for doc, _ in hosts],
        }
    )
    out = canaried_docs(docs, placed)
    assert out["text"].str.startswith("Prefix sentence 0. alpha beta gamma\n\nReal text.").sum() == 8
    assert (out["text"] == "Real text.").sum() == len(hosts) - 12 and (docs["text"] == "Real text.").all()


def test_an_included_single_insertion_canary_is_a_training_document_and_unit_of_its_own():
    from plainsight.methods.in_context import context_pool
    from plainsight.methods.trained import training_keys

    docs = pd.DataFrame(
        {
            "doc_id": ["d1", "d1", "d2"],
            "segment": [0, 1, 1],
            "split": ["train", "train", "train"],
            "text": ["Mr Smith lodged an appeal. More text.", "Other text.", "Text of d2."],
            "unit_id": ["u1", "u1", "u2"],
            "group": ["GBR", "GBR", "AUT"],
        }
    )
    codes = pd.DataFrame(
        {
            "doc_id": ["d1", "d1", "d2"],
            "segment": [0, 1, 1],
            "split": ["train"] * 3,
            "code": ["PERSON: Smith\nCODE: 123/45", "PERSON: Jones", "PERSON: Kaur"],
            "entities": [
                [{"type": "PERSON", "value": "Smith"}, {"type": "CODE", "value": "123/45"}],
                [{"type": "PERSON", "value": "Jones"}],
                [{"type": "PERSON", "value": "Kaur"}],
            ],
        }
    )
    included = Canary("c000", True, 1, "Mr Smith lodged an appeal.", " alpha beta", 500.0, source=("d1", 0))
    left_out = Canary("c001", False, 1, "Mr Smith lodged an appeal.", " gamma delta", 500.0, source=("d1", 0))
    canaries = own_documents([included, left_out])
    assert canaries[0].segments == (("canary-c000", 0),) and canaries[1].segments == ()
    out_docs, out_codes = canaried_docs(docs, canaries), canaried_codes(codes, canaries)
    own = out_docs[out_docs["doc_id"] == "canary-c000"].iloc[0]
    assert len(out_docs) == 4 and out_docs["text"].iloc[:3].tolist() == docs["text"].tolist()
    assert (own["text"], own["unit_id"], own["segment"], own["split"], own["group"]) == (
        "Mr Smith lodged an appeal. alpha beta",
        "canary-c000",  # its own privacy unit
        0,
        "train",
        "GBR",
    )
    code = out_codes[out_codes["doc_id"] == "canary-c000"].iloc[0]
    assert code["code"] == "PERSON: Smith" and list(code["entities"]) == [
        {"type": "PERSON", "value": "Smith"}
    ]
    # trained methods fine-tune on it; in-context prompts may show it, as any coded segment of its range
    assert ("canary-c000", 0) in training_keys(out_codes)
    assert ("canary-c000", 0) in context_pool(out_codes, 0, needed=1)
    assert canaried_docs(docs, [left_out]).equals(docs) and canaried_codes(codes, [left_out]) is codes


# --- the attacks -------------------------------------------------------------------------------

VOCABULARY = ["appeal", "court", "hearing", "decision", "judgment", "lawyer", "prison", "article", "remedy"]


def canary_set(members: int, seed: int) -> list[Canary]:
    """2 x `members` single-insertion candidates, every other one included, their suffixes five words
    of VOCABULARY (seeded)."""
    rng = random.Random(seed)
    return [
        Canary(
            f"c{n:03d}",
            n % 2 == 0,
            1,
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


def released_text_rows(canaries: list[Canary], texts: list[str], guesses: float = 1.0) -> dict[str, dict]:
    frame = attack_frame(canaries, corpus(texts), NgramSettings(order=3, add_k=0.1), in_context=False)
    rows = method_rows(frame, delta=1e-5, claim=None, resamples=200, guesses=guesses)
    return {row["attack"]: row for row in rows}


def test_a_corpus_holding_every_member_gives_auc_1_and_the_most_the_guesses_can_show():
    canaries = canary_set(12, seed=1)
    rng = random.Random(2)
    texts = [court_document(rng) for _ in range(20)] + [
        f"{c.text} {court_document(rng)}" for c in canaries if c.member
    ]
    rows = released_text_rows(canaries, texts)
    assert set(rows) == {"ngram", "shared_run"}  # no adapter: no likelihood ratio
    # two attacks corrected together: each at 97.5%; 24 right of 24 guesses
    best = one_run_max_epsilon(24, 24, delta=1e-5, confidence=0.975)
    for row in rows.values():
        assert row["auc"] == 1.0 and row["tpr1"] == 1.0 and row["members"] == row["non_members"] == 12
        assert (row["candidates"], row["guesses"], row["correct"], row["confidence"]) == (24, 24, 24, 0.975)
        assert row["epsilon_lower_bound"] == row["max_certifiable_epsilon"] == best and best > 1.5
        assert row["bound_per"] == "unit"
    # half the candidates guessed on: the 6 highest and the 6 lowest, all right
    for row in released_text_rows(canaries, texts, guesses=0.5).values():
        assert (row["guesses"], row["correct"]) == (12, 12)
        assert row["epsilon_lower_bound"] == one_run_max_epsilon(24, 12, delta=1e-5, confidence=0.975)


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
        assert row["epsilon_lower_bound"] == 0.0 and 20 <= row["correct"] <= 40  # 60 guesses, chance


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
    plan = CanaryPlan(single=2, per_repeat=2, repeats=(16,), seed=5)
    built = built_canaries(model, tokenizer, PREFIXES, design(target_perplexity=300.0), plan, "c.yaml")
    # one included and one left out of each kind, whatever the coins said
    canaries = [
        replace(c, member=included, source=("d0", 0))
        for c, included in zip(built, [True, False, True, False])
    ]
    hosts = [(f"d{n}", 0) for n in range(20)]
    canaries = own_documents(assign_segments(canaries, hosts, seed=1))
    rng = random.Random(3)
    docs = pd.DataFrame(
        {
            "doc_id": [d for d, _ in hosts],
            "segment": 0,
            "text": [court_document(rng) for _ in hosts],
            "unit_id": [d for d, _ in hosts],
        }
    )
    canaried = canaried_docs(docs, canaries)
    assert len(canaried) == 21  # the single-insertion member's own document added
    examples = [
        build_example((doc, 0), "", text, [], tokenizer, 96)
        for doc, text in zip(canaried["doc_id"], canaried["text"])
    ]
    adapter = prefix_model(model, tokenizer, 8, "The Court held a hearing.", projection_hidden=64)
    fit(adapter, examples, TrainingSettings(15, 5e-2, 4, 96), seed=1, pad_token_id=tokenizer.pad_token_id)
    adapter.eval()
    base, _ = load_model(learning_model_dir)
    ratios = dict(
        zip([c.canary_id for c in canaries], likelihood_ratios(base, lambda: adapter, tokenizer, canaries, 4))
    )
    inserted = {c.canary_id: c.repeats if c.member else 0 for c in canaries}
    by_repeats = {r: np.mean([ratios[c] for c, count in inserted.items() if count == r]) for r in (0, 1, 16)}
    assert by_repeats[16] > by_repeats[1] and by_repeats[16] > by_repeats[0] + 1.0


# --- the table ---------------------------------------------------------------------------------


def scored(kinds: dict[int, tuple[list[float], list[float]]]) -> pd.DataFrame:
    """A canary attack frame: per insertion count, the included candidates' and the others' scores."""
    rows = [
        {"member": included, "repeats": repeats, "score": s}
        for repeats, (member_scores, other_scores) in kinds.items()
        for included, scores in ((True, member_scores), (False, other_scores))
        for s in scores
    ]
    frame = pd.DataFrame(rows)
    return frame.assign(
        ngram=frame["score"],
        shared_run=frame["score"],
        likelihood_ratio=frame["score"],
        prompts_showing=math.nan,
    )


def test_the_guesses_are_the_highest_and_lowest_scores_fixed_in_number():
    assert [
        guesses_per_side(m, share) for m, share in [(40, 0.5), (40, 1.0), (6, 0.5), (100, 0.29), (3, 1.0)]
    ] == [
        10,
        20,
        1,
        14,  # 0.29 x 100 is 28.999... in floating point: rounded first
        1,
    ]
    with pytest.raises(ValueError, match="guesses must lie in"):
        guesses_per_side(10, 0.0)
    # scores 0..7, included: 7, 6, 5 and 1; two guesses a side: "included" on 7 and 6 (right), "not
    # included" on 0 and 1 (right, wrong)
    included = [False, True, False, False, False, True, True, True]
    assert one_run_guesses([0, 1, 2, 3, 4, 5, 6, 7], included, 2) == (4, 3)
    # ties go by canary order, never by the coins: all scores equal, the first two are called "not
    # included", the last two "included"
    assert one_run_guesses([1.0] * 8, included, 2) == (4, 1 + 2)
    assert one_run_guesses([1.0] * 8, included, 0) == (0, 0)
    with pytest.raises(ValueError, match="finite"):
        one_run_guesses([math.nan, 1.0], [True, False], 1)


def test_with_nothing_learnt_the_per_unit_bound_is_rarely_above_zero():
    # the scores ignore the coins: 2,000 simulated audits of 40 candidates, 20 guesses each, at the
    # demo's confidence; the bound is positive only when the guesses beat chance at the 2.5% level
    # (15 or more right of 20: 2.1%), far below the 9% and 44% of a threshold chosen on the scores
    rng = np.random.default_rng(3)
    positive = 0
    for _ in range(2000):
        included = rng.random(40) < 0.5
        guesses, correct = one_run_guesses(rng.normal(size=40), included, guesses_per_side(40, 0.5))
        positive += one_run_epsilon(40, guesses, correct, 1e-5, confidence=0.975) > 0
    assert positive / 2000 < 0.035


def test_each_method_s_attacks_hold_together_at_95_percent():
    assert family_confidence(1) == 0.95 and family_confidence(2) == 0.975
    assert family_confidence(3) == pytest.approx(1 - 0.05 / 3)
    assert [claim_steps(count) for count in (1, 4, 16)] == [1, 8, 32]


def test_group_privacy_of_the_dp_claim_by_hand():
    claim = DpClaim(epsilon=1.0, delta=1e-5)
    assert claim.for_group(1) == DpClaim(1.0, 1e-5)
    four = claim.for_group(4)
    assert four.epsilon == 4.0 and four.delta == pytest.approx(4 * math.exp(3) * 1e-5)
    assert DpClaim(8.0, 1e-5).for_group(4) is None  # 4 e^24 1e-5 > 1: no claim left


def test_table_rows_flag_a_dp_claim_the_canaries_disprove():
    # 10 of 20 single-insertion candidates included, scored above every other one: 20 right of 20
    # guesses; three attacks at 1 - 0.05 / 3 each: the bound is the most 20 guesses can show, about 1.48,
    # above a claimed epsilon of 0.5. The candidates inserted into 4 segments score alike: 0.
    frame = scored(
        {
            1: ([10.0 + n for n in range(10)], [0.5 * n for n in range(10)]),
            4: ([1.0] * 5, [1.0] * 5),
        }
    )
    rows = method_rows(frame, delta=1e-5, claim=DpClaim(0.5, 1e-8), resamples=0, guesses=1.0)
    confidence = 1 - 0.05 / 3
    once = next(r for r in rows if r["attack"] == "ngram" and r["repeats"] == 1)
    most = one_run_max_epsilon(20, 20, 1e-5, confidence)
    assert once["auc"] == 1.0 and once["epsilon_lower_bound"] == most == pytest.approx(1.48, abs=0.01)
    assert (once["candidates"], once["members"], once["guesses"], once["correct"]) == (20, 10, 20, 20)
    assert once["claimed_epsilon"] == 0.5 and once["exceeds_claim"] is True
    assert once["claim_bound"] == one_run_max_epsilon(20, 20, 1e-8, confidence)
    four = next(r for r in rows if r["attack"] == "ngram" and r["repeats"] == 4)
    assert four["auc"] == 0.5 and four["bound_per"] == "group of 4"
    # 10 candidates, 10 guesses; the tied scores go by canary order, never by the coins (here the
    # included ones come first, so every guess is wrong), which proves nothing
    assert (four["guesses"], four["correct"], four["epsilon_lower_bound"]) == (10, 0, 0.0)
    # group privacy: a canary in 4 units' segments changes 4 units, 8 additions and removals
    assert four["claimed_epsilon"] == 4.0 and four["exceeds_claim"] is False
    table = pd.DataFrame(
        [
            {"dataset": "tab", "setting": "known", "idset": "direct", "method": "dpsgd", "seed": 1, **r}
            for r in rows
        ]
    )
    text = canary_markdown(table)
    assert "**Check failed: 3 DP-SGD row(s) prove more than the accountant's claim**" in text
    assert (
        "| tab known direct | dpsgd | 1 | n-gram model of the corpus | 1 (own document) | 10 / 20 | - | 1.00 "
        "| 20 / 20 | 1.48 | 1.48 | unit | 98.3% | 0.50 **exceeded** |" in text
    )
    assert (
        "| 4 segments | 5 / 10 | - | 0.50 | 0 / 10 | 0.00 | 0.68 | group of 4 | 98.3% "
        "| 0.50 (4.00 for the group) |" in text
    )


def test_a_kind_the_coins_left_without_members_has_no_auc_but_a_bound():
    frame = scored({1: ([], [0.1 * n for n in range(12)])})
    (row,) = [r for r in method_rows(frame, 1e-5, None, 0, 1.0) if r["attack"] == "ngram"]
    assert math.isnan(row["auc"]) and row["members"] == 0 and (row["guesses"], row["correct"]) == (12, 6)


def test_the_release_gate_reads_the_largest_per_unit_bound_of_the_released_text_attacks():
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
                ("ngram", 1, 0.4, 1.5),
                ("shared_run", 1, 0.2, 1.5),
                # a group of 16 units: memorisation, never a per-unit bound
                ("ngram", 16, 1.2, 1.4),
                ("likelihood_ratio", 1, 1.3, 1.5),
                ("likelihood_ratio", 16, 2.0, 1.4),
            ]
        ]
    )
    released = canary_evidence(table)
    assert released.to_dict("records") == [
        {
            **run,
            "canary_epsilon": 0.4,
            "canary_max_certifiable_epsilon": 1.5,
            "canary_adapter_epsilon": 1.3,
        }
    ]
    with_adapter = canary_evidence(table, ("ngram", "shared_run", "likelihood_ratio"))
    assert with_adapter["canary_epsilon"].tolist() == [1.3]


# --- the cost plan -----------------------------------------------------------------------------


def test_the_cost_plan_counts_the_canary_jobs():
    from plainsight import scheduling
    from plainsight.report.plan import DryRunJob, plan_table
    from test_plan import SHAPES, config, cost_model

    cfg = config(gpus_per_job=1, gpu_memory_gb=80, training_tokens_per_second=1000)
    cfg["audit"]["canaries"].update(single=10, per_repeat=5, repeats=[4, 16])
    costs = cost_model(cfg, SHAPES, lambda dataset, split: {"train": 50, "test": 10}[split])
    run = {"dataset": "tab", "setting": "known", "idset": "direct", "seed": "1"}
    example = scheduling.CANARY_TOKENS
    # 10 + 5 x 2 = 20 candidates; drawing their suffixes: 16 passes each; attacking them on a trained
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
