"""The shared matcher: near variants of private values, the corpus's ordinary words, distinctive words."""

from __future__ import annotations

import pytest

from conftest import TAB_SAMPLE
from plainsight.matching import (
    NearMatcher,
    allowed_edits,
    distinctive_words,
    fold,
    folded_words,
    name_words,
    private_parts,
    public_words,
)

VALUES = ["Mr Henrik Hasslund", "Ms Nina Holst-Christensen", "40593/04", "15 October 2004", "Istanbul"]
NAME_WORDS = name_words(["Mr Henrik Hasslund", "Ms Nina Holst-Christensen"])


@pytest.fixture(scope="module")
def matcher() -> NearMatcher:
    return NearMatcher([*VALUES, *NAME_WORDS])


def test_fold_drops_diacritics_case_and_dotless_i():
    assert fold("Şahin YILDIZ Gülşen Işık") == "sahin yildiz gulsen isik"
    assert folded_words("Holst-Christensen,  no. 40593/04") == ["holst", "christensen", "no", "40593", "04"]


@pytest.mark.parametrize(("letters", "edits"), [(3, 0), (4, 0), (5, 1), (9, 1), (10, 2), (16, 2)])
def test_allowed_edits_grow_with_length(letters, edits):
    assert allowed_edits(letters) == edits


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("She met Ms Holst-Christenson yesterday.", "Christensen"),  # one letter of a name word changed
        ("Ms Holst-Christensin was heard.", "Christensen"),
        ("The applicant, Mr Henrik Hasslud, complained.", "Mr Henrik Hasslund"),  # one letter dropped
        ("Mr Henrik Hasslud complained.", "Hasslund"),
        ("The applicant, Mr Henrik", None),
        ("right after Mr Henrik came Hasslund alone", "Hasslund"),  # a name word alone
        ("the application no. 40593/02 was lodged", "40593/04"),  # one digit of a code
        ("application 40593-04 and", "40593/04"),  # punctuation aside
        ("application 40593 / 04 and", "40593/04"),
        ("on 15 october 2004 he", "15 October 2004"),  # case aside
        ("born in İstanbul", "Istanbul"),  # diacritics aside
        ("MS NINA HOLST CHRISTENSEN", "Ms Nina Holst-Christensen"),
        ("Ms Nina Holst-Kristensen", "Ms Nina Holst-Christensen"),  # two edits from 10 letters on
    ],
)
def test_near_variants_are_found(matcher, text, found):
    result = matcher.found(text)
    if found is None:
        assert "Mr Henrik Hasslund" not in result and "Hasslund" not in result
    else:
        assert found in result, result


@pytest.mark.parametrize(
    "text",
    [
        "The Court held a hearing on the merits.",
        "in 2004 the applicant moved",  # a year alone is not the full date
        "on 15 October 2005 the court",  # another date: dates are not codes
        "the application no. 40513/14 and 50593/05",  # two digits changed
        "application 405930/4",  # other digit groups
        "the hasslund rule",  # lower case: exact word still counts, see below
    ],
)
def test_other_text_is_not_a_near_variant(matcher, text):
    found = matcher.found(text)
    if text == "the hasslund rule":
        assert found == ["Hasslund"]  # the word itself counts whatever its case; only variants need a capital
    else:
        assert found == [], found


def test_words_joined_or_split_are_variants():
    assert NearMatcher(["Holst-Christensen"]).found("Ms HolstChristensen") == ["Holst-Christensen"]
    assert NearMatcher(["Vandermeer"]).found("Mr Van der Meer") == []  # three edits apart: not a variant
    assert NearMatcher(["Vandermeer"]).found("Mr Vander Meer") == ["Vandermeer"]


def test_short_words_need_an_exact_match():
    holst = NearMatcher(["Holst"])
    assert holst.found("Mr Holt said") == []  # 4-5 letters: no edit allowed
    assert holst.found("Mr Holst said") == ["Holst"]
    assert NearMatcher(["Nina"]).found("Nino and Nina's") == ["Nina"]


