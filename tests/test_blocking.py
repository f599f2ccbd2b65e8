"""Byte-level value blocking: which tokens are banned after a given tail, per document."""

from __future__ import annotations

import re

import pytest

from plainsight.generation.blocking import (
    ValueBlocker,
    Vocabulary,
    banned_tokens,
    canonical,
    casings,
    token_bytes,
)
from plainsight.matching import fold


@pytest.fixture(scope="module")
def vocabulary(tiny_tokenizer) -> Vocabulary:
    return Vocabulary(tiny_tokenizer)


def ids_with_text(vocabulary: Vocabulary, text: str) -> list[int]:
    """Token ids whose canonical text is exactly `text`; the test needs at least one."""
    ids = [i for i, t in enumerate(vocabulary.texts) if t == text]
    assert ids, f"the tiny tokenizer has no token {text!r}"
    return ids


def texts_of(vocabulary: Vocabulary, ids) -> list[str]:
    return sorted(vocabulary.texts[i] for i in ids)


def test_canonical_lowercases_and_collapses_whitespace():
    assert canonical("Mr  Cengiz\n\tPOLAT ") == b"mr cengiz polat "


def test_vocabulary_texts_are_canonical(tiny_tokenizer, vocabulary):
    assert len(vocabulary.texts) == len(tiny_tokenizer)
    polat = tiny_tokenizer.convert_tokens_to_ids("ĠPolat")
    assert vocabulary.texts[polat] == b" polat"


def test_completing_a_started_value(vocabulary):
    banned = banned_tokens(b"the applicant mr cengiz pol", [b"cengiz polat"], vocabulary)
    assert banned, "something must complete 'cengiz pol' + 'at'"
    assert all(vocabulary.texts[i].startswith(b"at") for i in banned), texts_of(vocabulary, banned)
    assert set(ids_with_text(vocabulary, b"at")) <= banned  # "at" and "At"
    # a token that goes on with a letter after "at" makes a longer word ("Polat" + "ion"): allowed
    continuing = [
        i
        for i, t in enumerate(vocabulary.texts)
        if len(t) > 2 and t.startswith(b"at") and chr(t[2]).isalpha()
    ]
    assert continuing, "the tiny tokenizer should have a token like 'ation'"
    assert not banned & set(continuing)
    # tokens that only contain "at" later, or start with a space, do not complete the value here
    assert not banned & set(ids_with_text(vocabulary, b" at"))


def test_completing_after_the_first_word(vocabulary):
    banned = banned_tokens(b"the applicant mr cengiz", [b"cengiz polat"], vocabulary)
    assert texts_of(vocabulary, banned) == [b" polat"]  # " polatli" is another word, " pola" is incomplete


def test_head_ending_in_a_space_bans_both_spacings(vocabulary):
    banned = banned_tokens(b"the applicant mr cengiz ", [b"cengiz polat"], vocabulary)
    # "cengiz " + " polat" collapses to "cengiz polat" as well
    assert set(ids_with_text(vocabulary, b" polat")) <= banned
    assert not banned & set(ids_with_text(vocabulary, b" polatli"))


def test_whitespace_runs_in_the_tail_collapse(vocabulary):
    reference = banned_tokens(b"the applicant mr cengiz pol", [b"cengiz polat"], vocabulary)
    assert banned_tokens(b"the applicant mr cengiz\n\n   pol", [b"cengiz polat"], vocabulary) == reference


def test_tail_inside_a_longer_word_bans_nothing_extra(vocabulary):
    fresh = banned_tokens(b"", [b"polat"], vocabulary)
    inside = banned_tokens(b"the applicant mr xpol", [b"polat"], vocabulary)
    assert inside == fresh  # only the tokens that hold the whole value by themselves
    assert not inside & set(ids_with_text(vocabulary, b"at"))
    # the same tail at a word boundary does ban "at"
    assert set(ids_with_text(vocabulary, b"at")) <= banned_tokens(
        b"the applicant mr pol", [b"polat"], vocabulary
    )
    # and for the two-word value, "xcengiz" is not "cengiz"
    assert banned_tokens(b"mr xcengiz pol", [b"cengiz polat"], vocabulary) == banned_tokens(
        b"", [b"cengiz polat"], vocabulary
    )


