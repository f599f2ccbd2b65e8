"""English wording shared by both corpora, and Latin spelling of Cyrillic names (language.yaml)."""

from __future__ import annotations

from datetime import date

from texts import read_yaml

_LANGUAGE = read_yaml("language.yaml")
MONTHS: list[str] = _LANGUAGE["months"]
_ONES: list[str] = _LANGUAGE["number_words"]["ones"]
_TENS: list[str] = _LANGUAGE["number_words"]["tens"]  # twenty, thirty, ...
_PLURALS: dict[str, str] = _LANGUAGE["irregular_plurals"]
_TRANSLITERATION = _LANGUAGE["transliteration"]
CYRILLIC_LOCALES: list[str] = _TRANSLITERATION["locales"]

# Pronoun slots ({he}, {His}, ...) by "is female".
PRONOUNS: dict[bool, dict[str, str]] = {
    False: _LANGUAGE["pronouns"]["male"],
    True: _LANGUAGE["pronouns"]["female"],
}


def number_words(n: int) -> str:
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens - 2] + ("" if ones == 0 else "-" + _ONES[ones])
    return f"{n:,}"


def count_of(n: int, unit: str) -> str:
    """``count_of(3, "day") == "three days"``."""
    plural = _PLURALS.get(unit, unit + "s")
    return f"{number_words(n)} {unit if n == 1 else plural}"


def duration_text(days: int) -> str:
    years, rest = divmod(days, 365)
    months, days = divmod(rest, 30)
    parts = [count_of(v, u) for v, u in ((years, "year"), (months, "month"), (days, "day")) if v]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def long_date(d: date) -> str:
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def month_year(d: date) -> str:
    return f"{MONTHS[d.month - 1]} {d.year}"


def indefinite(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def transliterate(text: str, locale: str) -> str:
    """Latin spelling of a Cyrillic name, as ECHR judgments print it ("Oleksandr", "Zhivkov")."""
    table = {**_TRANSLITERATION["letters"], **_TRANSLITERATION["locale_letters"].get(locale, {})}
    out = []
    for ch in text:
        low = ch.lower()
        if low in table:
            latin = table[low]
            out.append(latin.capitalize() if ch != low else latin)
        else:
            out.append(ch)
    return "-".join(part[:1].upper() + part[1:] for part in "".join(out).split("-"))
