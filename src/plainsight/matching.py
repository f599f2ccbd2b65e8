"""Whether a text contains a private value: the one matcher that blocking, regeneration, the
masked objective, fictional codes and the leak metrics share.

- exact: a value matches case-insensitively as a whole word, whitespace inside it matching any
  run of whitespace;
- partial: one identifying word of a person name (a surname alone);
- near: a variant a reader would still recognise (`NearMatcher`): "Holst-Christenson" for
  "Holst-Christensen", "Mr Henrik Hasslud" for "Mr Henrik Hasslund", "40593/02" for "40593/04".
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

# Titles are not names: "Mr" or "Judge" alone says nothing about who a person is.
HONORIFICS: frozenset[str] = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "judge"})


def normalise_value(value: str) -> str:
    """Collapse internal whitespace (line breaks inside a mention) for display in a code."""
    return " ".join(value.split())


def unique_values(values: Iterable[str]) -> list[str]:
    """Whitespace-normalised, non-empty values without repeats, in first-seen order.

    Normalising first makes a value split over two lines in the source count once.
    """
    return list(dict.fromkeys(v for v in map(normalise_value, values) if v))


@cache
def value_pattern(value: str) -> re.Pattern[str]:
    """A case-insensitive whole-word pattern for `value`; whitespace in it matches any run.

    Lookarounds rather than `\\b` so that values with non-word edges ("[**Hospital 18**]",
    "$87,500") still match, while "40593/04" does not match inside "140593/04".
    """
    parts = value.split()
    if not parts:
        raise ValueError("cannot match an empty value")
    body = r"\s+".join(re.escape(part) for part in parts)
    return re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)


@cache
def _needle(value: str) -> str:
    """The longest word of `value`, case-folded: it occurs in any text that the pattern matches."""
    return max(value.split(), key=len).casefold()


def _occurs(value: str, text: str, folded_text: str) -> bool:
    """Whether `value` matches in `text`; a substring test first skips most regex searches.

    Fine-tuning checks every generation against thousands of private values.
    """
    return _needle(value) in folded_text and value_pattern(value).search(text) is not None


def leaked_values(text: str, values: Iterable[str]) -> list[str]:
    """The distinct private values that occur in `text`."""
    folded = text.casefold()
    return [value for value in unique_values(values) if _occurs(value, text, folded)]


def name_words(person_values: Iterable[str], min_letters: int = 4) -> list[str]:
    """The distinct words of person names that identify on their own.

    Honorifics and words shorter than `min_letters` letters are left out: they occur in
    ordinary text too often to show that a name was copied.
    """
    words = (word for value in person_values for word in re.findall(r"\w+", value))
    return list(
        dict.fromkeys(
            word
            for word in words
            if word.casefold() not in HONORIFICS and sum(c.isalpha() for c in word) >= min_letters
        )
    )


def partial_leak(text: str, person_values: Iterable[str], min_letters: int = 4) -> bool:
    """Whether any identifying word of a person name (a surname alone, say) occurs in `text`."""
    folded = text.casefold()
    return any(_occurs(word, text, folded) for word in name_words(person_values, min_letters))


# --- folding: the form in which near variants and fictional values are compared ----------------

_WORD = re.compile(r"\w+")


def strip_diacritics(text: str) -> str:
    """`text` without diacritics: NFKD, combining marks dropped, dotless i as i ("Şahin" -> "Sahin")."""
    decomposed = unicodedata.normalize("NFKD", text.replace("ı", "i"))
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def fold(text: str) -> str:
    """`text` without diacritics, case-folded: the form in which near variants are compared."""
    return strip_diacritics(text).casefold()


def words(text: str) -> list[str]:
    """The case-folded word tokens of a text (runs of word characters): how copied passages are compared."""
    return [word.casefold() for word in _WORD.findall(text)]


def folded_words(text: str) -> list[str]:
    """The folded words of `text`: hyphens, punctuation and whitespace all separate words."""
    return _WORD.findall(fold(text))


def _letters(words: Iterable[str]) -> int:
    return sum(char.isalpha() for word in words for char in word)


def _digits(words: Iterable[str]) -> int:
    return sum(char.isdigit() for word in words for char in word)


def allowed_edits(letters: int) -> int:
    """Edits by which a near variant may differ: none below 5 letters, 1 for 5-9, 2 from 10.

    Shorter words are too often other words one edit away ("Holt" and "Holst").
    """
    return 0 if letters < 5 else 1 if letters < 10 else 2


# A code: digit groups joined by punctuation ("40593/04", "12-345-67"); one digit of it may change.
_CODE = re.compile(r"\d+(?:[^\w\s]+\d+)*")
# One changed digit still identifies a code of this many digits.
CODE_DIGITS_FOR_A_CHANGE = 5


@dataclass(frozen=True)
class _Target:
    value: str
    words: tuple[str, ...]  # folded
    code: bool  # a digit code of CODE_DIGITS_FOR_A_CHANGE digits or more
    numeric: bool  # holds a digit: matched by its digit groups (`_near_numbers`), not by letter edits

    @classmethod
    def of(cls, value: str) -> _Target:
        words = tuple(folded_words(value))
        digits = _digits(words)
        code = _CODE.fullmatch(value.strip()) is not None and digits >= CODE_DIGITS_FOR_A_CHANGE
        return cls(value, words, code, digits > 0)

    def window_sizes(self) -> range:
        """Words a variant may span: as many as the value, or one fewer or more for names and
        other words ("Holst Christensen" for "HolstChristensen"); numbers keep their groups."""
        n = len(self.words)
        if self.numeric:
            return range(n, n + 1)
        return range(max(1, n - 1), n + 2)


def _near_numbers(candidate: Sequence[str], target: _Target) -> bool:
    """Same digits in the same groups (punctuation aside); letters within the allowed edits; a code
    may differ in one digit."""
    changed_digits = 0
    letters_a, letters_b = [], []
    for got, want in zip(candidate, target.words):
        if want.isdigit() or got.isdigit():
            if len(got) != len(want) or not got.isdigit() or not want.isdigit():
                return False
            changed_digits += sum(a != b for a, b in zip(got, want))
        else:
            letters_a.append(got)
            letters_b.append(want)
    if changed_digits > (1 if target.code else 0):
        return False
    a, b = " ".join(letters_a), " ".join(letters_b)
    edits = allowed_edits(min(_letters(letters_a), _letters(letters_b)))
    return Levenshtein.distance(a, b, score_cutoff=edits) <= edits


class NearMatcher:
    """Finds the values of which a text holds the value itself or a near variant of it.

    A value near-matches a run of the text's folded words (see `fold`) when:
    - letters only: the runs differ by at most `allowed_edits` of the shorter one's letters, the
      run spanning as many words as the value or one fewer or more;
    - with digits: the same digit groups in the same order, punctuation aside, the letters within
      the allowed edits; a code ("40593/04") of 5 or more digits may differ in one digit.

    A one-word run that differs from the value (a variant, not the value) must be capitalised in the
    text, as names are, and must not be a word of `common_words` (the corpus's ordinary words,
    `public_words`): "carer" is not a variant of "Carter". Exact occurrences always count, so what
    `leaked_values` and `partial_leak` find (given the name words as values) is found here too.
    """

    def __init__(self, values: Iterable[str], common_words: frozenset[str] = frozenset()):
        self.targets = [_Target.of(value) for value in unique_values(values)]
        self.targets = [t for t in self.targets if t.words]
        self.common_words = common_words
        # window size -> the targets a run of that many words may match, in the order given: a text is
        # checked against thousands of values, so what depends on the values alone is worked out once
        self._targets_by_size: dict[int, list[int]] = {}
        for n, target in enumerate(self.targets):
            for size in target.window_sizes():
                self._targets_by_size.setdefault(size, []).append(n)

    def found(self, text: str) -> list[str]:
        """The values (in the order given) that occur in `text` exactly or as a near variant."""
        raw = _WORD.findall(text)
        words = [fold(word) for word in raw]
        variants_allowed = [word[:1].isupper() and fold(word) not in self.common_words for word in raw]
        hits: set[int] = set()
        for size in sorted(self._targets_by_size):
            if size > len(words):  # no run of that many words, nor of more
                break
            runs = _Runs(words, size, variants_allowed)
            open_targets = [n for n in self._targets_by_size[size] if n not in hits]
            hits.update(
                n
                for n in open_targets
                if runs.holds_exactly(self.targets[n])
                or (self.targets[n].numeric and runs.holds_number(self.targets[n]))
            )
            letters = [n for n in open_targets if n not in hits and not self.targets[n].numeric]
            hits.update(runs.near_letters([(n, self.targets[n]) for n in letters]))
        return [target.value for n, target in enumerate(self.targets) if n in hits]


class _Runs:
    """The runs of `size` consecutive words of one text, indexed for exact and near look-ups."""

    def __init__(self, words: Sequence[str], size: int, variants_allowed: Sequence[bool]):
        starts = range(len(words) - size + 1)
        self.exact = {tuple(words[i : i + size]) for i in starts}
        # A one-word variant must be capitalised and not an ordinary word (see NearMatcher).
        eligible = list(
            dict.fromkeys(tuple(words[i : i + size]) for i in starts if size > 1 or variants_allowed[i])
        )
        self.numbers = [run for run in eligible if _digits(run)]
        self.letters = [run for run in eligible if not _digits(run)]

    def holds_exactly(self, target: _Target) -> bool:
        return target.words in self.exact

    def holds_number(self, target: _Target) -> bool:
        return any(len(run) == len(target.words) and _near_numbers(run, target) for run in self.numbers)

    def near_letters(self, targets: list[tuple[int, _Target]]) -> set[int]:
        """The keys of the letter-only targets that some run matches within the allowed edits."""
        targets = [(key, t) for key, t in targets if allowed_edits(_letters(t.words))]
        if not targets or not self.letters:
            return set()
        most = max(allowed_edits(_letters(t.words)) for _, t in targets)
        # rapidfuzz compares every target with every run in C; the few close pairs are checked exactly.
        distances = process.cdist(
            [" ".join(t.words) for _, t in targets],
            [" ".join(r) for r in self.letters],
            scorer=Levenshtein.distance,
            score_cutoff=most,
            dtype=np.int32,
        )
        found = set()
        for row, column in zip(*np.nonzero(distances <= most)):
            key, target = targets[row]
            run = self.letters[column]
            if distances[row, column] <= allowed_edits(min(_letters(run), _letters(target.words))):
                found.add(key)
        return found


# --- the corpus's ordinary words and a value's distinctive words ---------------------------------

# Words of ORG and LOC values are distinctive from this many letters on, as name words are.
DISTINCTIVE_MIN_LETTERS = 4


def public_words(
    texts: Mapping[tuple[str, int], str],
    private: Mapping[tuple[str, int], Sequence[str]],
    min_documents: int = 2,
) -> frozenset[str]:
    """The folded words that the corpus uses outside its private values, in `min_documents` documents.

    `texts` and `private` are keyed by (doc_id, segment). A word needs two documents by default so
    that a value the annotation missed once does not become an ordinary word.
    """
    documents: dict[str, set[str]] = {}
    for (doc_id, segment), text in texts.items():
        public = text
        for value in sorted(unique_values(private.get((doc_id, segment), [])), key=len, reverse=True):
            public = value_pattern(value).sub(" ", public)
        documents.setdefault(doc_id, set()).update(folded_words(public))
    counts = Counter(word for words in documents.values() for word in words)
    return frozenset(word for word, count in counts.items() if count >= min_documents)


def distinctive_words(entity_type: str, value: str, common_words: frozenset[str]) -> list[str]:
    """The words of a value that identify on their own: a person's name words (as `name_words`), the
    words of an organisation or place that the corpus does not use in its ordinary text, and the
    digit groups of a code long enough that one changed digit still identifies it."""
    if entity_type == "PERSON":
        return name_words([value])
    if entity_type == "CODE":
        return [
            group
            for group in dict.fromkeys(re.findall(r"\d+", value))
            if len(group) >= CODE_DIGITS_FOR_A_CHANGE
        ]
    if entity_type in ("ORG", "LOC"):
        return [
            word
            for word in dict.fromkeys(_WORD.findall(value))
            if _letters([word]) >= DISTINCTIVE_MIN_LETTERS and fold(word) not in common_words
        ]
    return []


def private_parts(entities: Iterable[tuple[str, str]], common_words: frozenset[str]) -> list[str]:
    """The distinctive words of a set of (type, value) pairs, without repeats."""
    return list(
        dict.fromkeys(
            word
            for entity_type, value in entities
            for word in distinctive_words(entity_type, value, common_words)
        )
    )


# --- where a value occurs: character spans for display -------------------------------------------

# A window is compared exactly (by `NearMatcher.found`) only when its folded words are this close to
# the value: a cheap filter in C before the exact rules.
_LOCATE_PREFILTER_EDITS = 3


def value_spans(text: str, value: str) -> list[tuple[int, int]]:
    """The character spans of every exact occurrence of `value` (as `leaked_values` matches it)."""
    if not value.split():
        return []
    return [(m.start(), m.end()) for m in value_pattern(normalise_value(value)).finditer(text)]


def near_spans(text: str, value: str, common_words: frozenset[str] = frozenset()) -> list[tuple[int, int]]:
    """The character spans of the runs of words of `text` that hold `value` or a near variant of it
    (by `NearMatcher`'s rules), without overlaps, earliest and longest first."""
    matcher = NearMatcher([value], common_words)
    if not matcher.targets:
        return []
    target = matcher.targets[0]
    wanted = " ".join(target.words)
    words = list(_WORD.finditer(text))
    folded = [fold(word.group()) for word in words]
    found: list[tuple[int, int]] = []
    for size in target.window_sizes():
        windows = [" ".join(folded[first : first + size]) for first in range(len(words) - size + 1)]
        if not windows:
            continue
        distances = process.cdist(
            [wanted],
            windows,
            scorer=Levenshtein.distance,
            score_cutoff=_LOCATE_PREFILTER_EDITS,
            dtype=np.int32,
        )[0]
        for first in np.nonzero(distances <= _LOCATE_PREFILTER_EDITS)[0]:
            start, end = words[first].start(), words[first + size - 1].end()
            if matcher.found(text[start:end]):
                found.append((start, end))
    # a window holding a shorter match ("Mr Tomas Berg" around "Tomas Berg") is not the variant itself
    innermost = [
        span
        for span in found
        if not any(other != span and span[0] <= other[0] and other[1] <= span[1] for other in found)
    ]
    return without_overlaps(innermost)


def without_overlaps(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans in text order with any span that overlaps an earlier (or, at one start, longer) one left out."""
    kept: list[tuple[int, int]] = []
    for start, end in sorted(spans, key=lambda span: (span[0], -span[1])):
        if not kept or start >= kept[-1][1]:
            kept.append((start, end))
    return kept
