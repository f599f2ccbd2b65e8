"""The longest run of words two texts share: how the audit finds copied passages.

Words are `plainsight.matching.words` (case-folded runs of word characters), so punctuation and case
do not cut a copied passage. The longest shared run is difflib's longest common block of the two word
sequences, its junk heuristic off (frequent words count).
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher


def longest_shared_ngram(first: Sequence[str], second: Sequence[str]) -> int:
    """Length in words of the longest word sequence that occurs, contiguous, in both."""
    if not first or not second:
        return 0
    matcher = SequenceMatcher(None, first, second, autojunk=False)
    return matcher.find_longest_match(0, len(first), 0, len(second)).size


def longest_shared_with_any(target: Sequence[str], others: Sequence[Sequence[str]]) -> int:
    """Words of the longest run `target` shares with any one of `others` (never across two of them)."""
    if not target:
        return 0
    joined: list[str] = []
    for number, other in enumerate(others):
        joined += [*other, f"\x00{number}"]  # a separator no word equals: a match never spans two texts
    matcher = SequenceMatcher(None, list(target), joined, autojunk=False)
    return matcher.find_longest_match(0, len(target), 0, len(joined)).size
