"""Prompt formats for in-context generation.

Every example is a control code block followed by a document block; the model
writes the document after the last header, and the next `###` header marks
where the document ends:

    ### Private details
    PERSON: Mr Henrik Hasslund
    ### Document
    The applicant ...

The baseline shows documents only, without code blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

CODE_HEADER = "### Private details\n"
DOCUMENT_HEADER = "### Document\n"
BOUNDARY = "###"
EMPTY_CODE = "(none)"


@dataclass(frozen=True)
class Example:
    text: str
    code: str | None = None  # None: a baseline example without a code block


def render(examples: list[Example], target_code: str | None) -> str:
    """The prompt: the examples, then an open document for the target code."""
    blocks = [_block(example.code, example.text) for example in examples]
    blocks.append(_header(target_code))
    return "".join(blocks)


def _header(code: str | None) -> str:
    if code is None:
        return DOCUMENT_HEADER
    return f"{CODE_HEADER}{code or EMPTY_CODE}\n{DOCUMENT_HEADER}"


def _block(code: str | None, text: str) -> str:
    return f"{_header(code)}{text.strip()}\n\n"


def fit_to_budget(
    examples: list[Example], target_code: str | None, tokenizer, max_tokens: int
) -> tuple[list[Example], int]:
    """Shorten the example documents (never the codes) until the prompt fits `max_tokens`.

    The longest documents are cut first, to a common token cap, keeping their
    beginnings. Returns the examples and the number of document tokens removed.
    """

    def length(candidate: list[Example]) -> int:
        return len(tokenizer(render(candidate, target_code), add_special_tokens=False).input_ids)

    excess = length(examples) - max_tokens
    if excess <= 0:
        return examples, 0
    token_ids = [tokenizer(e.text, add_special_tokens=False).input_ids for e in examples]
    sizes = [len(ids) for ids in token_ids]
    cap = max(sizes)
    while cap > 0:
        cap -= max(1, excess // len(examples))
        cap = max(cap, 0)
        fitted = [Example(tokenizer.decode(ids[:cap]), e.code) for e, ids in zip(examples, token_ids)]
        if length(fitted) <= max_tokens:
            return fitted, sum(sizes) - sum(min(s, cap) for s in sizes)
    raise ValueError(f"the control codes alone exceed the prompt budget of {max_tokens} tokens")


def cut_at_boundary(generated: str) -> str:
    """The generated document: everything before the next header, without trailing space."""
    return generated.split(BOUNDARY, 1)[0].strip()
