"""Paragraph splitting and segmentation into paragraph ranges 1-6 and 6-12."""

from __future__ import annotations

import pytest

from plainsight.data.segments import min_paragraphs, paragraph_bounds, segment_document
from plainsight.entities import Span

RANGES = [(1, 6), (6, 12)]
PARAGRAPHS = [f"Paragraph {n} mentions person{n:02d} here." for n in range(1, 15)]
TEXT = "\n\n".join(PARAGRAPHS)


def span_of(text: str, value: str, mention_id: str = "m", entity_type: str = "PERSON") -> Span:
    start = text.index(value)
    return Span(start, start + len(value), value, entity_type, "DIRECT", f"e_{mention_id}", mention_id)


def paragraphs_of(text: str) -> list[str]:
    return [text[start:end] for start, end in paragraph_bounds(text)]


# --- paragraph_bounds -------------------------------------------------------------------------


def test_paragraphs_split_on_blank_lines_only():
    text = "First line\nstill first.\n\nSecond.\n\n\n\nThird."
    assert paragraph_bounds(text) == [(0, 23), (25, 32), (36, 42)]
    assert paragraphs_of(text) == ["First line\nstill first.", "Second.", "Third."]


def test_blank_line_containing_spaces_and_tabs_separates_paragraphs():
    text = "One.\n  \t \nTwo.\n \n \nThree."
    assert paragraphs_of(text) == ["One.", "Two.", "Three."]


def test_leading_and_trailing_blank_lines_give_no_empty_paragraph():
    text = "\n\n  \n\nOne.\n\nTwo.\n\n \n\n"
    assert paragraphs_of(text) == ["One.", "Two."]


def test_whitespace_only_text_has_no_paragraph():
    assert paragraph_bounds("") == []
    assert paragraph_bounds(" \n\n \n") == []


def test_crlf_blank_lines_separate_paragraphs():
    text = "One.\r\n\r\nTwo.\r\n\r\nThree."
    assert len(paragraph_bounds(text)) == 3


def test_crlf_paragraph_does_not_end_with_carriage_return():
    # The "\r" belongs to the line break, not to the paragraph's text.
    text = "One.\r\n\r\nTwo.\r\n\r\nThree."
    assert paragraphs_of(text) == ["One.", "Two.", "Three."]


# --- min_paragraphs ---------------------------------------------------------------------------


def test_min_paragraphs_is_the_latest_first_paragraph():
    assert min_paragraphs(RANGES) == 6
    assert min_paragraphs([(1, 3)]) == 1
    assert min_paragraphs([(4, 9), (1, 3), (2, 5)]) == 4


# --- segment_document -------------------------------------------------------------------------


def test_segment_texts_are_original_slices_of_paragraph_ranges():
    first, second = segment_document(TEXT, [], RANGES)
    assert first.index == 0 and second.index == 1
    assert first.text == "\n\n".join(PARAGRAPHS[0:6])
    assert second.text == "\n\n".join(PARAGRAPHS[5:12])
    assert TEXT[first.start : first.end] == first.text
    assert TEXT[second.start : second.end] == second.text
    assert first.start == 0
    assert second.start == TEXT.index("Paragraph 6 ")


def test_paragraph_six_is_in_both_segments():
    first, second = segment_document(TEXT, [], RANGES)
    assert first.text.endswith(PARAGRAPHS[5])
    assert second.text.startswith(PARAGRAPHS[5])


def test_spans_are_rebased_to_their_segment():
    spans = [
        span_of(TEXT, "person03", "m3"),
        span_of(TEXT, "person06", "m6"),
        span_of(TEXT, "person10", "m10"),
    ]
    first, second = segment_document(TEXT, spans, RANGES)
    assert [s.mention_id for s in first.spans] == ["m3", "m6"]
    assert [s.mention_id for s in second.spans] == ["m6", "m10"]
    for segment in (first, second):
        for span in segment.spans:
            assert segment.text[span.start : span.end] == span.text
    # paragraph 6 starts the second segment: "Paragraph 6 mentions " is 21 characters
    assert (second.spans[0].start, second.spans[0].end) == (21, 29)


def test_span_crossing_segment_end_is_counted_and_dropped():
    # From paragraph 6 into paragraph 7: cut by the end of segment 0, whole inside segment 1.
    crossing_6_7 = span_of(TEXT, "here.\n\nParagraph 7", "x67")
    # From paragraph 12 into paragraph 13: cut by the end of segment 1.
    crossing_12_13 = span_of(TEXT, "here.\n\nParagraph 13", "x1213")
    first, second = segment_document(TEXT, [crossing_6_7, crossing_12_13], RANGES)
    assert first.spans == ()
    assert first.crossing_spans == 1
    assert [s.mention_id for s in second.spans] == ["x67"]
    assert second.crossing_spans == 1


def test_span_crossing_segment_start_is_counted_and_dropped():
    crossing_5_6 = span_of(TEXT, "here.\n\nParagraph 6", "x56")
    first, second = segment_document(TEXT, [crossing_5_6], RANGES)
    assert [s.mention_id for s in first.spans] == ["x56"]
    assert second.spans == () and second.crossing_spans == 1


def test_span_after_the_last_segment_is_neither_kept_nor_crossing():
    first, second = segment_document(TEXT, [span_of(TEXT, "person13", "m13")], RANGES)
    assert first.spans == () and second.spans == ()
    assert first.crossing_spans == 0 and second.crossing_spans == 0


def test_short_document_shortens_the_last_segment():
    paragraphs = PARAGRAPHS[:8]
    text = "\n\n".join(paragraphs)
    first, second = segment_document(text, [], RANGES)
    assert first.text == "\n\n".join(paragraphs[0:6])
    assert second.text == "\n\n".join(paragraphs[5:8])
    assert second.end == len(text)


def test_exactly_six_paragraphs_give_paragraph_six_as_second_segment():
    text = "\n\n".join(PARAGRAPHS[:6])
    first, second = segment_document(text, [], RANGES)
    assert first.text == text
    assert second.text == PARAGRAPHS[5]


def test_segment_starting_past_the_last_paragraph_raises():
    text = "\n\n".join(PARAGRAPHS[:5])
    with pytest.raises(ValueError, match="5 paragraphs"):
        segment_document(text, [], RANGES)
