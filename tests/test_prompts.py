"""Prompt rendering, cutting at the next header, and fitting prompts into a token budget."""

from __future__ import annotations

import pytest

from plainsight.methods.prompts import Example, cut_at_boundary, fit_to_budget, render

# --- render ---------------------------------------------------------------------------------------


def test_render_two_examples_and_target_code_exactly():
    examples = [
        Example(
            "The applicant, Mr Cengiz Polat, was born in 1960.", "PERSON: Mr Cengiz Polat\nDATETIME: 1960"
        ),
        Example("  The Court declared the application admissible.\n\n", "LOC: Ankara"),
    ]
    expected = (
        "### Private details\n"
        "PERSON: Mr Cengiz Polat\n"
        "DATETIME: 1960\n"
        "### Document\n"
        "The applicant, Mr Cengiz Polat, was born in 1960.\n"
        "\n"
        "### Private details\n"
        "LOC: Ankara\n"
        "### Document\n"
        "The Court declared the application admissible.\n"
        "\n"
        "### Private details\n"
        "PERSON: Ms Dana Hayes\n"
        "### Document\n"
    )
    assert render(examples, "PERSON: Ms Dana Hayes") == expected


def test_render_baseline_has_documents_only():
    prompt = render([Example("First document."), Example("Second document.")], None)
    assert prompt == "### Document\nFirst document.\n\n### Document\nSecond document.\n\n### Document\n"
    assert "### Private details" not in prompt


def test_render_empty_codes_show_none():
    prompt = render([Example("A document without private values.", "")], "")
    assert prompt == (
        "### Private details\n(none)\n### Document\nA document without private values.\n\n"
        "### Private details\n(none)\n### Document\n"
    )


def test_render_without_examples_is_the_open_header():
    assert render([], "ORG: NASA") == "### Private details\nORG: NASA\n### Document\n"
    assert render([], None) == "### Document\n"


# --- cut_at_boundary ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "generated, expected",
    [
        (
            " The applicant was born in 1970.\n\n### Private details\nPERSON: Mr X\n",
            "The applicant was born in 1970.",
        ),
        ("First part.\n### Document\nSecond.\n### Document\nThird.", "First part."),
        ("No header at all.  \n", "No header at all."),
        ("### Document\nEverything after a leading header.", ""),
        ("Two hashes ## are not a header.\n", "Two hashes ## are not a header."),
        ("Text then #### four", "Text then"),
        ("", ""),
    ],
)
def test_cut_at_boundary(generated, expected):
    assert cut_at_boundary(generated) == expected


# --- fit_to_budget --------------------------------------------------------------------------------

LONG = " ".join(
    [
        "The applicant, Mr Cengiz Polat, was born in 1960 and lives in Ankara.",
        "The Government argued that the applicant had not exhausted domestic remedies.",
        "On 12 March 1999 the Court declared the application admissible.",
        "The Ankara Assize Court sentenced Mr Polat to 6 years' imprisonment.",
        "The applicant complained under Article 6 of the Convention about the length of the proceedings.",
        "In a judgment of 3 June 2001, the Court of Cassation upheld the decision.",
    ]
    * 2
)
MEDIUM = (
    "The applicant was represented by Ms Nina Holst, a lawyer practising in Copenhagen. "
    "Mr Henrik Hasslund lodged an appeal with the Supreme Court in Copenhagen."
)
SHORT = "The Court declared the application admissible."

CODES = [
    "PERSON: Mr Cengiz Polat\nLOC: Ankara\nDATETIME: 12 March 1999",
    "PERSON: Ms Nina Holst, Mr Henrik Hasslund\nLOC: Copenhagen",
    "",
]
TARGET = "PERSON: Ms Dana Hayes\nLOC: Tokyo"


def _examples() -> list[Example]:
    return [Example(text, code) for text, code in zip([LONG, MEDIUM, SHORT], CODES)]


def _length(tokenizer, examples, target) -> int:
    return len(tokenizer(render(examples, target), add_special_tokens=False).input_ids)


def _tokens(tokenizer, text: str) -> int:
    return len(tokenizer(text, add_special_tokens=False).input_ids)


@pytest.mark.parametrize("cut", [5, 40, 120])
def test_fit_to_budget_shortens_documents_only(tiny_tokenizer, cut):
    examples = _examples()
    full = _length(tiny_tokenizer, examples, TARGET)
    budget = full - cut
    fitted, removed = fit_to_budget(examples, TARGET, tiny_tokenizer, budget)

    assert _length(tiny_tokenizer, fitted, TARGET) <= budget
    assert removed > 0
    assert len(fitted) == len(examples)
    prompt = render(fitted, TARGET)
    for original, shortened in zip(examples, fitted):
        assert shortened.code == original.code  # codes are never touched
        block = f"### Private details\n{original.code or '(none)'}\n### Document\n"
        assert block in prompt
        assert original.text.startswith(shortened.text.rstrip())  # a prefix, up to whitespace at the cut
    assert prompt.endswith(f"### Private details\n{TARGET}\n### Document\n")
    # the document tokens that went are counted (re-tokenising a decoded prefix gives the same tokens)
    kept = sum(_tokens(tiny_tokenizer, e.text) for e in fitted)
    assert removed == sum(_tokens(tiny_tokenizer, e.text) for e in examples) - kept


def test_fit_to_budget_cuts_the_longest_document_first(tiny_tokenizer):
    examples = _examples()
    budget = _length(tiny_tokenizer, examples, TARGET) - 10
    fitted, removed = fit_to_budget(examples, TARGET, tiny_tokenizer, budget)
    assert 10 <= removed < _tokens(tiny_tokenizer, LONG)
    assert len(fitted[0].text) < len(LONG)
    assert fitted[1].text.strip() == MEDIUM  # shorter documents stay whole while the cap is above them
    assert fitted[2].text.strip() == SHORT


def test_fit_to_budget_within_budget_is_unchanged(tiny_tokenizer):
    examples = _examples()
    full = _length(tiny_tokenizer, examples, TARGET)
    for budget in (full, full + 100):
        fitted, removed = fit_to_budget(examples, TARGET, tiny_tokenizer, budget)
        assert fitted == examples
        assert removed == 0


def test_fit_to_budget_baseline_without_codes(tiny_tokenizer):
    examples = [Example(LONG), Example(MEDIUM)]
    budget = _length(tiny_tokenizer, examples, None) - 30
    fitted, removed = fit_to_budget(examples, None, tiny_tokenizer, budget)
    assert _length(tiny_tokenizer, fitted, None) <= budget
    assert removed >= 30 - 2  # the cut may also drop a trailing space that rendering strips anyway
    assert all(e.code is None for e in fitted)
    assert "### Private details" not in render(fitted, None)


def test_fit_to_budget_smaller_than_the_codes_raises(tiny_tokenizer):
    examples = _examples()
    codes_only = _length(tiny_tokenizer, [Example("", e.code) for e in examples], TARGET)
    with pytest.raises(ValueError, match="budget"):
        fit_to_budget(examples, TARGET, tiny_tokenizer, codes_only - 1)
    # exactly the codes' length fits, with every document emptied
    fitted, removed = fit_to_budget(examples, TARGET, tiny_tokenizer, codes_only)
    assert all(e.text == "" for e in fitted)
    assert removed == sum(_tokens(tiny_tokenizer, e.text) for e in examples)