def test_a_one_word_variant_must_be_capitalised_and_not_an_ordinary_word():
    carter = NearMatcher(["Carter"], common_words=frozenset({"carer"}))
    assert carter.found("the carer came") == []
    assert carter.found("Carer services") == []  # capitalised, but an ordinary word of the corpus
    assert NearMatcher(["Carter"]).found("Carer services") == ["Carter"]
    assert carter.found("Mr Cartr said") == ["Carter"]


def test_found_keeps_the_given_order_and_includes_exact_matches():
    matcher = NearMatcher(["Istanbul", "40593/04", "Hasslund"])
    assert matcher.found("Hasslund, 40593/04 and Istanbul") == ["Istanbul", "40593/04", "Hasslund"]
    assert NearMatcher([]).found("anything") == []


def test_public_words_are_the_words_outside_private_values_in_two_documents():
    texts = {
        ("d1", 0): "The applicant Hasslund lives in Aarhus. The court met.",
        ("d2", 0): "The court heard Ms Holst. She lives in Aarhus.",
        ("d3", 0): "Hasslund wrote.",
    }
    private = {("d1", 0): ["Hasslund", "Aarhus"], ("d2", 0): ["Ms Holst"], ("d3", 0): []}
    words = public_words(texts, private)
    assert {"the", "court", "lives", "in"} <= words
    assert "aarhus" not in words  # private in d1, public only in d2
    assert "hasslund" not in words  # only d3 writes it outside a value (an annotation miss, say)
    assert "holst" not in words
    assert public_words(texts, private, min_documents=1) >= {"hasslund", "aarhus", "wrote"}


def test_distinctive_words_by_type():
    common = frozenset({"court", "of", "city", "regional"})
    assert distinctive_words("PERSON", "Mr Henrik Hasslund", common) == ["Henrik", "Hasslund"]
    assert distinctive_words("ORG", "Regional Court of Odense", common) == ["Odense"]
    assert distinctive_words("LOC", "City of Aarhus", common) == ["Aarhus"]
    assert distinctive_words("LOC", "Oslo", common) == ["Oslo"]
    assert distinctive_words("ORG", "ABC Ltd", common) == []  # words under four letters
    assert distinctive_words("DATETIME", "15 October 2004", common) == []
    assert distinctive_words("CODE", "40593/04", common) == [
        "40593"
    ]  # a group where one changed digit identifies
    assert distinctive_words("CODE", "AB-12/3", common) == []
    assert private_parts(
        [("PERSON", "Ms Nina Holst"), ("PERSON", "Mr Lars Holst"), ("ORG", "Holst Group")],
        frozenset({"group"}),
    ) == ["Nina", "Holst", "Lars"]


def test_the_non_private_text_of_a_real_tab_document_holds_no_near_variant():
    """On real court text, outside its annotated values, no variant of those values is found."""
    if not TAB_SAMPLE.exists():
        pytest.skip(f"TAB sample not found at {TAB_SAMPLE}")
    import json

    from plainsight.matching import value_pattern

    documents = json.loads(TAB_SAMPLE.read_text(encoding="utf-8"))
    texts, privates = {}, {}
    for doc in documents:
        annotator = sorted(doc["annotations"])[0]
        mentions = doc["annotations"][annotator]["entity_mentions"]
        private = [m for m in mentions if m["identifier_type"] in ("DIRECT", "QUASI")]
        texts[(doc["doc_id"], 0)] = doc["text"]
        privates[(doc["doc_id"], 0)] = [m["span_text"] for m in private]
    common = public_words(texts, privates)
    checked = 0
    for key, text in texts.items():
        values = privates[key]
        persons = [
            m["span_text"]
            for doc in documents
            if doc["doc_id"] == key[0]
            for m in doc["annotations"][sorted(doc["annotations"])[0]]["entity_mentions"]
            if m["entity_type"] == "PERSON" and m["identifier_type"] in ("DIRECT", "QUASI")
        ]
        public = text
        for value in sorted(set(values) | set(name_words(persons)), key=len, reverse=True):
            public = value_pattern(value).sub(" ", public)
        found = NearMatcher([*values, *name_words(persons)], common).found(public)
        checked += len(values)
        assert found == [], (key, found)
    assert checked > 50
