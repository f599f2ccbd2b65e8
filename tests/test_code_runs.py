"""A code value's distinctive digit run, and whether a text holds it: known answers."""

from __future__ import annotations

import pytest

from plainsight.code_runs import (
    CodeRuns,
    digit_runs,
    distinctive_run,
    held_runs,
    is_date_or_year,
    open_run,
)


def test_a_case_number_under_another_prefix_holds_its_run():
    run = distinctive_run("XXX-2022-8363", 4)
    assert run == "20228363"
    assert held_runs("Closed under case LY-2022-8363 today.", [run]) == [run]
    assert held_runs("Closed under case LY 2022/8363.", [run]) == [run]
    # another serial of the same year is another case
    assert held_runs("Closed under case LY-2022-8364.", [run]) == []


def test_a_re_spaced_phone_number_holds_its_run():
    spaced = distinctive_run("+45 12 34 56 78", 4)
    assert spaced == "12345678"  # the country calling code is left out
    assert held_runs("Call her on 12345678.", [spaced]) == [spaced]
    plain = distinctive_run("12345678", 4)
    assert held_runs("Call her on +45 12 34 56 78.", [plain]) == [plain]
    assert held_runs("Call her on 12-34-56-78.", [plain]) == [plain]


def test_a_year_or_a_date_is_not_a_distinctive_run():
    for value in ("2022", "2022-03-04", "12/03/2022", "03.12.22", "03/2022", "2022-03", "20220304"):
        assert distinctive_run(value, 4) is None, value
    # a code that names a year beside its serial is distinctive as a whole, and a text naming the year
    # alone does not hold it
    assert held_runs("In 2022 the family moved on 12/03/2022.", ["20228363"]) == []


def test_dates_known_answers():
    assert is_date_or_year(["2022"]) and is_date_or_year(["1999"])
    assert not is_date_or_year(["8363"]) and not is_date_or_year(["2150"])
    assert is_date_or_year(["12", "31", "2021"])  # month first
    assert not is_date_or_year(["12", "34", "56"])  # no month 34, no day 34
    assert not is_date_or_year(["2022", "8363"])
    assert not is_date_or_year(["12345678"])  # no month 56 nor 34


def test_runs_shorter_than_min_digits_are_not_distinctive():
    assert distinctive_run("AB-123", 4) is None
    assert distinctive_run("AB-123", 3) == "123"
    # the longest run counts; a date beside it does not
    assert distinctive_run("file 77-1234 of 2022-03-04", 4) == "771234"


def test_letters_a_line_break_or_a_long_separator_end_a_run():
    assert digit_runs("2022 and 8363") == ["2022", "8363"]
    assert digit_runs("2022 --- 8363") == ["2022", "8363"]
    assert digit_runs("2022\n\n8363") == ["2022", "8363"]
    assert digit_runs("12 / 34, 56") == ["123456"]
    assert digit_runs("AB1234CD") == ["1234"]


def test_held_runs_keep_the_given_order_once():
    assert held_runs("9999 and 1234-5678", ["12345678", "9999", "12345678", "4444"]) == ["12345678", "9999"]


def test_the_open_run_is_what_the_next_token_can_continue():
    assert open_run("case LY-2022-83") == "2022-83"
    assert open_run("case LY-2022-") == "2022-"
    assert open_run("call +45 12 34 ") == "+45 12 34 "
    assert open_run("the case closed") == ""
    assert open_run("2022 and ") == ""


def test_code_runs_take_the_configured_types_only():
    entities = [
        ("CODE", "XXX-2022-8363"),
        ("QUANTITY", "£1,120,500"),
        ("CODE", "XXX-2022-8363"),
        ("CODE", "7"),
    ]
    assert CodeRuns().distinctive(entities) == ["20228363"]
    both = CodeRuns.from_config({"entity_types": ["CODE", "QUANTITY"], "min_digits": 4})
    assert both.distinctive(entities) == ["20228363", "1120500"]


def test_bad_code_run_settings_are_refused():
    with pytest.raises(ValueError, match="unknown entity types \\['PHONE'\\]"):
        CodeRuns(frozenset({"PHONE"}))
    with pytest.raises(ValueError, match="min_digits must be at least 1"):
        CodeRuns(min_digits=0)