def test_tail_case_does_not_matter(vocabulary):
    lower = banned_tokens(b"the applicant mr cengiz pol", [b"cengiz polat"], vocabulary)
    assert banned_tokens(b"THE APPLICANT MR CENGIZ POL", [b"cengiz polat"], vocabulary) == lower
    assert banned_tokens(b"The Applicant Mr Cengiz Pol", [b"cengiz polat"], vocabulary) == lower


def test_fresh_start_bans_tokens_holding_the_whole_value(vocabulary):
    banned = banned_tokens(b"", [b"polat"], vocabulary)
    assert texts_of(vocabulary, banned) == [b" polat"]  # not " polatli", not " pola"
    banned = banned_tokens(b"", [b"at"], vocabulary)
    assert {b"at", b" at"} == set(texts_of(vocabulary, banned))  # not "ation", " att", " attention"


def test_several_values_union(vocabulary):
    banned = banned_tokens(b"mr cengiz pol", [b"cengiz polat", b"polat"], vocabulary)
    assert banned == (
        banned_tokens(b"mr cengiz pol", [b"cengiz polat"], vocabulary)
        | banned_tokens(b"mr cengiz pol", [b"polat"], vocabulary)
    )
    assert set(ids_with_text(vocabulary, b" polat")) <= banned


def test_each_document_bans_what_would_complete_its_own_values(tiny_tokenizer, vocabulary):
    tails = [" Mr Cengiz Pol", " Mr Henrik Hass"]
    generated = [tiny_tokenizer(t, add_special_tokens=False).input_ids for t in tails]
    polat = ValueBlocker(vocabulary, ["Cengiz Polat"])
    hasslund = ValueBlocker(vocabulary, ["Henrik HASSLUND", " "])
    assert polat.values == [b"cengiz polat"] and hasslund.values == [b"henrik hasslund"]

    row0, row1 = polat.banned(generated[0]), hasslund.banned(generated[1])
    assert row0 == banned_tokens(tails[0], [b"cengiz polat"], vocabulary)
    assert set(ids_with_text(vocabulary, b"at")) <= row0
    assert row1 == banned_tokens(tails[1], [b"henrik hasslund"], vocabulary)
    assert set(ids_with_text(vocabulary, b"lund")) <= row1  # "hass" + "lund"
    assert not set(ids_with_text(vocabulary, b"lund")) & row0
    assert not set(ids_with_text(vocabulary, b"at")) & row1


def test_a_document_without_values_bans_nothing(tiny_tokenizer, vocabulary):
    generated = tiny_tokenizer("The applicant mr Cengiz Pol", add_special_tokens=False).input_ids
    assert ValueBlocker(vocabulary, []).banned(generated) == set()
    assert set(ids_with_text(vocabulary, b"at")) <= ValueBlocker(vocabulary, ["Cengiz Polat"]).banned(
        generated
    )


def test_only_the_generated_tail_counts(tiny_tokenizer, vocabulary):
    """Nothing generated yet: only tokens that hold a whole value are banned, not the prompt's
    'Pol' + 'at'."""
    banned = ValueBlocker(vocabulary, ["Cengiz Polat"]).banned([])
    assert banned == banned_tokens(b"", [b"cengiz polat"], vocabulary)
    assert not set(ids_with_text(vocabulary, b"at")) & banned


def test_the_tail_is_the_last_tail_tokens(tiny_tokenizer, vocabulary):
    generated = tiny_tokenizer(" Mr Cengiz Pol", add_special_tokens=False).input_ids
    filler = tiny_tokenizer(" the", add_special_tokens=False).input_ids
    blocker = ValueBlocker(vocabulary, ["Cengiz Polat"], tail_tokens=len(generated))
    assert set(ids_with_text(vocabulary, b"at")) <= blocker.banned(filler * 5 + generated)
    assert not set(ids_with_text(vocabulary, b"at")) & blocker.banned(generated + filler)


