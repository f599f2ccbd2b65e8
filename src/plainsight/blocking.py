"""Hard blocking of private values during decoding (ICL with privacy enhancement).

Blocking a value's canonical token sequences (`bad_words_ids`) leaks: the same
string has other tokenisations (" Smith" vs "Smith", "SM"+"ITH", "(Sm"+"ith"),
and `bad_words_ids` is shared by every row of a batch. This processor works on
text instead: before each step it bans, per row, every token whose text would
complete a blocked value, matched case-insensitively with whitespace runs
collapsed, so no casing, spacing or tokenisation of the value can be produced.

A value counts only as a whole word, as the leak metric matches it: it must
start at a word boundary, and a token that completes it is banned unless the
token itself goes on with a word character ("Polat" + "li" is another word).
A value completed at a token's end is banned whatever comes next.
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache

import torch
from transformers import LogitsProcessor

_WHITESPACE = re.compile(r"\s+")
_WORD_CHAR = re.compile(r"\w")


def canonical(text: str) -> str:
    """The form in which text and values are compared: lower case, single spaces."""
    return _WHITESPACE.sub(" ", text).lower()


class Vocabulary:
    """Token texts in canonical form, indexed for prefix and substring look-ups."""

    def __init__(self, tokenizer):
        self.texts = [canonical(tokenizer.decode([i])) for i in range(len(tokenizer))]
        self._order = sorted(range(len(self.texts)), key=self.texts.__getitem__)
        self._sorted = [self.texts[i] for i in self._order]
        self.starting_with = lru_cache(maxsize=None)(self._starting_with)
        self.containing = lru_cache(maxsize=None)(self._containing)

    def _starting_with(self, rest: str) -> tuple[int, ...]:
        """Tokens that begin with `rest` and do not run on into a longer word."""
        low = bisect.bisect_left(self._sorted, rest)
        high = bisect.bisect_left(self._sorted, rest + "\U0010ffff")
        return tuple(self._order[i] for i in range(low, high) if _ends_word(self._sorted[i], len(rest)))

    def _containing(self, value: str) -> tuple[int, ...]:
        """Tokens that hold `value` as a whole word, or end in it after a word boundary."""
        found = []
        for token_id, text in enumerate(self.texts):
            position = text.find(value)
            while position != -1:
                starts_word = position == 0 or not _WORD_CHAR.match(text[position - 1])
                if starts_word and _ends_word(text, position + len(value)):
                    found.append(token_id)
                    break
                position = text.find(value, position + 1)
        return tuple(found)


def _ends_word(text: str, end: int) -> bool:
    """True unless a word character follows `end` inside the token (then it is a longer word).

    A match that reaches the token's end counts as complete: the next token is unknown.
    """
    return end >= len(text) or not _WORD_CHAR.match(text[end])


def banned_tokens(tail: str, values: list[str], vocabulary: Vocabulary) -> set[int]:
    """Token ids that would complete one of `values` (canonical form) after `tail`."""
    tail = canonical(tail)
    banned: set[int] = set()
    for value in values:
        banned.update(vocabulary.containing(value))
        for k in range(1, len(value)):
            head = value[:k]
            if not tail.endswith(head):
                continue
            before = len(tail) - k - 1
            if before >= 0 and _WORD_CHAR.match(tail[before]):
                continue  # inside a longer word: not the start of the value
            rest = value[k:]
            banned.update(vocabulary.starting_with(rest))
            if head.endswith(" "):
                banned.update(vocabulary.starting_with(" " + rest))  # two whitespace runs collapse to one
    return banned


class BlockValuesProcessor(LogitsProcessor):
    """Per-row value blocking for `generate`; rows are the batch's prompts in order."""

    def __init__(self, vocabulary: Vocabulary, row_values: list[list[str]], prompt_length: int,
                 tail_tokens: int = 48):
        self.vocabulary = vocabulary
        self.row_values = [sorted({canonical(v).strip() for v in values if v.strip()}) for values in row_values]
        self.prompt_length = prompt_length
        self.tail_tokens = tail_tokens

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        for row, values in enumerate(self.row_values):
            if not values:
                continue
            generated = input_ids[row, self.prompt_length:][-self.tail_tokens:].tolist()
            tail = "".join(self.vocabulary.texts[t] for t in generated if t < len(self.vocabulary.texts))
            banned = [t for t in banned_tokens(tail, values, self.vocabulary) if t < scores.shape[1]]
            if banned:
                scores[row, banned] = float("-inf")
        return scores
