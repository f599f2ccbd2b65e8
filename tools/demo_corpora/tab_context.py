"""What one TAB document is written with: entities with character offsets, respondent States,
people drawn from Faker, a timeline of dates, and the slots every template may use."""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from faker import Faker
from fictional_pools import fictional_pool_terms
from language import CYRILLIC_LOCALES, PRONOUNS, indefinite, long_date, month_year, transliterate
from texts import read_yaml

# Generated names must not contain any pool value, checked as a plain substring, so that
# e.g. "Alexandru" is rejected because of "Alex".
FICTIONAL_POOL_TERMS = fictional_pool_terms()
DOCUMENT_TEXTS = read_yaml("tab_documents.yaml")
WORDS = DOCUMENT_TEXTS["words"]
TITLES = DOCUMENT_TEXTS["titles"]


def uses_fictional_pool(value: str) -> bool:
    return any(term in value for term in FICTIONAL_POOL_TERMS)


# ---------------------------------------------------------------------------
# Entities and paragraphs with character-offset spans
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Ent:
    """A text value that is annotated as an entity mention wherever it is inserted."""

    text: str
    etype: str
    ident: str
    key: str = ""
    conf: str = "NOT_CONFIDENTIAL"
    related: str | None = None  # key of another entity this one is linked to

    def __post_init__(self):
        if not self.key:
            object.__setattr__(self, "key", f"{self.etype}:{self.text}")


def the(ent: Ent) -> tuple:
    """Slot value for an organisation name used with the definite article."""
    return (ent,) if ent.text.startswith(("HM ", "the ")) else ("the ", ent)


@dataclass
class Para:
    text: str
    spans: list[tuple[int, int, Ent]] = field(default_factory=list)


_FORMATTER = string.Formatter()


def render(template: str, slots: dict) -> Para:
    """Fill ``{slot}`` fields; :class:`Ent` values are recorded as spans.

    A slot value is a plain value, an :class:`Ent`, or a tuple of those
    (e.g. ``("the ", Ent("Supreme Court", ...))``).
    """
    pieces, spans, pos = [], [], 0
    for literal, name, _, _ in _FORMATTER.parse(template):
        values = [literal]
        if name is not None:
            value = slots[name]
            values += value if isinstance(value, tuple) else [value]
        for value in values:
            text = value.text if isinstance(value, Ent) else str(value)
            if isinstance(value, Ent):
                spans.append((pos, pos + len(text), value))
            pieces.append(text)
            pos += len(text)
    return Para("".join(pieces), spans)


def join_paras(paras: Sequence[Para], sep: str = "\n\n") -> Para:
    text_parts, spans, pos = [], [], 0
    for i, para in enumerate(paras):
        if i:
            text_parts.append(sep)
            pos += len(sep)
        text_parts.append(para.text)
        spans.extend((s + pos, e + pos, ent) for s, e, ent in para.spans)
        pos += len(para.text)
    return Para("".join(text_parts), spans)


# ---------------------------------------------------------------------------
# Respondent States (tab_states.yaml)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class State:
    code: str
    name: str  # official name, without article
    definite_article: bool  # "the Republic of Poland", but "Ukraine"
    adjective: str  # nationality
    faker_locale: str  # people's names
    dialling_code: int
    cities: list[str]
    currency: str  # plural currency name
    currency_code: str
    criminal_court: str  # courts, prisons and police: patterns with {city} or {district}
    civil_court: str
    appeal_court: str
    top_court: str
    prison: str
    police: str
    company_form: str  # pattern with {name}
    agent_office: str


_STATES_TEXTS = read_yaml("tab_states.yaml")
STATES = tuple(State(**entry) for entry in _STATES_TEXTS["states"])
DISTRICTS: list[str] = _STATES_TEXTS["districts"]


# ---------------------------------------------------------------------------
# People, dates and the per-document context
# ---------------------------------------------------------------------------


@dataclass
class Person:
    first: str
    last: str
    female: bool
    title: str
    key: str

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def initialled(self) -> str:
        return f"{self.first[0]}. {self.last}"


_FAKERS: dict[str, Faker] = {}


def faker_for(locale: str, seed: int) -> Faker:
    """The locale's Faker, reseeded: creating a Faker is slow, so there is one per locale."""
    if locale not in _FAKERS:
        _FAKERS[locale] = Faker(locale)
    fake = _FAKERS[locale]
    fake.seed_instance(seed)
    return fake