def test_casings_of_a_non_ascii_value_include_its_form_without_diacritics():
    assert casings("Şahin") == sorted(
        {"Şahin".encode(), "şahin".encode(), "ŞAHIN".encode().lower(), b"sahin"}
    )
    assert casings("Gülşen Yılmaz") == sorted(
        {
            "Gülşen Yılmaz".encode().lower(),
            "GÜLŞEN YILMAZ".encode().lower(),
            "gülşen yılmaz".encode(),
            b"gulsen yilmaz",
        }
    )
    assert casings("  Cengiz POLAT ") == [b"cengiz polat"]


def test_token_bytes_rebuild_split_characters(tiny_tokenizer):
    """A character the tiny vocabulary lacks is spelt in byte tokens; their bytes join to its UTF-8."""
    ids = tiny_tokenizer("Şahin", add_special_tokens=False).input_ids
    raw = token_bytes(tiny_tokenizer)
    assert b"".join(raw[i] for i in ids) == "Şahin".encode()
    assert any(raw[i] == "Ş".encode()[:1] for i in ids)  # a token that is half a character


def test_a_value_is_banned_after_half_of_its_first_character(vocabulary, tiny_tokenizer):
    first_byte = "Ş".encode()[:1]
    banned = banned_tokens(b"mr " + first_byte, casings("Şahin"), vocabulary)
    second = vocabulary.texts.index("Ş".encode()[1:])
    assert second not in banned  # "Ş" alone is not yet "Şahin"
    raw_tail = b"mr " + "Şahi".encode()
    assert set(ids_with_text(vocabulary, b"n")) <= banned_tokens(raw_tail, casings("Şahin"), vocabulary)


def test_token_bytes_of_a_sentencepiece_style_tokenizer():
    """Llama-2-style vocabularies write spaces as '▁' and unknown bytes as '<0xNN>' tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first")
    backend.decoder = decoders.Sequence(
        [decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()]
    )
    byte_tokens = [f"<0x{byte:02X}>" for byte in range(256)]
    trainer = trainers.BpeTrainer(
        vocab_size=350, special_tokens=["<unk>", "</s>", *byte_tokens], show_progress=False
    )
    backend.train_from_iterator(["The applicant Mr Cengiz Polat lived in Ankara."] * 20, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="</s>", unk_token="<unk>")

    ids = tokenizer("Mr Şahin", add_special_tokens=False).input_ids
    raw = token_bytes(tokenizer)
    assert "<0xC5>" in tokenizer.convert_ids_to_tokens(ids)
    assert b"".join(raw[i] for i in ids) == " Mr Şahin".encode()
    assert raw[tokenizer.eos_token_id] == b""


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance by the textbook dynamic programme (the oracle for rapidfuzz's)."""
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        for j, char_b in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        previous = current
    return previous[-1]


def test_near_words_are_blocked_with_their_variants(tiny_tokenizer, vocabulary):
    """After " Mr Hassl", exactly the tokens that make the word within one edit of "hasslund" are banned."""
    blocker = ValueBlocker(vocabulary, [], near_words=["Hasslund"])
    after = tiny_tokenizer(" Mr Hassl", add_special_tokens=False).input_ids
    expected = set()
    for token_id, text in enumerate(vocabulary.texts):
        decoded = text.decode("utf-8", "ignore")
        leading = re.match(r"\w*", decoded).group(0)
        if leading:  # goes on with the word being written
            word = fold("hassl" + leading)
            if edit_distance(word, "hasslund") <= (1 if min(len(word), 8) >= 5 else 0):
                expected.add(token_id)
        separated = re.match(r"\W+(\w+)", decoded)
        if separated and edit_distance(fold(separated.group(1)), "hasslund") <= 1:
            expected.add(token_id)  # starts a new word that is a variant
    assert expected  # the tiny vocabulary can write some variant
    assert blocker.banned(after) == expected
    # a word that starts otherwise bans only tokens that would start a new variant
    assert blocker.banned(tiny_tokenizer(" the court", add_special_tokens=False).input_ids) <= expected


def test_short_near_words_are_blocked_exactly_only(vocabulary):
    assert ValueBlocker(vocabulary, [], near_words=["Nina", "Ole"]).near_words == []