class Timeline:
    """Hands out strictly increasing dates."""

    def __init__(self, start: date, rng: random.Random):
        self.current, self.rng = start, rng

    def next(self, min_days: int = 20, max_days: int = 300) -> date:
        self.current += timedelta(days=self.rng.randint(min_days, max_days))
        return self.current


def sentence_groups(paragraph: Any) -> list:
    """The choices a YAML paragraph is made of (see tab_storylines.yaml)."""
    return paragraph["sentences"] if isinstance(paragraph, dict) else [paragraph]


class Ctx:
    """Everything one TAB document needs: rng, names, base slots and helpers."""

    def __init__(self, rng: random.Random, state: State, seed: int):
        self.rng, self.state = rng, state
        self.fake = faker_for(state.faker_locale, seed)
        self._people = 0
        self._surnames: set[str] = set()
        self.tl = Timeline(date(rng.randint(1989, 2004), rng.randint(1, 12), rng.randint(1, 28)), rng)
        self.home, *others = rng.sample(state.cities, 3)
        self.other_cities = others
        self.applicant = self.person()
        self.lawyer = self.person(may_be_doctor=True)
        self.agent = self.person()
        self.job = rng.choice(WORDS["jobs"])
        self.slots = self._base_slots()

    # -- drawing values ----------------------------------------------------
    def pick(self, options):
        """A string is used as it is, without a draw; from a list, one item is drawn."""
        return options if isinstance(options, str) else self.rng.choice(options)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def _clean(self, value: str) -> str:
        return (
            transliterate(value, self.state.faker_locale)
            if self.state.faker_locale in CYRILLIC_LOCALES
            else value
        )

    def person(self, female: bool | None = None, may_be_doctor: bool = False) -> Person:
        female = self.chance(0.3) if female is None else female
        while True:
            if female:
                first, last = self.fake.first_name_female(), self.fake.last_name_female()
            else:
                first, last = self.fake.first_name_male(), self.fake.last_name_male()
            first, last = self._clean(first), self._clean(last)
            if not uses_fictional_pool(f"{first} {last}") and " " not in last and last not in self._surnames:
                break
        title = self.pick(TITLES["female" if female else "male"])
        if may_be_doctor and self.chance(0.2):
            title = TITLES["doctor"]
        self._people += 1
        self._surnames.add(last)
        return Person(first, last, female, title, key=f"person{self._people}")

    def set_age(self, min_age: int, max_age: int) -> None:
        """Redraw the applicant's birth year (relative to the start of the story)."""
        year = self.tl.current.year - self.rng.randint(min_age, max_age)
        self.slots["birth"] = Ent(str(year), "DATETIME", "QUASI", related=self.applicant.key)

    def surname(self) -> str:
        return self.person().last

    # -- entity constructors -------------------------------------------------
    @staticmethod
    def name(p: Person, form: str = "full", ident: str = "DIRECT") -> Ent:
        text = {"full": p.full, "last": p.last, "initialled": p.initialled}[form]
        return Ent(text, "PERSON", ident, key=p.key)

    def date(self, min_days: int = 20, max_days: int = 300) -> Ent:
        return self.date_ent(self.tl.next(min_days, max_days))

    @staticmethod
    def date_ent(d: date, style: str = "long") -> Ent:
        text = {"long": long_date(d), "month": month_year(d), "year": str(d.year)}[style]
        return Ent(text, "DATETIME", "QUASI")

    def money(self, amount: int, ident: str = "QUASI") -> Ent:
        s = self.state
        style = self.rng.randrange(3)
        text = (
            f"{amount:,} {s.currency}",
            f"{amount:,} {s.currency} ({s.currency_code})",
            f"{s.currency_code} {amount:,}",
        )[style]
        return Ent(text, "QUANTITY", ident)

    @staticmethod
    def qty(text: str) -> Ent:
        return Ent(text, "QUANTITY", "QUASI")

    @staticmethod
    def misc(text: str, conf: str = "NOT_CONFIDENTIAL") -> Ent:
        return Ent(text, "MISC", "QUASI", conf=conf)

    @staticmethod
    def loc(text: str, ident: str = "QUASI") -> Ent:
        return Ent(text, "LOC", ident)

    def local_org(self, pattern: str, city: str | None = None, **names) -> Ent:
        """A local body, named after a town (by default the applicant's home town)."""
        return Ent(pattern.format(city=city or self.home, **names), "ORG", "QUASI")

    def org(self, pattern: str, city: str | None = None) -> tuple:
        """An organisation slot ("the" + name); national bodies are not identifying."""
        text = pattern.format(
            city=city or self.home,
            district=self.pick(DISTRICTS),
            n=f"{self.rng.randint(1, 77)}/{self.rng.randint(1, 9)}",
        )
        return the(Ent(text, "ORG", "QUASI" if "{" in pattern else "NO_MASK"))

    def company(self) -> Ent:
        name = self.surname()
        if self.chance(0.5):
            name += " " + self.pick(WORDS["company_sectors"])
        return Ent(self.state.company_form.format(name=name), "ORG", "QUASI")

    def case_no(self) -> Ent:
        year, r = self.tl.current.year, self.rng.randint
        text = self.pick(
            (
                f"{year}/{r(10, 2999)}",
                f"{r(1, 9)}-{r(100, 999)}/{year % 100:02d}",
                f"K{r(10, 99)}-{r(100, 9999)}",
            )
        )
        return Ent(text, "CODE", "DIRECT")

    def phone(self) -> Ent:
        r = self.rng.randint
        return Ent(f"+{self.state.dialling_code} {r(100, 999)} {r(100, 999)} {r(100, 999)}", "CODE", "DIRECT")

    def plate(self) -> Ent:
        letter = lambda: self.rng.choice(WORDS["plate_letters"])  # noqa: E731
        return Ent(f"{letter()}{self.rng.randint(100, 999)}{letter()}{letter()}", "CODE", "DIRECT")

    # -- paragraphs ------------------------------------------------------------
    def para(self, paragraph, **extra) -> Para:
        """Render a YAML paragraph: one alternative is drawn for each of its sentences."""
        sentences = (self.pick(group) for group in sentence_groups(paragraph) if group)
        return render(" ".join(sentence for sentence in sentences if sentence), {**self.slots, **extra})

    def heading(self, options, **slots) -> Para:
        return Para(self.pick(options).format(**slots))

    def maybe_heading(self, p: float, options, **slots) -> list[Para]:
        return [self.heading(options, **slots)] if self.chance(p) else []

    def _base_slots(self) -> dict:
        s, app = self.state, self.applicant
        return {
            **PRONOUNS[app.female],
            "title": app.title,
            "applicant": self.name(app),
            "app_sur": self.name(app, "last"),
            "nat": Ent(s.adjective, "DEM", "QUASI", key="nationality"),
            "a_nat": indefinite(s.adjective),
            "gov_adj": Ent(s.adjective, "DEM", "NO_MASK", key="government"),
            "state": Ent(s.name, "ORG", "NO_MASK"),
            "the_": "the " if s.definite_article else "",
            "home": self.loc(self.home),
            "city2": self.loc(self.other_cities[0]),
            "city3": self.loc(self.other_cities[1]),
            "lawyer": self.name(self.lawyer, "initialled"),
            "l_title": self.lawyer.title,
            "lawyer_full": self.name(self.lawyer),
            "lawyer_city": Ent(
                self.pick((self.home, self.other_cities[1])), "LOC", "QUASI", related=self.lawyer.key
            ),
            "agent": self.name(self.agent, "full", "NO_MASK"),
            "a_title": self.agent.title,
            "ministry": Ent(s.agent_office, "ORG", "NO_MASK"),
            "job": Ent(self.job, "DEM", "QUASI"),
            "a_job": indefinite(self.job),
            "court1": self.org(s.criminal_court),
            "civil_court": self.org(s.civil_court),
            "court2": self.org(s.appeal_court, city=self.pick((self.home, self.other_cities[0]))),
            "top": ("the ", Ent(s.top_court, "ORG", "NO_MASK")),
            "prosecutor": the(self.local_org(DOCUMENT_TEXTS["names"]["prosecutor"])),
            "prison": self.org(s.prison),
            "police": self.org(s.police),
            "birth": Ent(
                str(self.tl.current.year - self.rng.randint(19, 62)), "DATETIME", "QUASI", related=app.key
            ),
        }
