#!/usr/bin/env python
"""Generate the small FICTIONAL demo corpora shipped in ``resources/demo``.

Two corpora are written, each in the exact on-disk format of a real dataset:

* ``tab/echr_{train,dev,test}.json`` -- documents in the format of the Text
  Anonymization Benchmark (TAB, ECHR court cases), with character-offset
  entity annotations;
* ``mimic/NOTEEVENTS.csv`` -- clinical notes in the format of MIMIC-III
  ``NOTEEVENTS.csv``, whose identifiers are (as in the real data) replaced by
  ``[** ... **]`` de-identification placeholders.

Every person, case, organisation and clinical story is invented: the text is
assembled from hand-written templates, names are drawn from a seeded Faker and
everything else from a seeded ``random.Random``.  Two runs produce
byte-identical files (for a fixed Faker version).

Usage::

    python scripts/make_demo_corpora.py [--out resources/demo]
    python scripts/make_demo_corpora.py --rouge-pairs 400   # report diversity
"""
from __future__ import annotations

import argparse
import csv
import json
import random
import re
import string
import time
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from itertools import combinations
from pathlib import Path
from typing import Callable, Sequence

from faker import Faker

SEED = 20240611
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "resources" / "demo"

N_TAB_DOCS = {"train": 64, "dev": 12, "test": 12}
N_MIMIC_NOTES = {"Discharge summary": 48, "Radiology": 8, "Nursing": 6, "Physician ": 4}

MIN_PARAGRAPHS = 14
TAB_CHAR_RANGE = (2000, 5000)

# Values of fictional pools used elsewhere in the project.  Generated values
# must never contain any of them (checked as a plain substring, so that e.g.
# "Alexandru" is rejected because of "Alex").
FICTIONAL_POOL_TERMS = (
    # first names
    "Alex", "Blake", "Casey", "Dana", "Elliot", "Finley", "Harper", "Jordan", "Kai",
    "Logan", "Morgan", "Quinn", "Riley", "Skyler",
    # last names
    "Adams", "Baker", "Carson", "Dawson", "Ellis", "Foster", "Griffin", "Hayes",
    "Irwin", "Johnson", "Kennedy", "Lewis",
    # places
    "Baltimore", "Seattle", "Tokyo", "Munich", "Cairo", "USA", "Germany", "Japan",
    "Kenya", "Brazil", "Baker St", "Amphitheatre", "Fifth Ave", "London Bridge",
    "Central Station", "Pier 39",
    # organisations
    "OpenAI", "World Health Organization", "Harvard", "UNICEF", "St. Mary's Hospital",
    "SpaceX", "NASA", "MIT", "Stanford", "Google",
)


def uses_fictional_pool(value: str) -> bool:
    return any(term in value for term in FICTIONAL_POOL_TERMS)


# ---------------------------------------------------------------------------
# Small text utilities
# ---------------------------------------------------------------------------

MONTHS = ("January", "February", "March", "April", "May", "June", "July",
          "August", "September", "October", "November", "December")
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
         "fourteen fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def number_words(n: int) -> str:
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + ("" if ones == 0 else "-" + _ONES[ones])
    return f"{n:,}"


def count_of(n: int, unit: str) -> str:
    """``count_of(3, "day") == "three days"``."""
    return f"{number_words(n)} {unit}{'' if n == 1 else 's'}"


def duration_text(days: int) -> str:
    years, rest = divmod(days, 365)
    months, days = divmod(rest, 30)
    parts = [count_of(v, u) for v, u in ((years, "year"), (months, "month"), (days, "day")) if v]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def long_date(d: date) -> str:
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def indefinite(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


_CYRILLIC = {
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "yo", "ж": "zh",
    "з": "z", "и": "i", "й": "y", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o",
    "п": "p", "р": "r", "с": "s", "т": "t", "у": "u", "ф": "f", "х": "kh", "ц": "ts",
    "ч": "ch", "ш": "sh", "щ": "shch", "ъ": "", "ы": "y", "ь": "", "э": "e", "ю": "yu",
    "я": "ya", "і": "i", "ї": "yi", "є": "ye", "ґ": "g", "'": "", "’": "",
}
CYRILLIC_LOCALES = ("ru_RU", "uk_UA", "bg_BG")
_CYRILLIC_BY_LOCALE = {"uk_UA": {"и": "y", "г": "h", "х": "kh"}, "bg_BG": {"ъ": "a", "щ": "sht"}}


def transliterate(text: str, locale: str) -> str:
    table = {**_CYRILLIC, **_CYRILLIC_BY_LOCALE.get(locale, {})}
    out = []
    for ch in text:
        low = ch.lower()
        if low in table:
            latin = table[low]
            out.append(latin.capitalize() if ch != low else latin)
        else:
            out.append(ch)
    return "-".join(part[:1].upper() + part[1:] for part in "".join(out).split("-"))


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
# TAB: respondent states
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class State:
    code: str
    official: str          # official name, without article
    article: str           # "the " or ""
    adj: str               # nationality adjective
    locale: str            # Faker locale for people's names
    cities: tuple[str, ...]
    currency: str          # plural currency name
    currency_code: str
    criminal_court: str    # patterns with {city}/{district}
    civil_court: str
    appeal_court: str
    top_court: str
    prison: str
    police: str
    company_form: str      # pattern with {name}
    agent_office: str


DIALLING_CODES = {"TUR": 90, "POL": 48, "RUS": 7, "UKR": 380, "ROU": 40, "ITA": 39, "HRV": 385, "DNK": 45, "BGR": 359,
                  "AUT": 43, "CZE": 420, "HUN": 36, "FRA": 33, "SVN": 386, "LTU": 370, "GBR": 44}
DISTRICTS = ("Leninskiy", "Oktyabrskiy", "Sovetskiy", "Kirovskiy", "Tsentralnyy", "Zavodskoy")

STATES = (
    State("TUR", "Republic of Turkey", "the ", "Turkish", "tr_TR",
          ("Istanbul", "Ankara", "İzmir", "Diyarbakır", "Edirne", "Erzurum", "Şanlıurfa", "Muş", "Bursa", "Trabzon"),
          "Turkish liras", "TRY", "{city} Assize Court", "{city} Civil Court of First Instance",
          "Court of Cassation", "Court of Cassation", "{city} F-type Prison", "{city} Security Directorate",
          "{name} İnşaat A.Ş.", "Ministry of Justice"),
    State("POL", "Republic of Poland", "the ", "Polish", "pl_PL",
          ("Warsaw", "Kraków", "Łódź", "Gdańsk", "Wrocław", "Poznań", "Białystok", "Szczecin", "Lublin"),
          "Polish zlotys", "PLN", "{city} District Court", "{city} District Court",
          "{city} Regional Court", "Supreme Court", "{city} Remand Centre", "{city} police station",
          "{name} Sp. z o.o.", "Ministry of Foreign Affairs"),
    State("RUS", "Russian Federation", "the ", "Russian", "ru_RU",
          ("Yekaterinburg", "Kazan", "Samara", "Rostov-on-Don", "Nizhniy Novgorod", "Vladimir", "Tula", "Omsk"),
          "roubles", "RUB", "{district} District Court of {city}", "{district} District Court of {city}",
          "{city} Regional Court", "Supreme Court of Russia", "remand prison IZ-{n} in {city}",
          "{district} district police department of {city}", "OOO {name}", "Office of the Representative of the Russian Federation"),
    State("UKR", "Ukraine", "", "Ukrainian", "uk_UA",
          ("Kharkiv", "Odesa", "Lviv", "Dnipropetrovsk", "Donetsk", "Zaporizhzhya", "Poltava", "Vinnytsya"),
          "hryvnias", "UAH", "{district} District Court of {city}", "{district} District Court of {city}",
          "{city} Regional Court of Appeal", "Supreme Court of Ukraine", "{city} Pre-Trial Detention Centre",
          "{district} district police station of {city}", "TOV {name}", "Ministry of Justice"),
    State("ROU", "Romania", "", "Romanian", "ro_RO",
          ("Bucharest", "Cluj-Napoca", "Iaşi", "Timişoara", "Constanţa", "Braşov", "Craiova", "Galaţi"),
          "Romanian lei", "RON", "{city} District Court", "{city} District Court", "{city} County Court",
          "High Court of Cassation and Justice", "{city} Prison", "{city} police inspectorate",
          "{name} S.R.L.", "Ministry of Foreign Affairs"),
    State("ITA", "Italian Republic", "the ", "Italian", "it_IT",
          ("Rome", "Milan", "Naples", "Turin", "Palermo", "Bari", "Florence", "Genoa", "Catania"),
          "euros", "EUR", "{city} District Court", "{city} District Court", "{city} Court of Appeal",
          "Court of Cassation", "{city} Prison", "{city} carabinieri station", "{name} S.r.l.",
          "Ministry of Foreign Affairs"),
    State("HRV", "Republic of Croatia", "the ", "Croatian", "hr_HR",
          ("Zagreb", "Split", "Rijeka", "Osijek", "Zadar", "Slavonski Brod", "Varaždin", "Šibenik"),
          "kunas", "HRK", "{city} Municipal Court", "{city} Municipal Court", "{city} County Court",
          "Supreme Court", "{city} Prison", "{city} police station", "{name} d.o.o.", "Office of the Agent"),
    State("DNK", "Kingdom of Denmark", "the ", "Danish", "da_DK",
          ("Copenhagen", "Aarhus", "Odense", "Aalborg", "Esbjerg", "Randers", "Kolding"),
          "Danish kroner", "DKK", "{city} City Court", "{city} City Court", "High Court of Western Denmark",
          "Supreme Court", "{city} State Prison", "{city} police district", "{name} ApS",
          "Ministry of Foreign Affairs"),
    State("BGR", "Republic of Bulgaria", "the ", "Bulgarian", "bg_BG",
          ("Sofia", "Plovdiv", "Varna", "Burgas", "Ruse", "Stara Zagora", "Pleven"),
          "levs", "BGN", "{city} District Court", "{city} District Court", "{city} Regional Court",
          "Supreme Court of Cassation", "{city} Prison", "{city} Regional Police Directorate", "{name} OOD",
          "Ministry of Justice"),
    State("AUT", "Republic of Austria", "the ", "Austrian", "de_AT",
          ("Vienna", "Graz", "Linz", "Salzburg", "Innsbruck", "Klagenfurt", "Villach"),
          "euros", "EUR", "{city} Regional Criminal Court", "{city} District Court", "{city} Court of Appeal",
          "Supreme Court", "{city} Prison", "{city} Federal Police Directorate", "{name} GmbH",
          "Federal Ministry for European and International Affairs"),
    State("CZE", "Czech Republic", "the ", "Czech", "cs_CZ",
          ("Prague", "Brno", "Ostrava", "Plzeň", "Olomouc", "Liberec", "České Budějovice"),
          "Czech korunas", "CZK", "{city} District Court", "{city} District Court", "{city} Regional Court",
          "Supreme Court", "{city} Remand Prison", "{city} police department", "{name} s.r.o.",
          "Ministry of Justice"),
    State("HUN", "Republic of Hungary", "the ", "Hungarian", "hu_HU",
          ("Budapest", "Debrecen", "Szeged", "Pécs", "Győr", "Miskolc", "Kecskemét"),
          "Hungarian forints", "HUF", "{city} District Court", "{city} District Court", "{city} Regional Court",
          "Supreme Court", "{city} Prison", "{city} police headquarters", "{name} Kft.",
          "Ministry of Public Administration and Justice"),
    State("FRA", "French Republic", "the ", "French", "fr_FR",
          ("Lyons", "Marseilles", "Lille", "Bordeaux", "Toulouse", "Nantes", "Rennes", "Montpellier"),
          "euros", "EUR", "{city} Criminal Court", "{city} tribunal de grande instance", "{city} Court of Appeal",
          "Court of Cassation", "{city} Prison", "{city} police station", "{name} SARL",
          "Ministry of Foreign Affairs"),
    State("SVN", "Republic of Slovenia", "the ", "Slovenian", "sl_SI",
          ("Ljubljana", "Maribor", "Celje", "Koper", "Kranj", "Novo Mesto"),
          "tolars", "SIT", "{city} Local Court", "{city} Local Court", "{city} Higher Court",
          "Supreme Court", "{city} Prison", "{city} police station", "{name} d.d.", "State Attorney's Office"),
    State("LTU", "Republic of Lithuania", "the ", "Lithuanian", "lt_LT",
          ("Vilnius", "Kaunas", "Klaipėda", "Šiauliai", "Panevėžys", "Alytus"),
          "litai", "LTL", "{city} City District Court", "{city} City District Court", "{city} Regional Court",
          "Supreme Court", "{city} Remand Prison", "{city} police commissariat", "UAB {name}",
          "Ministry of Justice"),
    State("GBR", "United Kingdom of Great Britain and Northern Ireland", "the ", "British", "en_GB",
          ("Birmingham", "Manchester", "Leeds", "Glasgow", "Belfast", "Cardiff", "Bristol", "Sheffield"),
          "pounds sterling", "GBP", "{city} Crown Court", "{city} County Court", "Court of Appeal",
          "House of Lords", "HM Prison {city}", "{city} police station", "{name} Ltd",
          "Foreign and Commonwealth Office"),
)

# Case-specific vocabularies (all invented).
JOBS = ("teacher", "mechanic", "accountant", "farmer", "nurse", "engineer", "taxi driver", "shop assistant",
        "electrician", "pensioner", "construction worker", "veterinarian", "civil servant", "lorry driver",
        "pharmacist", "baker's assistant", "carpenter", "university lecturer", "cook", "security guard")
OFFENCES = ("membership of an illegal armed organisation", "aggravated fraud", "drug trafficking",
            "aiding and abetting an illegal organisation", "armed robbery", "smuggling cigarettes",
            "bribery of a public official", "the murder of a local businessman", "money laundering", "arson",
            "forgery of official documents", "extortion committed as part of an organised group")
VEHICLES = ("white minibus", "unmarked grey saloon car", "police van with tinted windows", "dark blue jeep",
            "small green lorry")
INJURIES = ("bruises on both arms and a perforated left eardrum", "two broken ribs and a haematoma on the back",
            "abrasions on the wrists and swelling around the right eye", "a fractured nose and bruising on the thighs",
            "a dislocated shoulder")
ILLNESSES = ("chronic hepatitis C", "type 1 diabetes", "a serious heart condition", "tuberculosis",
             "epilepsy", "cancer of the larynx", "a herniated disc", "progressive kidney failure",
             "Wernicke-Korsakoff syndrome", "paranoid schizophrenia")
CIVIL_CAUSES = ("unpaid invoices for construction work", "damage caused to {his} house by a burst water main",
                "injuries {he} had sustained in a traffic accident", "the termination of {his} employment contract",
                "defective heating equipment installed in {his} flat", "a contract for the delivery of building materials")
PROJECTS = ("a motorway bypass", "a hydroelectric dam", "a water treatment plant", "a new tram depot",
            "an industrial zone", "a regional airport runway", "a military training ground")
NGOS = ("Centre for Rights Advocacy", "Foundation for Legal Assistance", "Public Interest Law Bureau",
        "Open Door Legal Clinic", "Association for Civic Liberties", "Detainees' Rights Project")
NEWSPAPER_WORDS = (("Evening", "Morning", "Free", "Daily", "Northern", "Independent", "People's", "Weekly"),
                   ("Courier", "Herald", "Voice", "Tribune", "Observer", "Gazette", "Messenger", "Echo"))
ARTICLE_TITLES = ("Who pays for the mayor's villa?", "Contracts for friends", "The quiet millions of the town hall",
                  "A bridge to nowhere", "Family business at the municipality", "Asphalt, tenders and cousins")
OFFICES = ("mayor", "deputy mayor", "governor", "chairman of the municipal council")
BELIEFS = ("Jehovah's Witness", "Seventh-day Adventist", "Baptist", "Alevi", "Old Believer", "Pentecostal")
PARTIES = ("Labour and Democracy Party", "Green Future Movement", "Party of Regional Autonomy",
           "Union for Social Justice", "Workers' Solidarity Party")
PROTEST_TOPICS = ("the closure of a local mine", "rising electricity prices", "the construction of a waste incinerator",
                  "the arrest of party officials", "changes to the pension system")
STATUTES = ("Public Assemblies Act", "Minor Offences Act", "Religious Communities Act", "Public Order Act")
UNITS = ("23rd Motorised Infantry Brigade", "112th Border Guard Battalion", "4th Signals Regiment",
         "7th Air-Defence Regiment", "31st Engineering Battalion")
SECTIONS = ("First", "Second", "Third", "Fourth", "Fifth")


# ---------------------------------------------------------------------------
# TAB: per-document generation context
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


PRONOUNS = {
    False: {"he": "he", "He": "He", "his": "his", "His": "His", "him": "him", "himself": "himself"},
    True: {"he": "she", "He": "She", "his": "her", "His": "Her", "him": "her", "himself": "herself"},
}

_FAKERS: dict[str, Faker] = {}


def faker_for(locale: str, seed: int) -> Faker:
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


class Ctx:
    """Everything one TAB document needs: rng, names, base slots and helpers."""

    def __init__(self, rng: random.Random, state: State, seed: int):
        self.rng, self.state = rng, state
        self.fake = faker_for(state.locale, seed)
        self._people = 0
        self._surnames: set[str] = set()
        self.tl = Timeline(date(rng.randint(1989, 2004), rng.randint(1, 12), rng.randint(1, 28)), rng)
        self.home, *others = rng.sample(state.cities, 3)
        self.other_cities = others
        self.applicant = self.person()
        self.lawyer = self.person(may_be_doctor=True)
        self.agent = self.person()
        self.job = rng.choice(JOBS)
        self.slots = self._base_slots()

    # -- drawing values ----------------------------------------------------
    def pick(self, options):
        return options if isinstance(options, str) else self.rng.choice(options)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def _clean(self, value: str) -> str:
        return transliterate(value, self.state.locale) if self.state.locale in CYRILLIC_LOCALES else value

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
        title = "Mr" if not female else self.pick(("Ms", "Mrs"))
        if may_be_doctor and self.chance(0.2):
            title = "Dr"
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
        text = {"long": long_date(d), "month": f"{MONTHS[d.month - 1]} {d.year}", "year": str(d.year)}[style]
        return Ent(text, "DATETIME", "QUASI")

    def money(self, amount: int, ident: str = "QUASI") -> Ent:
        s = self.state
        style = self.rng.randrange(3)
        text = (f"{amount:,} {s.currency}", f"{amount:,} {s.currency} ({s.currency_code})",
                f"{s.currency_code} {amount:,}")[style]
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

    def org(self, pattern: str, city: str | None = None) -> tuple:
        """An organisation slot ("the" + name); national bodies are not identifying."""
        text = pattern.format(city=city or self.home, district=self.pick(DISTRICTS),
                              n=f"{self.rng.randint(1, 77)}/{self.rng.randint(1, 9)}")
        return the(Ent(text, "ORG", "QUASI" if "{" in pattern else "NO_MASK"))

    def company(self) -> Ent:
        name = self.surname()
        if self.chance(0.5):
            name += " " + self.pick(("Building", "Transport", "Trade", "Textiles", "Energy", "Foods"))
        return Ent(self.state.company_form.format(name=name), "ORG", "QUASI")

    def case_no(self) -> Ent:
        year, r = self.tl.current.year, self.rng.randint
        text = self.pick((f"{year}/{r(10, 2999)}", f"{r(1, 9)}-{r(100, 999)}/{year % 100:02d}", f"K{r(10, 99)}-{r(100, 9999)}"))
        return Ent(text, "CODE", "DIRECT")

    def phone(self) -> Ent:
        r = self.rng.randint
        return Ent(f"+{DIALLING_CODES[self.state.code]} {r(100, 999)} {r(100, 999)} {r(100, 999)}", "CODE", "DIRECT")

    def plate(self) -> Ent:
        letter = lambda: self.rng.choice("ABCEKMPT")  # noqa: E731
        return Ent(f"{letter()}{self.rng.randint(100, 999)}{letter()}{letter()}", "CODE", "DIRECT")

    # -- paragraphs ------------------------------------------------------------
    def para(self, *groups, **extra) -> Para:
        """Render one paragraph: one alternative is picked from each group."""
        template = " ".join(piece for piece in (self.pick(g) for g in groups if g) if piece)
        return render(template, {**self.slots, **extra})

    def heading(self, options) -> Para:
        return Para(self.pick(options))

    def maybe_heading(self, p: float, options) -> list[Para]:
        return [self.heading(options)] if self.chance(p) else []

    def _base_slots(self) -> dict:
        s, app = self.state, self.applicant
        return {
            **PRONOUNS[app.female],
            "title": app.title, "applicant": self.name(app), "app_sur": self.name(app, "last"),
            "nat": Ent(s.adj, "DEM", "QUASI", key="nationality"), "a_nat": indefinite(s.adj),
            "gov_adj": Ent(s.adj, "DEM", "NO_MASK", key="government"),
            "state": Ent(s.official, "ORG", "NO_MASK"), "the_": s.article,
            "home": self.loc(self.home), "city2": self.loc(self.other_cities[0]),
            "city3": self.loc(self.other_cities[1]),
            "lawyer": self.name(self.lawyer, "initialled"), "l_title": self.lawyer.title,
            "lawyer_full": self.name(self.lawyer),
            "lawyer_city": Ent(self.pick((self.home, self.other_cities[1])), "LOC", "QUASI",
                               related=self.lawyer.key),
            "agent": self.name(self.agent, "full", "NO_MASK"), "a_title": self.agent.title,
            "ministry": Ent(s.agent_office, "ORG", "NO_MASK"),
            "job": Ent(self.job, "DEM", "QUASI"), "a_job": indefinite(self.job),
            "court1": self.org(s.criminal_court), "civil_court": self.org(s.civil_court),
            "court2": self.org(s.appeal_court, city=self.pick((self.home, self.other_cities[0]))),
            "top": ("the ", Ent(s.top_court, "ORG", "NO_MASK")),
            "prosecutor": the(Ent(f"{self.home} public prosecutor's office", "ORG", "QUASI")),
            "prison": self.org(s.prison), "police": self.org(s.police),
            "birth": Ent(str(self.tl.current.year - self.rng.randint(19, 62)), "DATETIME", "QUASI",
                         related=app.key),
        }


# ---------------------------------------------------------------------------
# TAB: storylines (facts, complaints, the Court's assessment)
# ---------------------------------------------------------------------------

@dataclass
class Story:
    articles: list[int]
    allegation: str          # plain text, "that ..."
    facts: list[Para]
    complaints: list[Para]
    merits: list[Para]
    domestic_law: list[Para]
    job: str | None = None


def story_detention(c: Ctx) -> Story:
    offence = c.misc(c.pick(OFFENCES))
    co1, co2, judge = c.person(), c.person(), c.person()
    arrest = c.tl.next()
    facts = c.maybe_heading(0.5, ("A. The applicant's arrest and detention", "1. Arrest and detention on remand"))
    facts.append(c.para((
        "On {d} {title} {app_sur} was arrested by officers from {police} on suspicion of {offence}.",
        "On {d} police officers from {police} took the applicant into custody; {he} was suspected of {offence}.",
        "In the early morning of {d} the applicant's flat in {home} was searched and {he} was arrested on suspicion of {offence}.",
    ), ("{He} was held in police custody for {custody}.", "{His} police custody lasted {custody}, during which {he} had no access to a lawyer."),
        d=c.date_ent(arrest), offence=offence, custody=c.qty(count_of(c.rng.randint(2, 12), "day"))))
    facts.append(c.para((
        "On {d} the applicant was brought before a judge of {court1}, who ordered {his} detention on remand, having regard to the nature of the offence and the state of the evidence.",
        "On {d} Judge {judge} of {court1} remanded the applicant in custody, considering that there was a risk that {he} would abscond or put pressure on witnesses.",
    ), d=c.date(3, 14), judge=c.name(judge)))
    facts += c.maybe_heading(0.4, ("B. The criminal proceedings", "2. The trial"))
    facts.append(c.para((
        "On {d} {prosecutor} filed a bill of indictment with {court1}, charging {title} {app_sur} and {n} other persons, among them {co1} and {co2}, with {offence}.",
        "The investigation was completed on {d}. The applicant was indicted together with {co1}, whose statements to the police had implicated {him}, and {co2}.",
    ), d=c.date(60, 300), n=c.qty(number_words(c.rng.randint(3, 14))), co1=c.name(co1), co2=c.name(co2), offence=offence))
    facts.append(c.para((
        "During the trial {court1} examined the applicant's detention at the end of each hearing, {n} in total, and each time ordered {his} continued detention, relying on the nature of the offence and the content of the file.",
        "The applicant's repeated requests for release were dismissed. The decisions extending {his} detention were drafted in almost identical terms and merely referred to “the strong suspicion” against {him}.",
    ), ("", "{His} lawyer, {l_title} {lawyer}, argued in vain that {he} had a permanent address in {home} and a family to support."),
        n=c.qty(count_of(c.rng.randint(9, 31), "time"))))
    release = c.tl.next(200, 1400)
    sentence = c.qty(f"{count_of(c.rng.randint(2, 14), 'year')} and {count_of(c.rng.randint(1, 11), 'month')}'")
    facts.append(c.para((
        "On {d} {court1} convicted the applicant as charged and sentenced {him} to {sentence} imprisonment. It ordered {his} release pending appeal, having regard to the time already spent in detention.",
        "On {d} the trial court acquitted {title} {app_sur} for lack of evidence and ordered {his} immediate release. The prosecutor appealed.",
    ), d=c.date_ent(release), sentence=sentence))
    detention = c.qty(duration_text((release - arrest).days))
    facts.append(c.para((
        "On {d} {top} upheld the judgment (case no. {case}). The applicant's detention had thus lasted {length}.",
        "The appeal proceedings ended on {d}, when {top} dismissed the appeal in a final decision (no. {case}). In all, {title} {app_sur} had spent {length} in pre-trial detention.",
    ), d=c.date(150, 600), case=c.case_no(), length=detention))
    return Story(
        articles=[5, 6],
        allegation=c.pick(("that {his} pre-trial detention had been unreasonably long",
                           "that the length of {his} detention on remand and of the criminal proceedings against {him} had been excessive")),
        facts=facts,
        complaints=[c.para((
            "The applicant complained under Article 5 § 3 of the Convention that the length of {his} pre-trial detention had been excessive.",
            "Relying on Article 5 § 3 of the Convention, the applicant alleged that {his} detention of {length} had not been justified by relevant and sufficient reasons.",
        ), length=detention)],
        merits=[c.para((
            "The Court notes that the applicant's detention lasted {length}. The domestic courts extended it using stereotyped formulae and never considered alternative preventive measures, such as bail or police supervision.",
            "The period to be taken into consideration amounts to {length}. The Court observes that the risk of absconding was never substantiated by reference to the applicant's personal situation.",
        ), ("There has accordingly been a violation of Article 5 § 3 of the Convention.", ""), length=detention)],
        domestic_law=[c.para(
            "The Code of Criminal Procedure, as in force at the relevant time, allowed a suspect to be detained on remand where there was a strong suspicion that he or she had committed an offence and a risk of absconding or of interference with the evidence. Detention had to be reviewed at least every {months}.",
            months=c.qty(count_of(c.rng.choice((1, 2, 3)), "month")))],
    )


def story_ill_treatment(c: Ctx) -> Story:
    officer, witness, doctor = c.person(), c.person(), c.person()
    injury = c.misc(c.pick(INJURIES), conf="HEALTH")
    hospital = Ent(f"{c.home} State Hospital", "ORG", "QUASI")
    facts = c.maybe_heading(0.4, ("A. The applicant's arrest and alleged ill-treatment", "1. Events in police custody"))
    facts.append(c.para((
        "On {d} {title} {app_sur} was stopped at a checkpoint on the outskirts of {home} and taken to {police}.",
        "On {d}, during an identity check in {home}, police officers ordered the applicant into a {vehicle} and drove {him} to {police}.",
    ), ("{He} was not told why {he} was being detained.", "The officers did not draw up an arrest report until the following morning."),
        d=c.date(), vehicle=c.misc(c.pick(VEHICLES))))
    facts.append(c.para((
        "According to the applicant, {he} was blindfolded, beaten with truncheons and deprived of sleep during the {hours} {he} spent in custody. An officer named {officer} allegedly threatened to harm {his} family.",
        "The applicant submitted that two officers, one of whom {he} later identified as {officer}, punched {him} repeatedly and hit the soles of {his} feet with a wooden stick.",
    ), hours=c.qty(f"{c.rng.randint(18, 96)} hours"), officer=c.name(officer)))
    facts.append(c.para((
        "On {d} the applicant was examined by Dr {doctor} at {hospital}, who noted {injury} and certified that {he} was unfit for work for {days}.",
        "A medical report drawn up at {hospital} on {d} recorded {injury}. The doctor recommended {days} of rest.",
    ), d=c.date(1, 4), doctor=c.name(doctor), hospital=hospital, injury=injury,
        days=c.qty(count_of(c.rng.randint(5, 30), "day"))))
    facts += c.maybe_heading(0.4, ("B. The investigation into the applicant's allegations", "2. The criminal complaint"))
    facts.append(c.para((
        "On {d} the applicant lodged a criminal complaint with {prosecutor} against the officers concerned.",
        "Represented by {l_title} {lawyer}, the applicant complained to {prosecutor} on {d}.",
    ), ("{He} enclosed the medical report and asked that {witness}, a detainee who had shared {his} cell, be heard as a witness.",
        "{He} asked the prosecutor to question {witness}, who had seen {him} being led out of the interrogation room."),
        d=c.date(5, 60), witness=c.name(witness)))
    facts.append(c.para((
        "On {d} the prosecutor decided not to bring criminal proceedings (file no. {case}), finding that the injuries could have been caused while the applicant resisted arrest.",
        "The officers were not questioned until {d}. The prosecutor then discontinued the investigation (file no. {case}) for lack of evidence, without hearing {witness}.",
    ), d=c.date(120, 500), case=c.case_no(), witness=c.name(witness)))
    facts.append(c.para((
        "The applicant's objection was dismissed by {court1} on {d}. That decision was served on {his} lawyer on {d2}.",
        "On {d} {court1} rejected the applicant's objection in a final decision, which was served on {him} on {d2}.",
    ), d=c.date(20, 120), d2=c.date(10, 60)))
    return Story(
        articles=[3, 13],
        allegation="that {he} had been ill-treated in police custody and that no effective investigation had been carried out",
        facts=facts,
        complaints=[c.para((
            "The applicant complained under Article 3 of the Convention that {he} had been beaten while in police custody.",
            "Relying on Articles 3 and 13 of the Convention, the applicant alleged that the officers of {police} had ill-treated {him} and that {his} complaint had not been investigated effectively.",
        ))],
        merits=[c.para((
            "The Court reiterates that where an individual is taken into custody in good health but is found to be injured on release, it is for the State to provide a plausible explanation of how those injuries were caused.",
            "The medical evidence shows that the applicant sustained {injury} while in the hands of the police. No convincing explanation has been offered by the Government.",
        ), ("The investigation, which lasted {length}, did not meet the requirement of promptness.", ""),
            injury=injury, length=c.qty(count_of(c.rng.randint(2, 5), "year")))],
        domestic_law=[c.para(
            "The Criminal Code makes it an offence for a public official to subject a person to torture or inhuman treatment, punishable by up to {years} of imprisonment. A decision not to prosecute may be challenged before the competent court within {days} of its service.",
            years=c.qty(count_of(c.rng.randint(5, 10), "year")), days=c.qty(count_of(c.rng.choice((7, 14, 15)), "day")))],
    )


def story_medical(c: Ctx) -> Story:
    illness = c.misc(c.pick(ILLNESSES), conf="HEALTH")
    hospital = Ent(f"{c.other_cities[0]} University Hospital", "ORG", "QUASI")
    forensic = the(Ent(c.pick(("Forensic Medicine Institute", f"Institute of Forensic Medicine in {c.home}")), "ORG", "QUASI"))
    w1 = c.rng.randint(68, 95)
    facts = c.maybe_heading(0.4, ("A. The applicant's conviction", "MEDICAL TREATMENT IN DETENTION"))
    facts.append(c.para((
        "On {d} {court1} sentenced {title} {app_sur} to {sentence} imprisonment for {offence}. {He} began serving the sentence in {prison}.",
        "The applicant is serving a sentence of {sentence} imprisonment imposed by {court1} on {d} for {offence}. {He} is detained in {prison}.",
    ), d=c.date(), sentence=c.qty(count_of(c.rng.randint(4, 16), "year") + "'"), offence=c.misc(c.pick(OFFENCES))))
    facts.append(c.para((
        "In {d} the applicant was diagnosed with {illness}. The prison doctor recommended regular check-ups and a special diet, which, according to the applicant, were never provided.",
        "Tests carried out in {d} revealed that the applicant was suffering from {illness}. For several months {he} received only painkillers.",
    ), d=c.date_ent(c.tl.next(60, 400), "month"), illness=illness))
    facts.append(c.para((
        "On {d} doctors at {hospital} reported that the applicant's condition required treatment which could not be provided in the prison infirmary.",
        "A report issued by {hospital} on {d} stated that the applicant needed surgery and constant monitoring.",
    ), ("{His} weight fell from {w1} to {w2} over the following months.", ""),
        d=c.date(30, 200), hospital=hospital, w1=c.qty(f"{w1} kg"), w2=c.qty(f"{w1 - c.rng.randint(9, 21)} kg")))
    facts += c.maybe_heading(0.3, ("B. Requests for release on health grounds",))
    facts.append(c.para((
        "On {d} the applicant's lawyer, {l_title} {lawyer}, asked {prosecutor} to suspend the execution of the sentence on health grounds. The request was forwarded to {forensic}.",
        "The applicant applied for a stay of execution on {d}. {prosecutor_cap} sought an opinion from {forensic}, which examined {him} two months later.",
    ), d=c.date(20, 120), forensic=forensic, prosecutor_cap=Ent(f"The {c.home} public prosecutor's office", "ORG", "QUASI")))
    facts.append(c.para((
        "In a report of {d} {forensic} concluded that the applicant could continue to serve {his} sentence, provided that {he} was treated in a prison hospital. {He} was transferred to {prison_hospital} on {d2}.",
        "On {d} {forensic} found that the applicant's illness was not life-threatening. The applicant was nevertheless moved to {prison_hospital} on {d2}, where {he} spent {stay}.",
    ), d=c.date(40, 200), d2=c.date(10, 90), forensic=forensic,
        prison_hospital=the(Ent(f"{c.other_cities[1]} prison hospital", "ORG", "QUASI")),
        stay=c.qty(count_of(c.rng.randint(2, 9), "week"))))
    facts.append(c.para((
        "{His} subsequent requests for release were refused on {d} and {d2}.",
        "The applicant's sister, {sister}, wrote to the prison authorities on {d} and again on {d2} complaining that {his} condition was deteriorating.",
    ), d=c.date(30, 200), d2=c.date(30, 200), sister=c.name(c.person(female=True))))
    wait = c.qty(count_of(c.rng.randint(7, 30), "month"))
    return Story(
        articles=[3],
        allegation="that {he} had not received adequate medical care in detention",
        facts=facts,
        complaints=[c.para((
            "The applicant complained under Article 3 of the Convention that {his} continued detention despite {his} illness and the lack of adequate treatment amounted to inhuman and degrading treatment.",
            "The applicant alleged that the authorities had failed to provide {him} with the medical care required by {his} condition, in breach of Article 3.",
        ))],
        merits=[c.para("The Court observes that the applicant, who suffered from {illness}, waited {wait} before receiving the treatment recommended by {his} doctors. The Government have not explained that delay.",
                       illness=illness, wait=wait)],
        domestic_law=[c.para("Under the Code on the Execution of Sentences, the execution of a prison sentence may be suspended where a convicted person suffers from a serious illness which cannot be treated in prison. The prosecutor decides on the basis of a forensic medical report.")],
    )


def story_length_civil(c: Ctx) -> Story:
    company, expert = c.company(), c.person()
    cause = c.misc(c.pick(CIVIL_CAUSES).format(**c.slots))
    start = c.tl.next()
    levels = c.rng.choice((2, 3))
    facts = c.maybe_heading(0.5, ("THE CIVIL PROCEEDINGS", "A. Proceedings before the first-instance court", "LENGTH OF PROCEEDINGS"))
    facts.append(c.para((
        "On {d} {title} {app_sur} brought an action in {civil_court} against {company}, seeking {claim} in compensation for {cause}.",
        "The applicant sued {company} in {civil_court} on {d}. {He} claimed {claim} in respect of {cause}.",
    ), d=c.date_ent(start), company=company, claim=c.money(c.rng.randint(5, 400) * 1000), cause=cause))
    n_hear = c.rng.randint(9, 28)
    facts.append(c.para((
        "Of the {n} hearings scheduled between {d} and {d2}, {k} were adjourned because the defendant's representative failed to appear or because the court had not been properly constituted.",
        "Between {d} and {d2} the court listed {n} hearings. {K} of them were adjourned, mostly because witnesses had not been summoned correctly.",
    ), d=c.date(30, 120), d2=c.date(300, 900), n=c.qty(number_words(n_hear)), k=c.qty(number_words(n_hear // 2)),
        K=c.qty(number_words(n_hear // 2).capitalize())))
    facts.append(c.para((
        "On {d} the court ordered an expert report from {expert}, an engineer registered in {city2}. The report was submitted only on {d2}, after the court had twice fined the expert.",
        "An expert, {expert}, was appointed on {d}. The applicant challenged {expert_sur}'s impartiality, and a new expert opinion was delivered on {d2}.",
    ), d=c.date(20, 120), d2=c.date(150, 500), expert=c.name(expert), expert_sur=c.name(expert, "last")))
    facts.append(c.para((
        "In a judgment of {d} {civil_court} partly allowed the claim and awarded the applicant {award}. Both parties appealed.",
        "On {d} the first-instance court found for the applicant and ordered {company} to pay {him} {award}. The company appealed.",
    ), d=c.date(60, 300), award=c.money(c.rng.randint(2, 200) * 1000), company=company))
    facts += c.maybe_heading(0.4, ("B. Appeal proceedings",))
    facts.append(c.para((
        "On {d} {court2} quashed the judgment and remitted the case for fresh examination, finding that the facts had not been properly established.",
        "On {d} {court2} upheld the judgment in part but reduced the award of interest.",
    ), d=c.date(200, 700)))
    end = c.tl.next(200, 900)
    total = c.qty(duration_text((end - start).days))
    facts.append(c.para((
        "The proceedings ended on {d}, when {top} dismissed an appeal on points of law lodged by {company}.",
        "The final decision was given by {top} on {d} and served on the applicant's lawyer, {l_title} {lawyer}, a month later.",
    ), d=c.date_ent(end), company=company))
    return Story(
        articles=[6],
        allegation="that the length of the civil proceedings had been incompatible with the “reasonable time” requirement",
        facts=facts,
        complaints=[c.para((
            "The applicant complained that the length of the proceedings had been incompatible with the “reasonable time” requirement laid down in Article 6 § 1 of the Convention.",
            "Under Article 6 § 1 of the Convention the applicant complained that {his} dispute with {company} had lasted {total}.",
        ), company=company, total=total)],
        merits=[c.para((
            "The period to be taken into consideration began on {d} and ended on {d_end}. It thus lasted {total} for {levels} levels of jurisdiction.",
            "The proceedings lasted {total} in total. The Court does not consider the case to have been particularly complex.",
        ), ("Having regard to its case-law on the subject, the Court considers that the length of the proceedings was excessive.", ""),
            d=c.date_ent(start), d_end=c.date_ent(end), total=total, levels=number_words(levels))],
        domestic_law=[c.para("The Code of Civil Procedure obliges the courts to examine cases within a reasonable time. Since {year}, a party may lodge a complaint about the length of pending proceedings with the court of higher instance, which may award just satisfaction of up to {cap}.",
                             year=Ent(str(c.rng.randint(2003, 2009)), "DATETIME", "NO_MASK"),
                             cap=c.money(c.rng.randint(5, 20) * 1000, "NO_MASK"))],
    )


def story_expropriation(c: Ctx) -> Story:
    village = c.loc(c.surname() + c.pick(("köy", "ovo", "ice", "dorf", "eni", "ino", "by")))
    neighbour = c.person()
    authority = ("the ", Ent(c.pick((f"{c.home} Municipality", "National Roads Directorate",
                                     f"{c.home} Regional Development Agency", "Ministry of Agriculture")), "ORG", "QUASI"))
    area = c.rng.randint(900, 38000)
    facts = c.maybe_heading(0.5, ("EXPROPRIATION", "A. The expropriation of the applicant's land"))
    facts.append(c.para((
        "The applicant owns a plot of {area} in the village of {village}, near {home}. It is registered in the land register under no. {plot}.",
        "{title} {app_sur} inherited from {his} father a plot of land measuring {area} in {village}, recorded in the land register as plot no. {plot}.",
    ), area=c.qty(f"{area:,} square metres"), village=village,
        plot=Ent(f"{c.rng.randint(1, 999)}/{c.rng.randint(1, 40)}", "CODE", "QUASI")))
    facts.append(c.para((
        "On {d} {authority} decided to expropriate the land for the construction of {project}. A committee of experts assessed its value at {value}, which was paid to the applicant on {d2}.",
        "By a decision of {d} the plot was expropriated by {authority} for the purpose of building {project}. The compensation, fixed at {value}, was paid on {d2}.",
    ), d=c.date(), d2=c.date(30, 200), authority=authority, project=c.misc(c.pick(PROJECTS)),
        value=c.money(area * c.rng.randint(2, 9))))
    facts += c.maybe_heading(0.3, ("B. Proceedings for additional compensation",))
    facts.append(c.para((
        "Considering that amount too low, the applicant brought proceedings in {civil_court} for additional compensation. On {d} the court, relying on a report by three experts, awarded {him} a further {extra} plus statutory interest.",
        "The applicant sued for additional compensation. On {d} {civil_court} found that the land had been undervalued and awarded {him} {extra}.",
    ), d=c.date(200, 700), extra=c.money(area * c.rng.randint(3, 12))))
    facts.append(c.para((
        "The expropriating authority appealed. On {d} {top} upheld the judgment.",
        "The judgment was upheld by {top} on {d}.",
    ), ("The additional compensation was paid to the applicant only on {d2}, when the annual rate of inflation stood at about {inflation}.",
        "The sum was paid on {d2}, with interest calculated at a rate well below the rate of inflation."),
        d=c.date(100, 400), d2=c.date(300, 900),
        inflation=c.qty(f"{c.rng.randint(18, 85)}%")))
    facts.append(c.para((
        "Meanwhile, on {d}, the applicant's neighbour, {neighbour}, had obtained a considerably higher amount per square metre for a comparable plot in {village}.",
        "The applicant submitted a letter of {d} from {neighbour}, the head of the village council of {village}, confirming that the land was irrigated and suitable for orchards.",
    ), d=c.date(5, 100), neighbour=c.name(neighbour), village=village))
    return Story(
        articles=[6],
        allegation="that the delay in paying the additional compensation for the expropriation of {his} land had violated {his} property rights",
        facts=facts,
        complaints=[c.para("The applicant complained that the additional compensation had been paid late and had lost much of its value, in breach of Article 1 of Protocol No. 1 to the Convention.")],
        merits=[c.para((
            "The Court has found in similar cases that delays in paying compensation for expropriation, combined with high inflation, placed an individual and excessive burden on the owner.",
            "The Court notes that the applicant had to wait several years for the additional compensation, whose value had meanwhile been eroded by inflation.",
        ))],
        domestic_law=[c.para("Under the Expropriation Act, the owner may bring an action for an increase of compensation within {days} of notification of the expropriation decision. Late payment attracts interest at the statutory rate.",
                             days=c.qty(count_of(c.rng.choice((30, 60, 90)), "day")))],
    )


def story_custody(c: Ctx) -> Story:
    app = c.applicant
    c.set_age(23, 40)
    spouse = c.person(female=not app.female)
    father = spouse if app.female else app
    child = replace(c.person(), last=father.last)
    c.slots.update(sp_title=spouse.title, spouse_sur=c.name(spouse, "last"))
    social = the(Ent(f"{c.other_cities[0]} Social Welfare Centre", "ORG", "QUASI"))
    psych, worker = c.person(female=True), c.person()
    sp_adj = c.pick([s.adj for s in STATES])
    facts = c.maybe_heading(0.5, ("CUSTODY OF THE CHILD", "A. Background", "1. The applicant's marriage and divorce"))
    facts.append(c.para((
        "In {y} the applicant married {spouse}, {a_sp} {sp_nat} national. Their child, {child}, was born on {born}.",
        "{title} {app_sur} married {spouse} in {y}. The couple had one child, {child}, born on {born}.",
    ), y=c.date_ent(c.tl.next(), "year"), spouse=c.name(spouse), a_sp=indefinite(sp_adj),
        sp_nat=Ent(sp_adj, "DEM", "QUASI", key="spouse-nat"), child=c.name(child), born=c.date(300, 700)))
    facts.append(c.para((
        "The couple separated in {d}. {sp_title} {spouse_sur} moved with the child to {city2} and refused to disclose the new address.",
        "In {d} {sp_title} {spouse_sur} left the family home, taking {child_first} with {sp_him}, and settled in {city2}.",
    ), d=c.date_ent(c.tl.next(300, 1200), "month"), spouse_sur=c.name(spouse, "last"),
        child_first=Ent(child.first, "PERSON", "DIRECT", key=child.key), sp_him=PRONOUNS[spouse.female]["him"]))
    facts += c.maybe_heading(0.4, ("B. Divorce and contact proceedings", "2. Contact proceedings"))
    facts.append(c.para((
        "On {d} {civil_court} granted the divorce and awarded custody of the child to {sp_title} {spouse_sur}. The applicant was granted contact every other weekend and for {weeks} of the summer holidays.",
        "In a judgment of {d} the court dissolved the marriage, gave custody to {sp_title} {spouse_sur} and set out a detailed contact schedule allowing the applicant to see the child for {weeks} each summer.",
    ), d=c.date(60, 400), spouse_sur=c.name(spouse, "last"), weeks=c.qty(count_of(c.rng.randint(2, 4), "week"))))
    facts.append(c.para((
        "On {d} the applicant asked {social} to assist in enforcing the contact arrangements. A social worker, {worker}, visited the child's home on {d2} and reported that the child appeared frightened of the meetings.",
        "The applicant applied to {social} for help on {d}. A social worker, {worker}, organised a meeting on {d2}, which {sp_title} {spouse_sur} did not attend.",
    ), d=c.date(30, 200), d2=c.date(20, 90), social=social, worker=c.name(worker), spouse_sur=c.name(spouse, "last")))
    facts.append(c.para((
        "{n} attempts to enforce the contact arrangements with the help of bailiffs failed between {d} and {d2}. A fine of {fine} imposed on {sp_title} {spouse_sur} was never collected.",
        "Between {d} and {d2} the bailiffs went to {sp_title} {spouse_sur}'s home {n_low} times, without success. The court fined {sp_title} {spouse_sur} {fine}.",
    ), d=c.date(30, 200), d2=c.date(200, 600), n=c.qty(number_words(c.rng.randint(4, 11)).capitalize()),
        n_low=c.qty(number_words(c.rng.randint(4, 11))), fine=c.money(c.rng.randint(2, 60) * 100),
        spouse_sur=c.name(spouse, "last")))
    facts.append(c.para((
        "On {d} a psychologist, {psych}, concluded that the child had become estranged from the applicant and recommended family therapy, which never took place.",
        "An expert opinion prepared by {psych} on {d} found that the child showed signs of parental alienation.",
    ), d=c.date(60, 300), psych=c.name(psych)))
    return Story(
        articles=[8],
        allegation="that the authorities had failed to enforce {his} right of contact with {his} child",
        facts=facts,
        complaints=[c.para((
            "The applicant complained under Article 8 of the Convention that the authorities had not taken adequate steps to enforce {his} contact rights.",
            "Relying on Article 8, the applicant complained that {he} had been unable to see {his} child for years because of the inaction of the authorities.",
        ))],
        merits=[c.para((
            "The Court considers that the authorities failed to take, without delay, all the measures that could reasonably be expected of them to enforce the contact arrangements.",
            "The passage of time had irremediable consequences for the relations between the applicant and the child. The fines imposed were not capable of producing any effect.",
        ))],
        domestic_law=[c.para("The Family Act provides that the parent with whom the child does not live has the right and the duty to maintain personal contact with the child. Contact orders are enforced by the courts, which may impose fines on the parent who obstructs contact.")],
    )


def story_expression(c: Ctx) -> Story:
    official = c.person(female=False)
    paper = the(Ent(f"{c.pick(NEWSPAPER_WORDS[0])} {c.pick(NEWSPAPER_WORDS[1])}", "ORG", "QUASI"))
    office = c.pick(OFFICES)
    job = c.pick(("journalist", "editor-in-chief", "columnist", "freelance reporter"))
    facts = c.maybe_heading(0.5, ("FREEDOM OF EXPRESSION", "A. The article", "A. The publication"))
    facts.append(c.para((
        "At the material time the applicant worked as {a_job} {job} for {paper}, a weekly newspaper published in {home}.",
        "{title} {applicant} is {a_job} {job}. Since {y} {he} has written for {paper}, a regional daily.",
    ), job=Ent(job, "DEM", "QUASI"), a_job=indefinite(job), paper=paper, y=c.date_ent(c.tl.next(), "year")))
    facts.append(c.para((
        "On {d} {paper} published an article by the applicant entitled “{headline}”. It alleged that {official}, the {office} of {home}, had awarded public contracts to companies owned by his relatives.",
        "In its issue of {d} the newspaper carried the applicant's article “{headline}”, which accused the {office}, {official}, of abusing his position.",
    ), d=c.date(), paper=paper, headline=c.misc(c.pick(ARTICLE_TITLES)), office=office, official=c.name(official)))
    facts += c.maybe_heading(0.4, ("B. Defamation proceedings",))
    facts.append(c.para((
        "On {d} {official_sur} brought a civil action for defamation against the applicant and the publisher, claiming {claim} in respect of non-pecuniary damage.",
        "The {office} sued the applicant for defamation on {d}, seeking {claim} and a public apology.",
    ), d=c.date(10, 90), official_sur=c.name(official, "last"), office=office,
        claim=c.money(c.rng.randint(10, 200) * 1000)))
    facts.append(c.para((
        "On {d} {civil_court} found that the applicant had not proved the truth of {his} statements and ordered {him} to pay {award} in damages, together with court costs.",
        "In a judgment of {d} the first-instance court held that the article had damaged the honour and reputation of {official} and ordered the applicant to pay {award}.",
    ), ("It also ordered {paper} to publish the operative part of the judgment.", ""),
        d=c.date(120, 500), award=c.money(c.rng.randint(2, 50) * 1000), official=c.name(official), paper=paper))
    facts.append(c.para((
        "The applicant appealed, arguing that {he} had relied on documents from the municipal archives and that the article concerned a matter of public interest. On {d} {court2} upheld the judgment.",
        "On {d} {court2} dismissed the applicant's appeal, holding that a journalist could not rely on rumours circulating in {home}.",
    ), d=c.date(100, 400)))
    facts.append(c.para((
        "The applicant paid the award in {n} monthly instalments. {He} submitted that the sum represented about {months} of {his} salary.",
        "Following the judgment, {paper} dismissed the applicant. {He} has been unemployed since {d}.",
    ), n=c.qty(number_words(c.rng.randint(6, 24))), months=c.qty(count_of(c.rng.randint(8, 30), "month")),
        paper=paper, d=c.date(30, 200)))
    return Story(
        articles=[10],
        allegation="that {his} conviction for defamation had breached {his} right to freedom of expression",
        facts=facts,
        complaints=[c.para((
            "The applicant complained under Article 10 of the Convention that the judgment against {him} had violated {his} right to freedom of expression.",
            "Relying on Article 10, the applicant submitted that the award of damages against {him} had been disproportionate and had had a chilling effect on the press in {home}.",
        ))],
        merits=[c.para((
            "The Court notes that the article concerned the use of public funds by a local politician, a matter of legitimate public concern. The domestic courts did not distinguish between statements of fact and value judgments.",
            "The limits of acceptable criticism are wider as regards a politician acting in his public capacity. The amount the applicant was ordered to pay was substantial in relation to {his} income.",
        ))],
        domestic_law=[c.para("The Civil Code entitles a person whose personal rights have been infringed by a publication to claim compensation for non-pecuniary damage. The publisher and the author are jointly liable.")],
        job=job,
    )


def story_non_enforcement(c: Ctx) -> Story:
    plant = the(Ent(c.pick((f"{c.home} Machine-Building Plant", f"{c.surname()} Coal Mine", f"{c.home} Ship Repair Yard",
                            "State Rail Works No. 3", f"{c.home} Sugar Refinery")), "ORG", "QUASI"))
    official = c.person()
    bailiffs = the(Ent(f"{c.home} Bailiffs' Service", "ORG", "QUASI"))
    facts = c.maybe_heading(0.5, ("A. The judgment in the applicant's favour", "NON-ENFORCEMENT OF THE JUDGMENT"))
    start_work = c.tl.next()
    facts.append(c.para((
        "{title} {app_sur} worked as {a_job} {job} at {plant}, a State-owned company, until {d}.",
        "Until {d} the applicant was employed by {plant}, which is owned by the State. {He} left after {his} salary had not been paid for {months}.",
    ), d=c.date_ent(start_work), plant=plant, months=c.qty(count_of(c.rng.randint(4, 18), "month"))))
    judgment = c.tl.next(60, 400)
    facts.append(c.para((
        "On {d} {civil_court} ordered the company to pay the applicant {arrears} in salary arrears and compensation. The judgment became final on {d2}.",
        "In a judgment of {d} the court awarded the applicant {arrears} in unpaid wages. No appeal was lodged and the judgment became enforceable on {d2}.",
    ), d=c.date_ent(judgment), d2=c.date(10, 40), arrears=c.money(c.rng.randint(3, 90) * 1000)))
    facts += c.maybe_heading(0.4, ("B. Enforcement proceedings",))
    facts.append(c.para((
        "On {d} {bailiffs} opened enforcement proceedings (no. {case}). The bailiffs informed the applicant that the company's accounts had been frozen and that it had no assets that could be sold.",
        "Enforcement proceedings no. {case} were opened by {bailiffs} on {d}. In the following months the bailiffs returned the writ of execution {n} times, unenforced.",
    ), d=c.date(10, 60), bailiffs=bailiffs, case=c.case_no(), n=c.qty(number_words(c.rng.randint(2, 6)))))
    facts.append(c.para((
        "On {d} the Ministry of Industry placed the company under a special insolvency regime, which barred the attachment of its property.",
        "On {d} a commercial court opened insolvency proceedings against the company, and all enforcement was suspended.",
    ), d=c.date(100, 500)))
    facts.append(c.para((
        "The applicant complained about the bailiffs' inactivity. By a letter of {d}, {official}, a deputy head of department, replied that the judgment would be enforced once the company's financial situation improved.",
        "In reply to the applicant's complaint, {official} of the regional administration wrote on {d} that the debt would be paid as soon as funds became available.",
    ), d=c.date(60, 300), official=c.name(official)))
    paid = c.tl.next(300, 1600)
    total = c.qty(duration_text((paid - judgment).days))
    facts.append(c.para((
        "The judgment debt was paid in full on {d}.",
        "The applicant finally received the amount awarded on {d}, without any compensation for the delay.",
    ), d=c.date_ent(paid)))
    return Story(
        articles=[6],
        allegation="that the prolonged non-enforcement of the judgment in {his} favour had breached {his} right of access to a court",
        facts=facts,
        complaints=[c.para((
            "The applicant complained under Article 6 § 1 of the Convention and Article 1 of Protocol No. 1 about the prolonged failure to enforce the judgment of {d}.",
            "The applicant complained that the State had failed to enforce for {total} a final judgment against a company it owned.",
        ), d=c.date_ent(judgment), total=total)],
        merits=[c.para("The Court notes that the judgment in the applicant's favour remained unenforced for {total}. A State-owned company's lack of funds cannot justify such a delay.", total=total)],
        domestic_law=[c.para("The Enforcement Proceedings Act requires the bailiffs to take all necessary steps to enforce a writ within {months} of its receipt. Property of companies subject to the special insolvency regime may not be attached.",
                             months=c.qty(count_of(c.rng.choice((2, 6)), "month")))],
    )


def story_death(c: Ctx) -> Story:
    c.set_age(40, 58)
    son = replace(c.person(female=False), last=c.applicant.last)
    commander, soldier = c.person(female=False), c.person(female=False)
    unit = the(Ent(c.pick(UNITS), "ORG", "QUASI"))
    son_first = Ent(son.first, "PERSON", "DIRECT", key=son.key)
    parent = "mother" if c.applicant.female else "father"
    facts = c.maybe_heading(0.5, ("A. The death of the applicant's son", "THE DEATH OF A CONSCRIPT"))
    facts.append(c.para((
        "The applicant is the {parent} of {son}, who was born in {y}. In {d} {son_first} was called up for military service and assigned to {unit}, stationed near {city2}.",
        "{title} {app_sur}'s son, {son}, born in {y}, began his compulsory military service in {d}. He served in {unit}.",
    ), parent=parent, son=c.name(son), son_first=son_first, y=c.date_ent(c.tl.current - timedelta(days=365 * 19), "year"),
        d=c.date_ent(c.tl.next(), "month"), unit=unit))
    facts.append(c.para((
        "On {d} {son_first} was found dead in the barracks with {wound}. The unit commander, {commander}, informed the applicant by telephone the following day.",
        "According to the military authorities, on {d} {son_first} shot himself while on guard duty. His body had {wound}.",
    ), d=c.date(100, 500), son_first=son_first, commander=c.name(commander),
        wound=c.misc(c.pick(("a gunshot wound to the head", "a single gunshot wound to the chest", "gunshot wounds to the neck")))))
    facts.append(c.para((
        "An autopsy was carried out on {d} at {hospital}. The report concluded that death had been caused by a shot fired from a distance of less than {dist}.",
        "The autopsy report of {d} found traces of alcohol in the blood and noted bruising on the face which had occurred shortly before death.",
    ), d=c.date(1, 3), hospital=Ent(f"{c.other_cities[0]} Military Hospital", "ORG", "QUASI"),
        dist=c.qty(f"{c.rng.randint(5, 50)} centimetres")))
    facts += c.maybe_heading(0.4, ("B. The investigation",))
    facts.append(c.para((
        "On {d} the military prosecutor opened an investigation. The applicant asked that the soldiers who had served with {his} son be questioned, in particular {soldier}, who had reportedly threatened him.",
        "The military prosecutor's office questioned {n} soldiers. The applicant's requests that {soldier} be confronted with other witnesses were refused on {d}.",
    ), d=c.date(5, 60), soldier=c.name(soldier), n=c.qty(number_words(c.rng.randint(5, 20)))))
    facts.append(c.para((
        "On {d} the military prosecutor discontinued the investigation, concluding that {son_first} had committed suicide. The applicant was not informed of that decision until {d2}.",
        "The investigation was closed on {d} on the ground that no crime had been committed. The decision reached the applicant on {d2}.",
    ), d=c.date(100, 400), d2=c.date(60, 300), son_first=son_first))
    facts.append(c.para((
        "The applicant's appeal against the discontinuation was dismissed by {court2} on {d} on the ground that it had been lodged out of time.",
        "On {d} {court2} rejected the applicant's appeal, without examining {his} arguments concerning the bruises on the body.",
    ), d=c.date(60, 300)))
    return Story(
        articles=[2, 13],
        allegation="that the State was responsible for the death of {his} son during military service and had failed to investigate it effectively",
        facts=facts,
        complaints=[c.para((
            "The applicant complained under Article 2 of the Convention that the authorities had failed to protect {his} son's life and to conduct an effective investigation into his death.",
            "Relying on Articles 2 and 13, the applicant complained about the death of {son} and the inadequacy of the ensuing investigation.",
        ), son=c.name(son))],
        merits=[c.para((
            "The Court observes that the investigation left important questions unanswered, including why a conscript described as depressed had been given access to a loaded weapon.",
            "The applicant was not involved in the investigation to the extent necessary to safeguard {his} legitimate interests.",
        ))],
        domestic_law=[c.para("Under the Military Prosecutors Act, deaths of servicemen occurring in military premises are investigated by the military prosecutor. Decisions to discontinue an investigation may be appealed against to the military court.")],
    )


def story_assembly(c: Ctx) -> Story:
    religious = c.chance(0.5)
    officer, co1 = c.person(), c.person()
    if religious:
        belief = c.pick(BELIEFS)
        group = Ent(belief, "DEM", "QUASI", conf="BELIEF")
        intro = ("{title} {app_sur} is {a_group} {group} and has belonged to a local congregation in {home} since {y}.",
                 "The applicant, a practising {group}, is one of the elders of the congregation in {home}.")
        event = ("On {d} the applicant and about {n} other believers gathered for a religious service in a rented hall at {address}.",
                 "On {d} some {n} members of the congregation met for prayer and religious instruction in a private flat at {address}.")
        article, allegation = 9, "that the interruption of a religious service and {his} subsequent fine had breached {his} freedom of religion"
    else:
        group = Ent(c.pick(PARTIES), "ORG", "QUASI", conf="POLITICS")
        intro = ("{title} {app_sur} is a member of the {group} and has chaired its {home} branch since {y}.",
                 "The applicant has been active in the {group} since {y}.")
        event = ("On {d} the party organised a demonstration at {address} against {topic}. About {n} people took part.",
                 "On {d} some {n} people gathered at {address} to protest against {topic}.")
        article, allegation = 11, "that the dispersal of a peaceful demonstration and {his} fine had violated {his} freedom of assembly"
    address = c.loc(f"{c.surname()} {c.pick(('Street', 'Square', 'Avenue'))}")
    act = c.pick(STATUTES)
    facts = c.maybe_heading(0.5, ("A. Background", "THE EVENTS OF " + str(c.tl.current.year + 1)))
    facts.append(c.para(intro, a_group=indefinite(group.text), group=group, y=c.date_ent(c.tl.next(), "year")))
    facts.append(c.para(event, d=c.date(), n=c.qty(number_words(c.rng.randint(15, 95))), address=address,
                        topic=c.misc(c.pick(PROTEST_TOPICS))))
    facts.append(c.para((
        "Shortly afterwards, police officers led by {officer} entered, recorded the participants' identity details and ordered them to leave. The applicant was taken to {police}, where {he} was questioned for {hours}.",
        "After {minutes} the police, under the command of {officer}, ordered the crowd to disperse and arrested the applicant together with {co1}.",
    ), officer=c.name(officer), co1=c.name(co1), hours=c.qty(count_of(c.rng.randint(2, 9), "hour")),
        minutes=c.qty(count_of(c.rng.randint(10, 50), "minute"))))
    facts += c.maybe_heading(0.4, ("B. Administrative-offence proceedings", "B. Proceedings against the applicant"))
    facts.append(c.para((
        "On {d} {court1} found the applicant guilty of holding a meeting without prior notification, an offence under section {sec} of the {act}, and fined {him} {fine}.",
        "In a decision of {d} the court fined the applicant {fine} under the {act}, finding that the gathering had not been notified to the authorities.",
    ), d=c.date(10, 90), sec=c.rng.randint(5, 40), act=act, fine=c.money(c.rng.randint(1, 30) * 100)))
    facts.append(c.para((
        "The applicant appealed, arguing that the gathering had been entirely peaceful and that the notification rules were applied too rigidly. On {d} {court2} dismissed the appeal in a final decision.",
        "On {d} {court2} upheld the fine. The decision was final.",
    ), ("{His} lawyer, {l_title} {lawyer}, received a copy of the decision on {d2}.", ""),
        d=c.date(30, 200), d2=c.date(5, 40)))
    return Story(
        articles=[article, 14] if c.chance(0.3) else [article],
        allegation=allegation,
        facts=facts,
        complaints=[c.para("The applicant complained under Article {art} of the Convention that {he} had been punished for taking part in a peaceful {what}.",
                           art=article, what="religious meeting" if religious else "demonstration")],
        merits=[c.para((
            "The Court notes that the gathering was peaceful and that the participants posed no threat to public order. The interference was not “necessary in a democratic society”.",
            "The authorities have not shown that the lack of prior notification alone justified the interruption of the gathering and the penalty imposed on the applicant.",
        ))],
        domestic_law=[c.para("Section {sec} of the {act} requires the organisers of a public gathering to notify the local authorities at least {days} in advance. Failure to do so is a minor offence punishable by a fine.",
                             sec=c.rng.randint(3, 12), act=act, days=c.qty(count_of(c.rng.choice((3, 5, 10)), "day")))],
    )


def story_prison_conditions(c: Ctx) -> Story:
    governor = c.person()
    area, inmates = c.rng.randint(8, 24), c.rng.randint(4, 14)
    prison2 = c.org(c.state.prison, city=c.other_cities[0])
    facts = c.maybe_heading(0.5, ("CONDITIONS OF DETENTION", "A. Conditions of the applicant's detention"))
    facts.append(c.para((
        "From {d} to {d2} the applicant was held in {prison}.",
        "The applicant spent the period between {d} and {d2} in {prison}, awaiting trial.",
    ), ("{He} shared a cell measuring {area} with {n} other inmates.",
        "{His} cell of {area} was designed for four people but usually housed {n} more."),
        d=c.date(), d2=c.date(300, 1100), area=c.qty(f"{area} square metres"),
        n=c.qty(number_words(inmates))))
    facts.append(c.para((
        "According to the applicant, the cell had no ventilation, the toilet was separated from the living area only by a curtain, and inmates had to take turns to sleep. {He} was allowed to shower once a week for {minutes}.",
        "The applicant described the sanitary conditions as appalling: the windows were covered with metal shutters, there were cockroaches and bedbugs, and outdoor exercise was limited to one hour a day in a yard of {yard}.",
        "Smoking was permitted in the cell, although {title} {app_sur} suffered from {illness}. Food was served in the cell, a metre away from the toilet.",
    ), minutes=c.qty(count_of(c.rng.choice((10, 15, 20)), "minute")), yard=c.qty(f"{c.rng.randint(12, 40)} square metres"),
        illness=c.misc(c.pick(("asthma", "chronic bronchitis", "a heart condition")), conf="HEALTH")))
    facts.append(c.para((
        "A certificate of {d} signed by the prison governor, {governor}, stated that the cell measured {area2} and had never accommodated more than {n2} detainees.",
        "In a letter of {d} the governor of the facility, {governor}, confirmed that the remand wing had operated at {rate} of its official capacity.",
    ), d=c.date(30, 300), governor=c.name(governor), area2=c.qty(f"{area + c.rng.randint(3, 10)} square metres"),
        n2=c.qty(number_words(max(2, inmates - 3))), rate=c.qty(f"{c.rng.randint(130, 260)}%")))
    facts += c.maybe_heading(0.3, ("B. Domestic complaints",))
    facts.append(c.para((
        "On {d} the applicant complained to {prosecutor} about the conditions of {his} detention. The prosecutor replied on {d2} that the facility was overcrowded owing to a lack of funds but that the conditions complied with the law.",
        "{His} complaints of {d} and {d2} to the prison inspectorate went unanswered.",
    ), d=c.date(20, 200), d2=c.date(20, 120)))
    facts.append(c.para((
        "{He} also brought a civil action for compensation against the Ministry of Finance, claiming {claim}. On {d} {civil_court} dismissed the claim, finding no proof of damage to {his} health.",
        "A claim for damages of {claim} against the prison administration was rejected by {civil_court} on {d}.",
    ), claim=c.money(c.rng.randint(5, 80) * 1000), d=c.date(100, 500)))
    facts.append(c.para((
        "On {d} the applicant was transferred to {prison2}, where {he} was placed in a renovated wing.",
        "The applicant has been held in {prison2} since {d}. {He} makes no complaint about the conditions there.",
    ), d=c.date(30, 300), prison2=prison2))
    return Story(
        articles=[3, 13],
        allegation="that the conditions of {his} detention had been inhuman and degrading",
        facts=facts,
        complaints=[c.para((
            "The applicant complained under Article 3 of the Convention about the conditions of {his} detention in {prison}, in particular severe overcrowding.",
            "Relying on Articles 3 and 13, the applicant complained of overcrowding and poor sanitary conditions and of the lack of an effective remedy.",
        ))],
        merits=[c.para("Even accepting the Government's figures, the applicant had less than {space} of personal space for most of {his} detention. That fact alone is sufficient for the Court to find a violation of Article 3.",
                       space=c.qty(f"{c.rng.choice(('two', 'three'))} square metres"))],
        domestic_law=[c.para("The Pre-Trial Detention Act provides that each detainee must have at least {space} of floor space and be allowed at least one hour of outdoor exercise per day.",
                             space=c.qty(f"{c.rng.choice(('2.5', 'four', '3.5'))} square metres"))],
    )


def story_surveillance(c: Ctx) -> Story:
    company, partner = c.company(), c.person()
    w1, w2 = c.person(), c.person()
    months = c.qty(count_of(c.rng.randint(2, 9), "month"))
    offence = c.misc(c.pick(OFFENCES))
    facts = c.maybe_heading(0.5, ("A. Interception of the applicant's communications", "SEARCH AND SURVEILLANCE"))
    facts.append(c.para((
        "On {d} a judge of {court1} authorised the interception of the applicant's mobile telephone (no. {phone}) for {months}, in connection with an investigation into {offence} at {company}, where the applicant worked as {a_job} {job}.",
        "By a decision of {d}, which was not served on {him}, {title} {app_sur}'s telephone line {phone} was placed under surveillance for {months}. The police suspected {offence} within {company}.",
    ), d=c.date(), phone=c.phone(),
        months=months, offence=offence, company=company))
    facts.append(c.para((
        "On {d} officers of {police} searched the applicant's home and {his} car, a {car} with registration number {plate}. They seized {items}.",
        "A search of the applicant's flat and of {his} {car} (registration number {plate}) took place on {d}. The police took away {items}.",
    ), d=c.date(30, 200), car=c.misc(c.pick(("red Škoda Octavia", "grey Opel Astra", "black Audi A4", "white Fiat Doblò"))),
        plate=c.plate(),
        items=c.misc(c.pick(("two laptops, a notebook and bank statements", "all the family's computers and mobile phones",
                             "accounting records and a hunting rifle")))))
    facts.append(c.para((
        "The search was carried out in the presence of two attesting witnesses, {w1} and {w2}, who were neighbours of the applicant. {His} lawyer was not allowed to enter.",
        "According to the search record, signed by the witnesses {w1} and {w2}, the applicant refused to open the safe, which was forced open.",
    ), w1=c.name(w1), w2=c.name(w2)))
    facts += c.maybe_heading(0.3, ("B. Subsequent events",))
    facts.append(c.para((
        "On {d} transcripts of the applicant's conversations with {his} partner, {partner}, were published in a local newspaper.",
        "Extracts from intercepted conversations between the applicant and {partner} appeared on a news website on {d}.",
    ), d=c.date(20, 200), partner=c.name(partner)))
    facts.append(c.para((
        "The applicant challenged the search warrant before {court2}, which on {d} held that the lawfulness of the search could be examined only at trial.",
        "{His} complaint about the surveillance was declared inadmissible by {court2} on {d}, on the ground that {he} was not a party to the criminal proceedings.",
    ), ("The investigation against the applicant was discontinued on {d2}, no evidence of any offence having been found.",
        "The criminal case was closed on {d2}."),
        d=c.date(60, 300), d2=c.date(60, 400)))
    return Story(
        articles=[8, 13],
        allegation="that the interception of {his} telephone conversations and the search of {his} home had violated {his} right to respect for {his} private life",
        facts=facts,
        complaints=[c.para((
            "The applicant complained under Article 8 of the Convention that the surveillance of {his} telephone and the search of {his} home had been unlawful and disproportionate.",
            "Relying on Articles 8 and 13, the applicant complained that {he} had no remedy against the interception of {his} communications.",
        ))],
        merits=[c.para("The Court notes that the interception lasted {months} and was authorised without any review of its necessity. The law did not indicate with sufficient clarity the scope of the authorities' discretion.",
                       months=months)],
        domestic_law=[c.para("The Operational and Search Activities Act allows the interception of telephone communications on the basis of a judicial decision for a period of up to six months, which may be extended. The person concerned is not informed of the measure.")],
    )


STORYLINES: tuple[Callable[[Ctx], Story], ...] = (
    story_detention, story_ill_treatment, story_medical, story_length_civil, story_expropriation,
    story_custody, story_expression, story_non_enforcement, story_death, story_assembly,
    story_prison_conditions, story_surveillance,
)


# ---------------------------------------------------------------------------
# TAB: shared sections and document assembly
# ---------------------------------------------------------------------------

ORIGIN = (
    "The case originated in an application (no. {appno}) against {the_}{state} lodged with the Court under Article 34 of the Convention for the Protection of Human Rights and Fundamental Freedoms (“the Convention”) by {a_nat} {nat} national, {title} {applicant} (“the applicant”), on {lodged}.",
    "The case originated in application no. {appno} lodged on {lodged} by {title} {applicant}, {a_nat} {nat} national (“the applicant”), against {the_}{state} under Article 34 of the Convention for the Protection of Human Rights and Fundamental Freedoms (“the Convention”).",
    "On {lodged} {title} {applicant}, who holds {nat} nationality (“the applicant”), lodged an application (no. {appno}) with the Court against {the_}{state} under Article 34 of the Convention for the Protection of Human Rights and Fundamental Freedoms (“the Convention”).",
    "Application no. {appno}, directed against {the_}{state}, was introduced on {lodged} by {title} {applicant} (“the applicant”), {a_nat} {nat} citizen, relying on Article 34 of the Convention.",
)
REPRESENTATION = (
    "The applicant was represented by {l_title} {lawyer}, a lawyer practising in {lawyer_city}.",
    "{title} {app_sur} was represented before the Court by {l_title} {lawyer} of the {lawyer_city} Bar.",
    "The applicant, who had been granted legal aid, was represented by {l_title} {lawyer}, a lawyer practising in {lawyer_city}.",
    "The applicant was represented by {l_title} {lawyer} and by lawyers of the {ngo}, a non-governmental organisation based in {lawyer_city}.",
    "Having initially presented {his} own case, the applicant was later represented by {l_title} {lawyer_full}, a lawyer with offices in {lawyer_city}.",
    "Legal representation: {l_title} {lawyer_full}, advocate, {lawyer_city}. Leave to use the applicant's own language in the written procedure was granted.",
)
GOVERNMENT = (
    "The {gov_adj} Government (“the Government”) were represented by their Agent, {a_title} {agent}, of the {ministry}.",
    "The {gov_adj} Government (“the Government”) did not designate an Agent for the purposes of the proceedings before the Court.",
    "The Government were represented by {a_title} {agent}, their Agent, of the {ministry}.",
    "The respondent Government (“the Government”) were represented by their Agent, {a_title} {agent}.",
    "{a_title} {agent}, of the {ministry}, acted as Agent for the respondent State throughout.",
)
ALLEGATION = (
    "The applicant alleged, in particular, {allegation}.",
    "Relying on Article {art} of the Convention, the applicant complained {allegation}.",
    "In {his} application {title} {app_sur} argued {allegation}.",
    "The main grievance was {allegation}.",
)
NOTICE = (
    "On {notice} the application was communicated to the Government.",
    "On {notice} the {section} Section of the Court decided to give notice of the application to the Government. It also decided to rule on the admissibility and merits of the application at the same time (Article 29 § 1).",
    "On {notice} the President of the {section} Section decided to give notice of the application to the Government. The applicant and the Government each filed written observations.",
    "Notice of the application was given to the respondent Government on {notice}; a friendly settlement could not be reached.",
)
CIRCUMSTANCES = ("THE CIRCUMSTANCES OF THE CASE", "I. THE CIRCUMSTANCES OF THE CASE", "A. The circumstances of the case")
BACKGROUND = (
    "The applicant was born in {birth} and lives in {home}.",
    "{title} {app_sur} was born in {birth}. {He} lives in {home}, where {he} works as {a_job} {job}.",
    "The applicant was born in {birth} and lived in {home} at the material time. {He} is {a_job} {job} by profession.",
    "Born in {birth}, {title} {applicant} has lived in {home} for most of {his} life.",
    "The applicant, {title} {applicant}, is {a_job} {job}. {He} was born in {birth} and lives in {home}.",
    "{title} {applicant} ({birth}) has a permanent address in {home}; {he} has no previous convictions.",
    "Details of the applicant: born {birth}, resident in {home}, married with two children, occupation {job}.",
)
DECISION_INTRO = (
    "The applicant, {title} {applicant}, is {a_nat} {nat} national who was born in {birth} and lives in {home}. {He} was represented before the Court by {l_title} {lawyer}, a lawyer practising in {lawyer_city}.",
    "The applicant, {title} {applicant}, is {a_nat} {nat} national, born in {birth}. {He} is {a_job} {job} and lives in {home}. {He} was represented by {l_title} {lawyer}, of the {lawyer_city} Bar.",
    "The applicant in application no. {appno}, {title} {applicant}, is {a_nat} {nat} national who was born in {birth} and lives in {home}. {He} was represented before the Court by {l_title} {lawyer_full}, a lawyer practising in {lawyer_city}.",
    "{title} {applicant} was born in {birth}, holds {nat} citizenship and resides in {home}. {l_title} {lawyer_full}, whose office is in {lawyer_city}, acted on {his} behalf.",
)
AFTERMATH = (  # optional closing paragraph of the facts, any storyline
    "On {d} {l_title} {lawyer} lodged a constitutional complaint on the applicant's behalf. It was declared inadmissible on {d2} as falling outside the scope of that court's review.",
    "On {d} the applicant wrote to the Ministry of Justice, asking for compensation for the events described above. {He} received no reply, and a reminder sent on {d2} went unanswered.",
    "In {d} the applicant moved to {city3}. {He} submitted that the events had harmed {his} reputation in {home} and that {he} had been unable to find work there.",
    "The applicant's complaint to the Ombudsman, lodged on {d}, was forwarded to the authorities concerned. On {d2} the Ombudsman informed {him} that no irregularities had been found.",
)
BACKGROUND_EXTRA = (
    "", "{He} has no criminal record.", "{He} is married and has {children}.",
    "Before the events described below {he} had never been involved in court proceedings.",
)
SUMMARY = (
    "The facts of the case, as submitted by the parties, may be summarised as follows.",
    "The facts of the case, as submitted by the applicant, may be summarised as follows.",
)
DOMESTIC_LAW_HEADINGS = ("RELEVANT DOMESTIC LAW", "II. RELEVANT DOMESTIC LAW", "B. Relevant domestic law and practice",
                         "RELEVANT DOMESTIC LAW AND PRACTICE")
LAW_RESTATEMENT = (
    "The applicant complained {allegation}.",
    "The applicant alleged {allegation}. {He} relied on Article {art} of the Convention.",
)
GOVERNMENT_POSITION = (
    "The Government contested that argument. They submitted that the domestic authorities had acted lawfully and with due diligence.",
    "The Government argued that the applicant had failed to exhaust domestic remedies, as {he} had not brought a compensation claim under the relevant legislation.",
    "The Government did not submit any observations on the merits of this complaint.",
    "In the Government's view, the complaint was manifestly ill-founded, since the authorities had responded promptly to each of the applicant's requests.",
    "According to the respondent State, {title} {app_sur} had not raised the complaint, even in substance, before the domestic courts.",
    "The Government relied on the wide margin of appreciation enjoyed by the national authorities in this area.",
)
ADMISSIBILITY = (
    "The Court notes that this complaint is not manifestly ill-founded within the meaning of Article 35 § 3 (a) of the Convention. It must therefore be declared admissible.",
    "The Court considers that the complaint raises complex issues of fact and law which require an examination of the merits.",
    "No ground for declaring it inadmissible has been established.",
    "Admissibility: the objection of non-exhaustion is joined to the merits, the remedy relied upon being closely linked to the substance of the grievance.",
)
DECISION_OUTCOME = (
    "The Court considers that it cannot, on the basis of the case file, determine the admissibility of this complaint and that it is therefore necessary, in accordance with Rule 54 § 2 (b) of the Rules of Court, to give notice of it to the respondent Government.",
    "In the light of all the material in its possession, the Court finds that this part of the application is manifestly ill-founded and must be rejected in accordance with Article 35 §§ 3 (a) and 4 of the Convention.",
    "The Court notes that the applicant did not appeal against the final decision of {top} within the time-limit. It follows that this complaint must be rejected for non-exhaustion of domestic remedies.",
    "Since the final domestic decision was served more than six months before the application was lodged, the complaint is out of time and must be rejected under Article 35 §§ 1 and 4.",
    "For these reasons, the Court unanimously adjourns the examination of the complaint and declares the remainder of the application inadmissible.",
)
COSTS = (
    "The applicant also claimed {costs} for the costs and expenses incurred before the domestic courts and before the Court. Regard being had to the documents in its possession, the Court considers it reasonable to award {award} under this head.",
    "As to costs and expenses, {l_title} {lawyer} submitted an itemised bill for {costs}, of which the Court awards {award}.",
)
DAMAGES = (
    "The applicant claimed {claim} in respect of non-pecuniary damage. The Government considered the claim excessive. Ruling on an equitable basis, the Court awards the applicant {award}.",
    "The applicant sought {claim} in respect of pecuniary and non-pecuniary damage and did not claim costs and expenses. The Court awards {him} {award} in respect of non-pecuniary damage.",
    "Under the head of just satisfaction {title} {app_sur} asked for {claim}; {he} is awarded {award}, plus any tax that may be chargeable, and default interest at the marginal lending rate of the European Central Bank plus three percentage points.",
)


def build_tab_text(c: Ctx, story: Story, judgment: bool) -> Para:
    """Assemble a judgment or an admissibility decision.

    The storyline's facts were rendered first, so the events after them
    (aftermath, lodging of the application, notice) take later dates.
    """
    if story.job:
        c.slots["job"], c.slots["a_job"] = Ent(story.job, "DEM", "QUASI"), indefinite(story.job)
    aftermath = [c.para(AFTERMATH, d=c.date(20, 200), d2=c.date(30, 200))] if c.chance(0.6) else []
    lodged = c.tl.next(30, 300)
    c.slots.update(
        lodged=c.date_ent(lodged), allegation=story.allegation.format(**PRONOUNS[c.applicant.female]),
        appno=Ent(f"{c.rng.randint(1000, 59999)}/{lodged.year % 100:02d}", "CODE", "DIRECT"),
        art=story.articles[0], ngo=Ent(c.pick(NGOS), "ORG", "QUASI"),
        children=count_of(c.rng.randint(1, 4), "child").replace("childs", "children"),
    )
    paras: list[Para] = []
    if judgment:
        paras += [c.heading("PROCEDURE"), c.para(ORIGIN), c.para(REPRESENTATION), c.para(GOVERNMENT)]
        if c.chance(0.7):
            paras.append(c.para(ALLEGATION))
        if c.chance(0.6):
            paras.append(c.para(NOTICE, notice=c.date(100, 900), section=c.pick(SECTIONS)))
        paras.append(c.heading("THE FACTS"))
        paras += c.maybe_heading(0.7, CIRCUMSTANCES)
        paras.append(c.para(BACKGROUND, BACKGROUND_EXTRA))
    else:
        paras += [c.heading("THE FACTS"), c.para(DECISION_INTRO), c.para(GOVERNMENT),
                  c.heading(("A. The circumstances of the case", "The circumstances of the case")), c.para(SUMMARY)]
    paras += story.facts + aftermath
    if c.chance(0.45):
        paras += [c.heading(DOMESTIC_LAW_HEADINGS)] + story.domestic_law
    has_complaints_section = not judgment or c.chance(0.25)
    if has_complaints_section:
        paras += [c.heading("COMPLAINTS")] + story.complaints
    paras.append(c.heading("THE LAW"))
    if not judgment:
        return join_paras(paras + [c.para(DECISION_OUTCOME)])
    if c.chance(0.6):
        paras.append(c.heading(f"I. ALLEGED VIOLATION OF ARTICLE {story.articles[0]} OF THE CONVENTION"))
    complaint = [c.para(LAW_RESTATEMENT)] if has_complaints_section else story.complaints
    paras += complaint + [c.para(GOVERNMENT_POSITION), c.para(ADMISSIBILITY)] + story.merits
    if c.chance(0.5):
        claim = c.rng.randint(5, 90) * 1000
        paras += [c.heading(("APPLICATION OF ARTICLE 41 OF THE CONVENTION", "II. APPLICATION OF ARTICLE 41 OF THE CONVENTION")),
                  c.para(DAMAGES, claim=c.qty(f"EUR {claim:,}"), award=c.qty(f"EUR {claim // c.rng.randint(2, 6):,}"))]
        if c.chance(0.5):
            costs = c.rng.randint(15, 120) * 100
            paras.append(c.para(COSTS, costs=c.qty(f"EUR {costs:,}"), award=c.qty(f"EUR {costs // 2:,}")))
    return join_paras(paras)


# ---------------------------------------------------------------------------
# TAB: annotations
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    etype: str
    ident: str
    conf: str
    key: str
    related: str | None
    edit_type: str


def gold_mentions(doc: Para, rng: random.Random) -> list[Mention]:
    """The reference annotation: every rendered entity span, in text order."""
    return [Mention(s, e, ent.etype, ent.ident, ent.conf, ent.key, ent.related,
                    rng.choices(("check", "insert", "correct"), (0.8, 0.14, 0.06))[0])
            for s, e, ent in sorted(doc.spans, key=lambda x: (x[0], x[1]))]


def disagreeing_copy(mentions: list[Mention], rng: random.Random) -> list[Mention]:
    """A second annotator: mostly agrees, but misses a mention or masks differently."""
    out = list(mentions)
    if rng.random() < 0.7:
        candidates = [i for i, m in enumerate(out) if m.ident != "DIRECT"]
        out.pop(rng.choice(candidates))
    dems = [i for i, m in enumerate(out) if m.etype == "DEM" and m.ident == "QUASI"]
    if dems and rng.random() < 0.7:
        i = rng.choice(dems)
        out[i] = replace(out[i], ident="NO_MASK", edit_type="correct")
    orgs = [i for i, m in enumerate(out) if m.etype == "ORG" and m.ident == "NO_MASK"]
    if orgs and rng.random() < 0.4:
        i = rng.choice(orgs)
        out[i] = replace(out[i], ident="QUASI")
    return out


def annotation_json(doc_id: str, text: str, ann_no: int, mentions: list[Mention], rng: random.Random) -> dict:
    prefix = f"{doc_id}_a{ann_no}"
    entity_ids: dict[str, str] = {}
    mention_ids_by_key: dict[str, list[str]] = {}
    records = []
    for i, m in enumerate(mentions, 1):
        entity_id = entity_ids.setdefault(m.key, f"{prefix}_e{len(entity_ids) + 1}")
        mention_id = f"{prefix}_em{i}"
        mention_ids_by_key.setdefault(m.key, []).append(mention_id)
        records.append({
            "entity_type": m.etype, "entity_mention_id": mention_id,
            "start_offset": m.start, "end_offset": m.end, "span_text": text[m.start:m.end],
            "edit_type": m.edit_type, "identifier_type": m.ident, "entity_id": entity_id,
            "confidential_status": m.conf,
        })
    for record, m in zip(records, mentions):
        targets = mention_ids_by_key.get(m.related or "", [])
        if targets and rng.random() < 0.8:
            record["related_mentions"] = targets[:1]
    return {"entity_mentions": records}


def validate_tab_text(doc: Para) -> bool:
    paragraphs = doc.text.split("\n\n")
    if len(paragraphs) < MIN_PARAGRAPHS or not TAB_CHAR_RANGE[0] <= len(doc.text) <= TAB_CHAR_RANGE[1]:
        return False
    starts = [0]
    for p in paragraphs[:-1]:
        starts.append(starts[-1] + len(p) + 2)
    direct_paras = {sum(1 for st in starts if st <= s) - 1 for s, _, ent in doc.spans if ent.ident == "DIRECT"}
    return bool(direct_paras & set(range(1, 6))) and bool(direct_paras & set(range(6, 12)))


def make_tab_document(rng: random.Random, doc_id: str, split: str, story_fn, state: State, checked: bool) -> dict:
    """Draw documents for one (storyline, state) slot until one satisfies the corpus constraints."""
    while True:
        seed = rng.randrange(2**31)
        c = Ctx(random.Random(seed), state, seed)
        story = story_fn(c)
        judgment = c.chance(0.65)
        text = build_tab_text(c, story, judgment)
        if validate_tab_text(text):
            break
    year = min(c.tl.current.year + c.rng.randint(1, 4), 2016)
    branch = c.rng.choices(("CHAMBER", "COMMITTEE", "GRANDCHAMBER"), (0.65, 0.3, 0.05))[0]
    gold = gold_mentions(text, c.rng)
    if split == "train":
        annotators = [c.rng.randint(1, 8)]
        versions = [gold]
    else:
        annotators = sorted(c.rng.sample(range(1, 13), c.rng.choice((2, 2, 3))))
        versions = [gold] + [disagreeing_copy(gold, c.rng) for _ in annotators[1:]]
        c.rng.shuffle(versions)
    return {
        "doc_id": doc_id,
        "dataset_type": split,
        "text": text.text,
        "meta": {"year": year, "legal_branch": branch, "articles": story.articles,
                 "countries": state.code, "applicant": c.applicant.full},
        "task": f"Task: Annotate the document to anonymise the following person: {c.applicant.full}",
        "quality_checked": [f"annotator{c.rng.choice(annotators)}"] if checked else [],
        "annotations": {f"annotator{n}": annotation_json(doc_id, text.text, n, m, c.rng)
                        for n, m in zip(annotators, versions)},
    }


def make_tab_corpus(rng: random.Random) -> dict[str, list[dict]]:
    total = sum(N_TAB_DOCS.values())
    doc_numbers = sorted(rng.sample(range(90001, 99999), total))
    slots = [(STORYLINES[i % len(STORYLINES)], STATES[(i * 7 + i // len(STATES)) % len(STATES)]) for i in range(total)]
    rng.shuffle(slots)
    corpus, i = {}, 0
    for split, n in N_TAB_DOCS.items():
        corpus[split] = []
        for k in range(n):
            story_fn, state = slots[i]
            # train: a third quality-checked; dev/test: all but every fourth document
            checked = k % 3 == 0 if split == "train" else k % 4 != 3
            corpus[split].append(make_tab_document(rng, f"001-{doc_numbers[i]}", split, story_fn, state, checked))
            i += 1
    return corpus


def write_tab_corpus(corpus: dict[str, list[dict]], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for split, docs in corpus.items():
        with open(out_dir / f"echr_{split}.json", "w", encoding="utf-8", newline="\n") as fh:
            json.dump(docs, fh, ensure_ascii=False, indent=2)
            fh.write("\n")


# ---------------------------------------------------------------------------
# MIMIC-III: de-identification placeholders
# ---------------------------------------------------------------------------

class Phi:
    """``[** ... **]`` placeholders of one note; the same key gets the same number."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self._numbers: dict[str, int] = {}

    def tag(self, label: str, key: str | None = None, hi: int = 99999, blank: float = 0.0) -> str:
        if self.rng.random() < blank:
            return f"[**{label} **]"
        key = key or f"{label}#{len(self._numbers)}"
        number = self._numbers.setdefault(key, self.rng.randint(1, hi))
        return f"[**{label} {number}**]"

    @staticmethod
    def date(d: date) -> str:
        return f"[**{d.year}-{d.month}-{d.day}**]"

    @staticmethod
    def month_day(d: date) -> str:
        return f"[**{d.month}-{d.day}**]"

    @staticmethod
    def year(y: int) -> str:
        return f"[**{y}**]"

    def doctor(self) -> str:
        return self.rng.choice((
            f"Dr. {self.tag('Last Name (STitle)', blank=0.3)}",
            f"Dr. {self.tag('First Name8 (NamePattern2)', blank=0.3)} {self.tag('Last Name (NamePattern1)')}",
            f"Dr. {self.tag('Doctor Last Name', blank=0.5)}",
            f"Dr. {self.tag('Doctor First Name', blank=0.5)} {self.tag('Last Name (un)', hi=9999)}",
        ))

    def relative(self) -> str:
        return self.rng.choice((self.tag("Name (NI)", blank=0.6), self.tag("First Name (Titles)", hi=9999),
                                self.tag("Known firstname", hi=9999)))


# ---------------------------------------------------------------------------
# MIMIC-III: clinical storylines (all invented)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Condition:
    key: str
    service: str
    complaints: tuple[str, ...]
    procedures: tuple[str, ...]
    hpi: tuple[str, ...]
    exam: tuple[str, ...]             # abnormal exam lines
    labs: dict                          # lab -> (lo, hi) overrides
    extra_labs: tuple[str, ...]         # lab names shown in addition to CBC/chem
    studies: tuple[str, ...]            # imaging / study paragraphs
    course: tuple[tuple[str, ...], ...]  # problem paragraphs, each with alternatives
    diagnoses: tuple[str, ...]
    meds: tuple[str, ...]
    radiology: tuple[str, ...]          # keys of RADIOLOGY_EXAMS suitable for this condition
    instructions: str


CONDITIONS = (
    Condition(
        "pneumonia", "MEDICINE", ("shortness of breath, fever", "productive cough", "fevers and hypoxia"), ("none", "None"),
        ("{pt} is a {age} year old {man} with {pmh_short} who presents with {n} days of productive cough, fevers to 102 and worsening dyspnea. {He} was seen by {his} PCP {pcp} on {d_m2} and started on azithromycin without improvement. In the ED at {hosp1} initial vitals were T 101.8 HR 112 BP 118/64 RR 26 O2 sat 86% on RA. CXR showed a {side} lower lobe consolidation. {He} received ceftriaxone, azithromycin and 2L NS.",
         "{age} yo {sex} with {pmh_short} transferred from {outside} with fever and hypoxia. Per report {he} had been feeling unwell since {md_m4} with rigors and pleuritic chest pain. At the OSH {he} was found to have a WBC of 18 and a {side} sided infiltrate and was given vancomycin and levofloxacin. On arrival to the {unit} {he} was on 4L NC, speaking in full sentences."),
        ("Lungs: bronchial breath sounds and crackles at the {side} base, egophony present", "Gen: ill-appearing, mildly tachypneic"),
        {"WBC": (13.5, 22.0), "Lactate": (1.8, 3.9)}, ("Lactate",),
        ("CXR {d0}: {Side} lower lobe consolidation with a small parapneumonic effusion. No pneumothorax.",
         "CXR {d3}: Interval improvement of the {side} basilar opacity."),
        (("# Community acquired pneumonia: {He} was treated with ceftriaxone and azithromycin with rapid defervescence. Blood cultures from {d0} remained negative; sputum grew normal flora. Urine legionella antigen was negative. {He} was transitioned to oral levofloxacin on {d3} to complete a {course_days} day course.",
          "# Pneumonia: Started on vancomycin and cefepime given recent hospitalization at {outside}; narrowed to levofloxacin once MRSA swab returned negative. Fever curve trended down by hospital day 2."),
         ("# Hypoxia: Attributed to pneumonia. Oxygen was weaned from 4L to room air by {d4}, with ambulatory saturations of 93%.",
          "# Hypoxemia: Required up to 6L NC on admission. Nebulizers and incentive spirometry were continued and {he} was on room air at discharge.")),
        ("Community acquired pneumonia", "Lobar pneumonia", "Healthcare associated pneumonia"),
        ("Levofloxacin 750 mg Tablet Sig: One (1) Tablet PO Q24H (every 24 hours) for 4 days.",
         "Guaifenesin 100 mg/5 mL Syrup Sig: Five (5) ML PO Q6H (every 6 hours) as needed for cough."),
        ("cxr_portable", "cxr_pa_lat"),
        "You were admitted with a pneumonia. You were treated with antibiotics and your breathing improved. Please complete the course of levofloxacin.",
    ),
    Condition(
        "chf", "MEDICINE", ("dyspnea on exertion, leg swelling", "shortness of breath", "orthopnea"), ("none", "Transthoracic echocardiogram"),
        ("{pt} is a {age} year old {man} with ischemic cardiomyopathy (EF {ef}%), {pmh_short}, who presents with {n} days of progressive dyspnea, three pillow orthopnea and a {kg} kg weight gain. {He} admits to dietary indiscretion after a family gathering on {md_m3}. {He} denies chest pain. In the ED BNP was {bnp} and CXR showed pulmonary edema; {he} was given furosemide 80 mg IV with 1.2 L of urine output.",
         "{age} yo {sex} with systolic CHF (EF {ef}% on echo from {y_prev}) and {pmh_short} sent in from {his} cardiologist's office ({pcp}) for worsening edema and dyspnea. {He} ran out of {his} torsemide about a week ago. On arrival O2 sat 89% on RA, JVP to the angle of the jaw, 3+ pitting edema to the knees."),
        ("Neck: JVP elevated to 12 cm", "Ext: 2+ pitting edema bilaterally to mid shin", "Lungs: bibasilar crackles a third of the way up"),
        {"proBNP": (4500, 21000), "Creat": (1.3, 2.1)}, ("proBNP", "cTropnT"),
        ("CXR {d0}: Cardiomegaly with moderate pulmonary edema and small bilateral effusions.",
         "TTE {d1}: Severe global left ventricular hypokinesis, LVEF {ef}%. Moderate (2+) mitral regurgitation. Mild pulmonary hypertension."),
        (("# Acute on chronic systolic heart failure: Diuresed with IV furosemide boluses and later a drip, with net negative {liters} L over the admission. Discharge weight {dry_wt} kg. Transitioned to oral torsemide on {d4}. Lisinopril was held for a bump in creatinine and restarted at a lower dose.",
          "# CHF exacerbation: Precipitated by medication non-adherence and a high salt diet. {He} diuresed well to IV furosemide. Beta-blocker was continued. Seen by the heart failure nurse for education on daily weights and a 2 g sodium diet."),
         ("# Acute kidney injury: Creatinine peaked at 2.0 from a baseline of 1.2, likely cardiorenal. Improved with diuresis.",
          "# Coronary artery disease: No evidence of active ischemia; troponin flat. Continued aspirin and statin.")),
        ("Acute on chronic systolic congestive heart failure", "Congestive heart failure exacerbation"),
        ("Torsemide 20 mg Tablet Sig: Two (2) Tablet PO once a day.",
         "Carvedilol 6.25 mg Tablet Sig: One (1) Tablet PO BID (2 times a day)."),
        ("cxr_portable", "cxr_pa_lat"),
        "You were admitted because of fluid overload from heart failure. Weigh yourself every morning and call your doctor if your weight goes up more than 3 lbs. Limit salt to 2 grams a day.",
    ),
    Condition(
        "gi_bleed", "MEDICINE", ("melena", "coffee ground emesis", "black stools and lightheadedness"),
        ("EGD with clipping of duodenal ulcer", "Upper endoscopy, transfusion of 3 units packed red blood cells"),
        ("{pt} is a {age} year old {man} with {pmh_short} on aspirin and ibuprofen for back pain who presents with {n} days of black tarry stools and one episode of coffee ground emesis this morning. {He} felt lightheaded when standing at home in {loc}. In the ED Hct was {hct} (baseline 38), BP 94/52, HR 118. NG lavage was positive. {He} was started on a pantoprazole drip, transfused 2 units PRBC and admitted to the {unit}.",
         "{age} yo {sex} with cirrhosis (hep C), {pmh_short}, brought in by ambulance from {outside} after a witnessed episode of hematemesis. Last EGD in {y_prev} showed grade II varices. In the field BP 80s systolic. Received octreotide, ceftriaxone and 2 units of blood prior to transfer."),
        ("Abd: soft, mild epigastric tenderness, no rebound", "Rectal: black guaiac positive stool in vault", "Gen: pale, diaphoretic"),
        {"Hgb": (6.4, 8.6), "Hct": (19.5, 26.0), "UreaN": (38, 72)}, ("INR(PT)",),
        ("EGD {d1}: 1.5 cm clean-based ulcer in the duodenal bulb with a visible vessel, treated with epinephrine injection and two endoclips. Biopsies taken for H. pylori.",),
        (("# Upper GI bleed: Due to duodenal ulcer, treated endoscopically on {d1}. Hematocrit stabilized after {units} units of PRBC. H. pylori serology was positive and {he} was started on triple therapy. NSAIDs were stopped and {he} was counseled to avoid them.",
          "# GI bleed: Taken for urgent EGD by Dr. {gi_doc} on {d1}. Received {units} units of blood in total. Hct remained stable for 48 hours on twice daily PPI. Aspirin was held and can be restarted in 2 weeks per GI."),
         ("# Hypotension: Resolved with volume resuscitation and transfusion. Home antihypertensives were held and restarted at discharge.",
          "# Acute blood loss anemia: Iron studies were consistent with iron deficiency; started on oral iron.")),
        ("Upper gastrointestinal bleed", "Duodenal ulcer", "Acute blood loss anemia"),
        ("Pantoprazole 40 mg Tablet, Delayed Release (E.C.) Sig: One (1) Tablet PO Q12H (every 12 hours).",
         "Ferrous Sulfate 325 mg Tablet Sig: One (1) Tablet PO DAILY (Daily)."),
        ("cxr_portable", "ct_abdomen"),
        "You were admitted with bleeding from an ulcer in your stomach. Do not take aspirin, ibuprofen, naproxen or other NSAIDs. Return if you have black stools or vomit blood.",
    ),
    Condition(
        "urosepsis", "MEDICINE", ("fever, confusion", "altered mental status", "hypotension"), ("Right internal jugular central line placement", "none"),
        ("{pt} is a {age} year old {man} with {pmh_short} and a chronic indwelling foley who was found confused at {his} nursing home ({facility}) with a temperature of 103. {He} had foul smelling urine for {n} days. In the ED BP was 78/40 despite 3L IVF, lactate {lactate}. {He} was started on levophed through a right IJ line, given vancomycin and cefepime and admitted to the {unit}.",
         "{age} yo {sex} with {pmh_short} who was brought in by {his} daughter {relative} after two days of fevers, rigors and dysuria. {He} became increasingly somnolent today. In the ED T 102.6, HR 124, BP 86/50. UA was grossly positive. {He} responded to 4L IVF without pressors."),
        ("Neuro: oriented to self only, moving all extremities", "GU: foley in place draining cloudy urine", "Back: mild right CVA tenderness"),
        {"WBC": (15.0, 27.0), "Lactate": (2.5, 5.2), "Creat": (1.4, 2.6)}, ("Lactate",),
        ("CT abdomen/pelvis {d0}: Right-sided hydronephrosis with perinephric stranding, no obstructing stone. Foley catheter in the bladder.",
         "Renal ultrasound {d1}: No hydronephrosis. Simple cyst in the left kidney."),
        (("# Septic shock secondary to urinary tract infection: Required norepinephrine for 36 hours. Urine and blood cultures grew E. coli sensitive to ceftriaxone. Antibiotics were narrowed on {d2}; {he} will complete a 14 day course. The foley was exchanged.",
          "# Urosepsis: Blood pressure responded to fluid resuscitation. Urine culture grew Klebsiella pneumoniae resistant to ciprofloxacin; treated with ceftriaxone and transitioned to oral cefpodoxime."),
         ("# Toxic metabolic encephalopathy: Mental status returned to baseline by {d3} with treatment of the infection. Sedating medications were minimized.",
          "# Acute kidney injury: Creatinine peaked at 2.4 and returned to baseline with fluids. Metformin was held.")),
        ("Septic shock", "Urinary tract infection", "Acute kidney injury"),
        ("Cefpodoxime 200 mg Tablet Sig: One (1) Tablet PO Q12H (every 12 hours) for 9 days.",),
        ("cxr_portable", "ct_abdomen", "renal_us"),
        "You were admitted with a severe infection of the urinary tract that spread to the blood. Please finish all of the antibiotics.",
    ),
    Condition(
        "stroke", "NEUROLOGY", ("right sided weakness, aphasia", "left facial droop", "sudden onset difficulty speaking"), ("IV tPA", "none"),
        ("{pt} is a {age} year old right handed {man} with {pmh_short} who was last seen well at 7:30 am on {d0} by {his} wife {relative}, when {he} was noted to have slurred speech and could not lift {his} right arm. EMS was called and {he} arrived at {hosp1} as a code stroke. NIHSS was {nihss}. CT showed no hemorrhage and {he} received IV tPA at 9:05 am.",
         "{age} yo {sex} with atrial fibrillation off anticoagulation because of falls, {pmh_short}, transferred from {outside} with left sided weakness and neglect that began at lunch time. Outside CTA showed a right M2 cut-off. {He} was outside the window for tPA."),
        ("Neuro: expressive aphasia, right facial droop, right arm 2/5, right leg 4/5", "Neuro: left hemineglect, left pronator drift, sensation decreased on the left"),
        {"Glucose": (110, 190), "%HbA1c": (6.1, 8.4)}, ("%HbA1c", "Triglyc"),
        ("MRI head {d1}: Acute infarct in the left MCA territory involving the frontal operculum and insula. No hemorrhagic transformation.",
         "CTA head and neck {d0}: Occlusion of a distal branch of the MCA. Mild atherosclerotic disease at the carotid bifurcations without significant stenosis."),
        (("# Acute ischemic stroke: Likely cardioembolic given atrial fibrillation on telemetry. Monitored in the {unit} for 24 hours post tPA with q1h neuro checks. Speech improved steadily. Started on apixaban on {d3} after repeat imaging showed no hemorrhage. Atorvastatin was increased to 80 mg.",
          "# Stroke: Etiology felt to be small vessel disease. Aspirin and high dose statin were started. Seen by PT, OT and speech therapy; passed a bedside swallow evaluation on {d2} and was advanced to a regular diet."),
         ("# Hypertension: Permissive hypertension for the first 48 hours, then home medications restarted.",
          "# Dysphagia: Initially NPO; modified barium swallow on {d2} showed mild oropharyngeal dysphagia. Discharged on a soft diet with thin liquids.")),
        ("Acute ischemic stroke, left MCA territory", "Cardioembolic stroke", "Atrial fibrillation"),
        ("Atorvastatin 80 mg Tablet Sig: One (1) Tablet PO DAILY (Daily).", "Apixaban 5 mg Tablet Sig: One (1) Tablet PO BID (2 times a day)."),
        ("ct_head", "mr_head"),
        "You were admitted with a stroke that caused weakness and trouble speaking. Call 911 right away for any new weakness, numbness, vision or speech problems.",
    ),
    Condition(
        "copd", "MEDICINE", ("shortness of breath, wheezing", "dyspnea", "increased sputum production"), ("none", "None"),
        ("{pt} is a {age} year old {man} with severe COPD (FEV1 {fev1}% predicted, home O2 2L), {pmh_short}, who presents with {n} days of worsening dyspnea, wheezing and a change in sputum color to green. {He} had a similar admission to {outside} in {y_prev}. In the ED {he} was tachypneic to the 30s with a pCO2 of 58 and was placed on BiPAP, given nebulizers, methylprednisolone 125 mg IV and azithromycin.",
         "{age} yo {sex} with COPD, still smoking one pack per day, and {pmh_short}, who called EMS for breathlessness after a cold that started on {md_m4}. Unable to complete sentences on arrival. Improved with continuous albuterol nebulizers and steroids."),
        ("Lungs: diffuse expiratory wheezes, prolonged expiratory phase, poor air movement", "Gen: using accessory muscles, speaking in 3-4 word sentences"),
        {"WBC": (10.5, 16.0), "pCO2": (48, 66)}, ("pCO2",),
        ("CXR {d0}: Hyperinflated lungs with flattened diaphragms. No focal consolidation.",),
        (("# COPD exacerbation: Treated with BiPAP overnight, then nasal cannula. Received prednisone 40 mg daily for 5 days, azithromycin and standing ipratropium-albuterol nebulizers. At discharge {he} was at {his} baseline of 2L O2 with saturations of 92%.",
          "# Acute on chronic hypercarbic respiratory failure: Required BiPAP in the {unit} for 18 hours. Steroids tapered. Seen by pulmonary rehab; {he} declined a referral to a smoking cessation program but accepted a nicotine patch."),
         ("# Hyperglycemia: Steroid induced; covered with a humalog sliding scale.",
          "# Tobacco abuse: Counseled at length about quitting. Nicotine patch provided.")),
        ("Chronic obstructive pulmonary disease exacerbation", "Acute on chronic hypercarbic respiratory failure"),
        ("Prednisone 20 mg Tablet Sig: Two (2) Tablet PO once a day for 2 days.", "Tiotropium Bromide 18 mcg Capsule, w/Inhalation Device Sig: One (1) Cap Inhalation DAILY (Daily)."),
        ("cxr_portable", "cxr_pa_lat"),
        "You were admitted with a flare of your COPD. Please take the prednisone as prescribed and use your inhalers every day. Stopping smoking is the most important thing you can do for your lungs.",
    ),
    Condition(
        "hip_fracture", "ORTHOPAEDICS", ("left hip pain after fall", "mechanical fall", "right hip fracture"),
        ("Left hip hemiarthroplasty", "Open reduction internal fixation of right intertrochanteric fracture"),
        ("{pt} is a {age} year old {man} with {pmh_short} who slipped on a wet floor in {his} kitchen at home in {loc} on the morning of admission and was unable to bear weight. {He} denies head strike, loss of consciousness or preceding chest pain or palpitations. Plain films in the ED at {hosp1} showed a displaced femoral neck fracture. Orthopaedics was consulted.",
         "{age} yo {sex} living alone with {pmh_short}, found on the floor of {his} apartment by a neighbor ({relative}) after an unknown down time. Complained of right hip pain. X-rays showed an intertrochanteric fracture. CK was 1,450."),
        ("Ext: left leg shortened and externally rotated, pain with log roll, distal pulses intact", "Skin: small abrasion over the right elbow"),
        {"Hgb": (9.0, 11.5), "CK(CPK)": (300, 2200)}, ("CK(CPK)", "INR(PT)"),
        ("Hip films {d0}: Displaced subcapital femoral neck fracture.", "Post-op films {d1}: Hemiarthroplasty in good position. No periprosthetic fracture."),
        (("# Hip fracture: Taken to the OR by Dr. {ortho_doc} on {d1} for hemiarthroplasty without complication. Weight bearing as tolerated. Pain controlled with oxycodone and acetaminophen. Lovenox for DVT prophylaxis for 4 weeks.",
          "# Intertrochanteric fracture: Underwent ORIF on {d1}. Post-operative course notable for blood loss anemia requiring 1 unit PRBC. Seen by PT who recommended rehab."),
         ("# Delirium: Mild post-operative confusion, worse at night, managed with reorientation and low dose quetiapine at bedtime. Resolved by {d3}.",
          "# Fall: Felt to be mechanical. Telemetry without arrhythmia. Orthostatic vital signs negative. Home safety evaluation recommended.")),
        ("Left femoral neck fracture", "Right intertrochanteric hip fracture", "Post-operative delirium"),
        ("Enoxaparin 40 mg/0.4 mL Syringe Sig: One (1) Subcutaneous DAILY (Daily) for 4 weeks.",
         "Oxycodone 5 mg Tablet Sig: One (1) Tablet PO Q4H (every 4 hours) as needed for pain.",
         "Acetaminophen 500 mg Tablet Sig: Two (2) Tablet PO Q8H (every 8 hours)."),
        ("hip_films", "cxr_pa_lat"),
        "You had surgery to repair a broken hip. You may put as much weight on the leg as is comfortable. Keep the incision clean and dry. Staples will be removed at your follow up visit.",
    ),
    Condition(
        "dka", "MEDICINE", ("nausea, vomiting, abdominal pain", "hyperglycemia", "lethargy"), ("none", "None"),
        ("{pt} is a {age} year old {man} with type 1 diabetes since childhood, {pmh_short}, who presents with {n} days of nausea, vomiting and diffuse abdominal pain. {He} ran out of insulin glargine after losing {his} job at {company}. In the ED glucose was {glucose}, bicarbonate 8, anion gap 29 and serum ketones were positive. {He} was started on an insulin drip and aggressive IV fluids.",
         "{age} yo {sex} with poorly controlled type 1 DM (last HbA1c 11.2% in {y_prev}), {pmh_short}, brought in by friends after being found lethargic. Reports a viral illness since {md_m3} with poor oral intake, during which {he} skipped insulin doses."),
        ("Gen: dry mucous membranes, Kussmaul respirations", "Abd: diffusely tender without guarding"),
        {"Glucose": (420, 780), "HCO3": (6, 14), "K": (5.2, 6.3), "AnGap": (22, 33)}, ("%HbA1c",),
        ("CXR {d0}: No acute cardiopulmonary process.",),
        (("# Diabetic ketoacidosis: Managed in the {unit} per protocol with an insulin drip, potassium repletion and IV fluids. The anion gap closed within 14 hours and {he} was bridged to subcutaneous glargine and humalog on {d1}. Seen by the diabetes educators from {company2}.",
          "# DKA: Precipitated by insulin non-adherence in the setting of a viral illness. Gap closed on {d1}. The [**Last Name (un) **] diabetes service adjusted {his} regimen; {he} was provided with samples and a glucometer."),
         ("# Hypokalemia: Developed on the insulin drip, repleted aggressively.",
          "# Access to medications: Social work helped {him} apply for insurance coverage (SSN {ssn} on file).")),
        ("Diabetic ketoacidosis", "Type 1 diabetes mellitus, uncontrolled"),
        ("Insulin Glargine 100 unit/mL Solution Sig: Twenty Four (24) units Subcutaneous at bedtime.",
         "Insulin Lispro 100 unit/mL Solution Sig: per sliding scale Subcutaneous with meals."),
        ("cxr_portable",),
        "You were admitted with diabetic ketoacidosis, a dangerous condition caused by missing insulin. Never stop your long-acting insulin, even when you are not eating.",
    ),
    Condition(
        "pancreatitis", "MEDICINE", ("epigastric pain radiating to back", "abdominal pain", "nausea and vomiting"),
        ("ERCP with sphincterotomy and stone extraction", "none"),
        ("{pt} is a {age} year old {man} with {pmh_short} who developed severe epigastric pain radiating to {his} back after dinner on {md_m1}, associated with nausea and non-bloody emesis. {He} drinks 4-6 beers daily. Lipase in the ED was {lipase}. CT showed peripancreatic fat stranding without necrosis.",
         "{age} yo {sex} with known gallstones, {pmh_short}, who presented to {outside} with abdominal pain and jaundice and was transferred for ERCP. LFTs there showed a total bilirubin of 4.1 and lipase over 2000."),
        ("Abd: tender in the epigastrium with voluntary guarding, hypoactive bowel sounds", "Skin: mild scleral icterus"),
        {"Lipase": (900, 4200), "ALT": (60, 340), "AST": (55, 300), "WBC": (11.0, 17.0)}, ("Lipase", "ALT", "AST"),
        ("CT abdomen {d0}: Edematous pancreas with peripancreatic fluid. No necrosis or pseudocyst. Cholelithiasis.",
         "RUQ ultrasound {d0}: Multiple gallstones, common bile duct dilated to 9 mm."),
        (("# Acute pancreatitis: Managed with bowel rest, aggressive IV fluids and hydromorphone PCA. Diet was advanced to low fat on {d3}. Etiology felt to be alcohol; triglycerides normal.",
          "# Gallstone pancreatitis: ERCP on {d1} by Dr. {gi_doc} with sphincterotomy and removal of two stones. LFTs trended down. Surgery was consulted and will see {him} as an outpatient for interval cholecystectomy."),
         ("# Alcohol use: Monitored on CIWA scale; required diazepam only on the first night. Given thiamine, folate and a multivitamin. Counseled about abstinence.",
          "# Pain control: Transitioned from IV to oral opioids on {d2}.")),
        ("Acute pancreatitis", "Choledocholithiasis", "Alcohol abuse"),
        ("Thiamine HCl 100 mg Tablet Sig: One (1) Tablet PO DAILY (Daily).", "Folic Acid 1 mg Tablet Sig: One (1) Tablet PO DAILY (Daily)."),
        ("ct_abdomen",),
        "You were admitted with inflammation of the pancreas. Do not drink alcohol. Eat a low fat diet and return for fever, worsening pain or yellowing of the skin.",
    ),
    Condition(
        "afib", "MEDICINE", ("palpitations", "rapid heart rate", "chest discomfort and palpitations"), ("Transesophageal echocardiogram and cardioversion", "none"),
        ("{pt} is a {age} year old {man} with paroxysmal atrial fibrillation, {pmh_short}, who presents with {n} days of palpitations and fatigue. {He} missed several doses of metoprolol while visiting family in {state}. In the ED {he} was in AF with RVR at rates of 150-170, BP 104/70. Given diltiazem 10 mg IV twice with partial response.",
         "{age} yo {sex} with {pmh_short}, no prior arrhythmia, who felt {his} heart racing while gardening on {md_m1}. Seen at an urgent care clinic run by {company} and sent in for new atrial fibrillation with rates in the 140s."),
        ("CV: irregularly irregular, tachycardic, no murmurs", "Gen: anxious, no distress"),
        {"TSH": (0.2, 6.5)}, ("TSH", "cTropnT"),
        ("TTE {d1}: Mildly dilated left atrium. LVEF 50%. No significant valvular disease.",
         "ECG {d0}: Atrial fibrillation with rapid ventricular response at 156, left axis deviation, no acute ST changes."),
        (("# Atrial fibrillation with RVR: Rate controlled with IV then oral diltiazem and uptitrated metoprolol. CHADS2 score of {chads}; after discussion of risks and benefits {he} was started on warfarin with a lovenox bridge. INR goal 2-3; to be followed at the {clinic}.",
          "# New onset atrial fibrillation: TEE on {d1} showed no left atrial appendage thrombus and {he} underwent successful DC cardioversion to sinus rhythm. Started on apixaban, to continue for at least 4 weeks."),
         ("# Demand ischemia: Troponin peaked at 0.06 in the setting of tachycardia, no further workup indicated.",
          "# Anticoagulation: Bleeding risk reviewed with {him} and {his} family; fall risk felt to be acceptable.")),
        ("Atrial fibrillation with rapid ventricular response", "Paroxysmal atrial fibrillation"),
        ("Diltiazem HCl 120 mg Capsule, Sustained Release Sig: One (1) Capsule PO once a day.",
         "Warfarin 5 mg Tablet Sig: One (1) Tablet PO once a day: adjust per the anticoagulation clinic."),
        ("cxr_portable", "cxr_pa_lat"),
        "You were admitted with atrial fibrillation, an irregular heart rhythm. You are now on a blood thinner. Watch for bleeding and keep your appointments for blood tests.",
    ),
)

CHRONIC_PROBLEMS = {
    "hypertension": ("HTN", "Lisinopril 10 mg Tablet Sig: One (1) Tablet PO DAILY (Daily).",
                     ("# Hypertension: Home lisinopril was continued; blood pressures were well controlled.",
                      "# HTN: Antihypertensives held on admission for soft pressures and restarted on {d2}.")),
    "type 2 diabetes": ("DM2", "Metformin 500 mg Tablet Sig: One (1) Tablet PO BID (2 times a day).",
                        ("# Type 2 diabetes: Metformin held while inpatient; covered with an insulin sliding scale. Resumed at discharge.",
                         "# DM2: Fingersticks 120-210 on sliding scale. HbA1c 7.4%.")),
    "hyperlipidemia": ("HLD", "Simvastatin 40 mg Tablet Sig: One (1) Tablet PO DAILY (Daily).",
                       ("# Hyperlipidemia: Continued statin.",)),
    "chronic kidney disease stage III": ("CKD", "Calcitriol 0.25 mcg Capsule Sig: One (1) Capsule PO DAILY (Daily).",
                                         ("# CKD: Creatinine at baseline of 1.6. Medications renally dosed.",
                                          "# Chronic kidney disease: Avoided nephrotoxins and IV contrast where possible.")),
    "depression": ("depression", "Sertraline 50 mg Tablet Sig: One (1) Tablet PO DAILY (Daily).",
                   ("# Depression: Continued sertraline. Mood stable.",)),
    "hypothyroidism": ("hypothyroidism", "Levothyroxine 75 mcg Tablet Sig: One (1) Tablet PO DAILY (Daily).",
                       ("# Hypothyroidism: Continued home levothyroxine.",)),
    "benign prostatic hypertrophy": ("BPH", "Tamsulosin 0.4 mg Capsule, Sust. Release 24 hr Sig: One (1) Capsule PO HS (at bedtime).",
                                     ("# BPH: Continued tamsulosin; voiding without difficulty after the foley was removed.",)),
    "GERD": ("GERD", "Omeprazole 20 mg Capsule, Delayed Release(E.C.) Sig: One (1) Capsule PO DAILY (Daily).",
             ("# GERD: Continued PPI.",)),
    "obstructive sleep apnea": ("OSA", "CPAP at night, home settings",
                                ("# OSA: Continued home CPAP at night.",)),
    "osteoarthritis": ("OA", "Acetaminophen 500 mg Tablet Sig: 1-2 Tablets PO Q6H (every 6 hours) as needed for pain.",
                       ("# Osteoarthritis: Pain controlled with standing acetaminophen.",)),
}
MALE_ONLY_PROBLEMS = ("benign prostatic hypertrophy",)
SURGICAL_HISTORY = (  # (text, only for female / male / anyone)
    ("s/p cholecystectomy {y}", None), ("s/p appendectomy as a child", None), ("s/p right total knee replacement {y}", None),
    ("s/p TURP {y}", False), ("s/p CABG x3 at {hosp} in {y}", None), ("s/p hysterectomy {y}", True),
    ("s/p inguinal hernia repair {y}", None), ("s/p dual chamber pacemaker {y}, serial no. {serial}", None),
)
ALLERGIES = ("Patient recorded as having No Known Allergies to Drugs", "Penicillins", "Sulfa (Sulfonamide Antibiotics)",
             "Codeine / Iodine", "Lisinopril / Morphine", "Patient recorded as having No Known Allergies to Drugs")
SOCIAL_HISTORY = (
    "Lives with {his} {spouse} {relative} in {loc}. Retired, worked for many years at {company}. Former smoker, quit in {y_old} ({packs} pack-years). Drinks 1-2 glasses of wine per week. No illicit drug use.",
    "Lives alone in an apartment at {street} in {loc}; {his} daughter {relative} checks in daily. Independent of ADLs, uses a cane. Denies tobacco, alcohol or drugs.",
    "Resides at {facility} for the past {n} years. Widowed. Son {relative} is the health care proxy, phone {phone}. Remote tobacco history, no alcohol.",
    "Married to {relative}, lives in {state}. Works as a bus driver for {company}. Smokes half a pack per day. Occasional alcohol.",
    "Born in {country}, emigrated in {year4}. Lives with {his} {spouse} {relative} at {apt} in {loc}. Retired teacher, studied at {college}. Never smoker, no alcohol.",
)
FAMILY_HISTORY = (
    "Mother died at {age90} of a stroke. Father had an MI in his 60s. Brother with type 2 diabetes.",
    "Non-contributory.",
    "Father with colon cancer diagnosed in {y_old}. Sister {relative} has hypertension. No family history of sudden cardiac death.",
    "Mother with breast cancer. Father died at age 71 of lung cancer. No known family history of bleeding disorders.",
)
DISPOSITIONS = (("Home", ""), ("Home With Service", "Facility:\n{company2}"),
                ("Extended Care", "Facility:\n{facility}"))
DISCHARGE_CONDITIONS = (
    "Mental Status: Clear and coherent.\nLevel of Consciousness: Alert and interactive.\nActivity Status: Ambulatory - Independent.",
    "Stable, afebrile, ambulating with assistance, tolerating a regular diet.",
    "Mental Status: Confused - sometimes.\nLevel of Consciousness: Alert and interactive.\nActivity Status: Ambulatory - requires assistance or aid (walker or cane).",
)

NORMAL_EXAM = (
    ("Gen", ("NAD, comfortable", "elderly, in mild distress", "alert, oriented x3")),
    ("HEENT", ("MMM, OP clear, anicteric", "dry mucous membranes, PERRL")),
    ("Neck", ("supple, JVP not elevated", "no LAD")),
    ("CV", ("RRR, no m/r/g", "regular, II/VI systolic murmur at the apex")),
    ("Lungs", ("CTAB", "clear anteriorly, decreased at bases")),
    ("Abd", ("soft, NT/ND, +BS", "obese, soft, nontender")),
    ("Ext", ("WWP, no edema", "trace bilateral ankle edema")),
    ("Neuro", ("A&Ox3, CN II-XII intact, strength 5/5 throughout", "nonfocal")),
)
LAB_RANGES = {  # name: (low normal, high normal, decimals)
    "WBC": (4.0, 11.0, 1), "RBC": (4.2, 5.4, 2), "Hgb": (12.0, 16.0, 1), "Hct": (36.0, 48.0, 1), "MCV": (82, 98, 0),
    "Plt Ct": (150, 400, 0), "Glucose": (70, 105, 0), "UreaN": (6, 20, 0), "Creat": (0.5, 1.1, 1),
    "Na": (133, 145, 0), "K": (3.3, 5.1, 1), "Cl": (96, 108, 0), "HCO3": (22, 32, 0), "AnGap": (8, 20, 0),
    "Lactate": (0.5, 2.0, 1), "proBNP": (0, 450, 0), "cTropnT": (0.0, 0.01, 2), "INR(PT)": (0.9, 1.1, 1),
    "%HbA1c": (4.0, 6.0, 1), "Triglyc": (40, 150, 0), "pCO2": (35, 45, 0), "CK(CPK)": (40, 200, 0),
    "Lipase": (0, 60, 0), "ALT": (0, 40, 0), "AST": (0, 40, 0), "TSH": (0.3, 4.2, 1),
}
LAB_PANELS = (("WBC", "RBC", "Hgb", "Hct", "MCV", "Plt Ct"), ("Glucose", "UreaN", "Creat", "Na", "K", "Cl", "HCO3", "AnGap"))


# ---------------------------------------------------------------------------
# MIMIC-III: admissions and notes
# ---------------------------------------------------------------------------

@dataclass
class Admission:
    subject_id: int
    hadm_id: int
    admit: date
    discharge: date
    dob: date
    female: bool
    condition: Condition
    chronic: list[str]
    seed: int

    @property
    def age(self) -> int:
        return (self.admit - self.dob).days // 365


class NoteCtx:
    """Slots and helpers for the notes of one admission."""

    def __init__(self, adm: Admission, rng: random.Random):
        self.adm, self.rng, self.phi = adm, rng, Phi(rng)
        p = self.phi
        he = PRONOUNS[adm.female]
        age = "[**Age over 90 **]" if adm.age >= 90 else str(adm.age)
        los = (adm.discharge - adm.admit).days
        self.slots = {
            **he, "age": age, "sex": "F" if adm.female else "M", "man": "woman" if adm.female else "man",
            "pt": f"{'Ms.' if adm.female else 'Mr.'} {p.tag('Known lastname', 'patient')}",
            "pcp": p.doctor(), "outside": p.tag(self.pick(("Hospital", "Hospital3")), hi=9999),
            "hosp1": p.tag("Hospital1", "hosp1", hi=200, blank=0.4), "unit": p.tag("Hospital Unit Name", hi=200),
            "ward": p.tag("Hospital Ward Name", hi=999), "loc": p.tag(self.pick(("Location (un)", "Location")), hi=9999),
            "state": p.tag("State", hi=999), "company": p.tag("Company", hi=9999), "company2": p.tag("Company", hi=9999),
            "facility": f"{p.tag('Hospital', hi=9999)} {self.pick(('Nursing Home', 'Rehab', 'Senior Living'))}",
            "street": p.tag("Street Address(2)", hi=9999), "relative": p.relative(), "phone": p.tag("Telephone/Fax (1)"),
            "spouse": "husband" if adm.female else "wife", "gi_doc": p.tag("Last Name (STitle)", hi=9999),
            "ortho_doc": p.tag("Doctor Last Name", hi=9999), "clinic": f"{p.tag('Hospital1', 'hosp1', hi=200)} anticoagulation clinic",
            "age90": "[**Age over 90 **]", "y_prev": p.year(adm.admit.year - self.rng.randint(1, 4)),
            "y_old": p.year(adm.admit.year - self.rng.randint(6, 25)),
            "side": self.pick(("right", "left")), "n": self.rng.randint(2, 7), "ef": self.rng.randint(15, 35),
            "kg": self.rng.randint(3, 8), "bnp": self.rng.randint(3500, 24000), "liters": self.rng.randint(4, 11),
            "dry_wt": self.rng.randint(62, 118), "hct": round(self.rng.uniform(19, 27), 1), "units": self.rng.randint(2, 6),
            "lactate": round(self.rng.uniform(2.4, 5.8), 1), "nihss": self.rng.randint(4, 18), "fev1": self.rng.randint(22, 45),
            "glucose": self.rng.randint(420, 780), "lipase": self.rng.randint(900, 4200), "chads": self.rng.randint(1, 4),
            "course_days": self.pick((5, 7, 8)), "packs": self.rng.randint(10, 60),
            "country": p.tag("Country", hi=999), "year4": "[**Year (4 digits) **]",
            "apt": p.tag("Apartment Address(1)", hi=9999), "college": p.tag("University/College", blank=0.6, hi=999),
            "month_only": p.tag("Month (only)", hi=999), "email": p.tag("E-mail address", hi=9999),
            "url": p.tag("URL", hi=9999), "holiday": p.tag("Holiday", hi=999), "date_range": p.tag("Date range (1)", hi=9999),
            "month_day2": p.tag("Month/Day (2)", hi=999), "serial": p.tag("Serial Number", hi=99999),
            "ssn": "[**Social Security Number **]",
        }
        self.slots["Side"] = self.slots["side"].capitalize()
        self.slots["pmh_short"] = self.pmh_short()
        for k in range(-5, los + 1):
            d = adm.admit + timedelta(days=k)
            name = f"m{-k}" if k < 0 else str(k)
            self.slots[f"d_{name}" if k < 0 else f"d{name}"] = p.date(d)
            self.slots[f"md_{name}" if k < 0 else f"md{name}"] = p.month_day(d)

    def pick(self, options):
        return self.rng.choice(options)

    def fill(self, template: str, **extra) -> str:
        return template.format(**{**self.slots, **extra})

    def pmh_short(self) -> str:
        names = [CHRONIC_PROBLEMS[c][0] for c in self.adm.chronic] or ["no significant past medical history"]
        return ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1]

    def labs(self, when: date, abnormal: bool) -> str:
        cond = self.adm.condition
        time_ = f"{self.rng.randint(1, 12):02d}:{self.rng.randint(0, 59):02d}{self.pick(('AM', 'PM'))}"
        lines = []
        for panel in LAB_PANELS + (cond.extra_labs,):
            values = []
            for name in panel:
                lo, hi, dec = LAB_RANGES[name]
                lo2, hi2 = cond.labs[name] if abnormal and name in cond.labs else (lo, hi)
                value = round(self.rng.uniform(lo2, hi2), dec)
                text = f"{value:.{dec}f}" if dec else str(int(value))
                values.append(f"{name}-{text}{'*' if not lo <= value <= hi else ''}")
            lines.append(f"{self.phi.date(when)} {time_} BLOOD " + " ".join(values))
        return "\n".join(lines)


def vitals(rng: random.Random) -> str:
    return (f"VS: T {rng.uniform(97.5, 102.4):.1f} BP {rng.randint(88, 168)}/{rng.randint(48, 96)} "
            f"HR {rng.randint(62, 128)} RR {rng.randint(14, 30)} O2 {rng.randint(86, 99)}% "
            f"{rng.choice(('RA', '2L NC', '4L NC', 'on NRB'))}")


def discharge_summary(n: NoteCtx) -> list[str]:
    adm, cond, phi, rng = n.adm, n.adm.condition, n.phi, n.rng
    chronic = [CHRONIC_PROBLEMS[c] for c in adm.chronic]
    disposition, facility = n.pick(DISPOSITIONS)
    abnormal = [n.fill(line) for line in rng.sample(cond.exam, k=min(2, len(cond.exam)))]
    exam_lines = [vitals(rng)] + [
        abnormal_line if (abnormal_line := next((a for a in abnormal if a.startswith(system + ":")), None))
        else f"{system}: {n.pick(options)}" for system, options in NORMAL_EXAM
    ] + [a for a in abnormal if a.split(":")[0] not in {system for system, _ in NORMAL_EXAM}]
    pmh = [f"- {name}" + (n.fill(", diagnosed {month_only} {y_old}") if i == 0 and rng.random() < 0.5 else "")
           for i, name in enumerate(adm.chronic)] + [
        "- " + n.fill(s, y=phi.year(adm.admit.year - rng.randint(2, 30)), hosp=phi.tag("Hospital", hi=9999))
        for s, sex in rng.sample(SURGICAL_HISTORY, rng.randint(0, 2)) if sex in (None, adm.female)]
    course = [n.fill(n.pick(alts)) for alts in cond.course] + [n.fill(n.pick(c[2])) for c in chronic[:3]]
    adm_meds = [c[1] for c in chronic] or ["None"]
    dis_meds = [c[1] for c in chronic] + list(cond.meds)
    followups = [
        f"Provider: {phi.tag('First Name8 (NamePattern2)')} {phi.tag('Last Name (NamePattern1)')}, MD Phone:{n.slots['phone']} "
        f"Date/Time:{phi.date(adm.discharge + timedelta(days=rng.randint(5, 20)))} {rng.randint(8, 16)}:{n.pick(('00', '15', '30', '45'))}",
        n.pick((f"Please follow up with your PCP {n.slots['pcp']} within 1-2 weeks.",
                n.fill("Please have your labs drawn on {month_day2} and see your specialist during {date_range}."),
                f"Follow up with {phi.tag('Hospital', hi=9999)} clinic, {phi.tag('Telephone/Fax (1)')}, in {phi.month_day(adm.discharge + timedelta(days=14))}.")),
    ]
    paras = [
        f"Admission Date:  {phi.date(adm.admit)}              Discharge Date:   {phi.date(adm.discharge)}",
        f"Date of Birth:  {phi.date(adm.dob)}             Sex:   {n.slots['sex']}",
        f"Service: {cond.service}",
        f"Allergies:\n{n.pick(ALLERGIES)}",
        f"Attending:{phi.tag('First Name3 (LF)')}\nChief Complaint:\n{n.pick(cond.complaints)}",
        f"Major Surgical or Invasive Procedure:\n{n.pick(cond.procedures)}",
        "History of Present Illness:\n" + n.fill(n.pick(cond.hpi)),
        "Past Medical History:\n" + ("\n".join(pmh) if pmh else "None"),
        "Social History:\n" + n.fill(n.pick(SOCIAL_HISTORY)),
        "Family History:\n" + n.fill(n.pick(FAMILY_HISTORY)),
        "Physical Exam:\n" + "\n".join(exam_lines),
        "Pertinent Results:\n" + n.labs(adm.admit, True),
        *[n.fill(s) for s in cond.studies],
        n.labs(adm.discharge, False),
        "Brief Hospital Course:\n" + n.fill(n.pick((
            "{age} yo {sex} with {pmh_short} admitted with {cc}.",
            "{pt} was admitted to the {ward} service on {d0}. Hospital course by problem is outlined below.",
        )), cc=n.pick(cond.complaints)),
        *course,
        "Medications on Admission:\n" + "\n".join(f"{i}. {m}" for i, m in enumerate(adm_meds, 1)),
        "Discharge Medications:\n" + "\n".join(f"{i}. {m}" for i, m in enumerate(dis_meds, 1)),
        f"Discharge Disposition:\n{disposition}" + (f"\n\n{n.fill(facility)}" if facility else ""),
        "Discharge Diagnosis:\nPrimary:\n" + "\n".join(rng.sample(cond.diagnoses, k=min(2, len(cond.diagnoses))))
        + "\n\nSecondary:\n" + ("\n".join(adm.chronic) if adm.chronic else "none"),
        "Discharge Condition:\n" + n.pick(DISCHARGE_CONDITIONS),
        "Discharge Instructions:\n" + cond.instructions + " " + n.pick((
            "Please take all medications as prescribed and keep your follow up appointments.",
            "If you have chest pain, shortness of breath, fevers or any other concerning symptoms, call your doctor or return to the ED.")),
        n.fill(n.pick((
            "Questions can be directed to the clinic at {phone} or by e-mail to {email}.",
            "Educational material about your condition is available at {url}.",
            "The clinic is closed on {holiday}; on that day call the covering physician through the page operator.",
        ))),
        "Followup Instructions:\n" + "\n".join(followups),
        f"{phi.tag('First Name11 (Name Pattern1)', blank=0.5)} {phi.tag('Last Name (NamePattern4)', hi=9999)} MD {phi.tag('MD Number(1)', hi=9999)}",
        f"Completed by:{phi.date(adm.discharge + timedelta(days=rng.randint(0, 6)))}",
    ]
    return [p for p in "\n\n".join(paras).split("\n\n")]


RADIOLOGY_EXAMS = {
    "cxr_portable": ("CHEST (PORTABLE AP)", "eval for infiltrate / effusion", "Single portable AP view of the chest.",
                     ("The endotracheal tube, if present, is not seen. The cardiac silhouette is {heart}.",
                      "There is {finding_lung}. No pneumothorax is identified.",
                      "Osseous structures are notable for degenerative changes of the thoracic spine."),
                     "1. {Finding_lung}.\n2. No pneumothorax."),
    "cxr_pa_lat": ("CHEST (PA & LAT)", "interval change", "PA and lateral views of the chest.",
                   ("Heart size is {heart}. The mediastinal and hilar contours are unremarkable.",
                    "There is {finding_lung}. Costophrenic angles are sharp on the lateral view.",
                    "No acute osseous abnormality."),
                   "{Finding_lung}."),
    "ct_head": ("CT HEAD W/O CONTRAST", "r/o hemorrhage", "Contiguous axial images of the brain were obtained without IV contrast.",
                ("There is no intracranial hemorrhage, mass effect or shift of normally midline structures.",
                 "There is loss of grey-white differentiation in the {side} frontal operculum, compatible with an evolving infarct.",
                 "Periventricular white matter hypodensities likely reflect chronic small vessel ischemic disease. The visualized paranasal sinuses are clear."),
                "1. No acute intracranial hemorrhage.\n2. Early {side} MCA territory infarct."),
    "mr_head": ("MR HEAD W & W/O CONTRAST", "eval extent of infarct", "Sagittal T1, axial FLAIR, T2, DWI and post-gadolinium images were obtained.",
                ("There is restricted diffusion in the {side} insular cortex and corona radiata, consistent with acute infarction.",
                 "No hemorrhagic transformation on susceptibility weighted images.",
                 "There is no abnormal enhancement. Flow voids are preserved."),
                "Acute {side} MCA territory infarct without hemorrhagic transformation."),
    "ct_abdomen": ("CT ABDOMEN W/CONTRAST", "eval for source of pain", "MDCT axial images through the abdomen and pelvis after IV contrast.",
                   ("The liver, spleen and adrenal glands are unremarkable. The gallbladder contains several small stones.",
                    "There is {finding_abd}.",
                    "No free air or drainable fluid collection. The bowel is normal in caliber."),
                   "1. {Finding_abd}.\n2. Cholelithiasis."),
    "renal_us": ("RENAL U.S.", "eval for hydronephrosis", "Grayscale and Doppler images of both kidneys and the bladder.",
                 ("The right kidney measures 11.2 cm and the left 10.8 cm.",
                  "There is {finding_renal}.",
                  "The bladder is decompressed around a Foley catheter."),
                 "{Finding_renal}."),
    "hip_films": ("HIP UNILAT MIN 2 VIEWS", "s/p fall, eval for fracture", "AP pelvis and two views of the {side} hip.",
                  ("There is a displaced fracture through the {side} femoral neck with superior migration of the femoral shaft.",
                   "Mild degenerative narrowing of both hip joints. The sacroiliac joints are preserved.",
                   "Vascular calcifications are noted."),
                  "Displaced {side} femoral neck fracture."),
}
RADIOLOGY_FINDINGS = {  # slot -> condition key ("*": any other) -> alternatives
    "heart": {"*": ("normal", "mildly enlarged", "moderately enlarged, unchanged")},
    "finding_lung": {"pneumonia": ("a new opacity in the {side} lower lobe concerning for pneumonia",),
                     "chf": ("mild pulmonary vascular congestion with small bilateral effusions",),
                     "copd": ("hyperinflation without focal consolidation",),
                     "*": ("no focal consolidation, effusion or edema", "minimal {side} basilar atelectasis")},
    "finding_abd": {"pancreatitis": ("peripancreatic fat stranding and fluid without necrosis",),
                    "urosepsis": ("{side} sided hydronephrosis and perinephric stranding",),
                    "*": ("no acute intra-abdominal process",)},
    "finding_renal": {"urosepsis": ("mild {side} hydronephrosis",),
                      "*": ("no hydronephrosis; a 1.8 cm simple cyst in the left kidney",)},
}


def radiology_report(n: NoteCtx) -> tuple[str, list[str]]:
    adm, phi, rng = n.adm, n.phi, n.rng
    exam_key = n.pick(adm.condition.radiology)
    title, reason, technique, findings, impression = RADIOLOGY_EXAMS[exam_key]
    when = adm.admit + timedelta(days=rng.randint(0, max(0, (adm.discharge - adm.admit).days - 1)))
    picked = {k: n.fill(n.pick(v.get(adm.condition.key, v["*"]))) for k, v in RADIOLOGY_FINDINGS.items()}
    picked.update({k.capitalize(): v[0].upper() + v[1:] for k, v in list(picked.items())})
    fill = lambda s: n.fill(s, **picked)  # noqa: E731
    clock = f"{rng.randint(1, 12)}:{rng.randint(0, 59):02d} {n.pick(('AM', 'PM'))}"
    paras = [
        f"{phi.date(when)} {clock}\n     {title}                                   Clip # {phi.tag('Clip Number (Radiology)')}",
        f"     Reason: {reason}\n     Admitting Diagnosis: {adm.condition.diagnoses[0].upper()}\n     "
        f"Unit No: {phi.tag('Unit Number', hi=99999)}\n     "
        f"Referring physician: {phi.tag('First Name8 (NamePattern2)', blank=0.3)} {phi.tag('Last Name (NamePattern1)')}",
        f" {phi.tag('Hospital', hi=9999)} MEDICAL CONDITION:\n  {n.slots['age']} year old {n.slots['man']} with {n.slots['pmh_short']} "
        f"and {adm.condition.diagnoses[0].lower()}",
        f" REASON FOR THIS EXAMINATION:\n  {reason}" + n.pick((f", pt on {n.slots['ward']}", f" - pls page {phi.tag('Pager number', hi=999)} with wet read")),
        n.pick(("No contraindications for IV contrast", f"Wet read by {phi.doctor()} at {clock}",
                f"Pager {phi.tag('Pager number', hi=999)} with questions")),
        f" FINAL REPORT\n Job#: {phi.tag('Job Number', hi=99999)}",
        f"INDICATION: {reason.capitalize()}. Ordered by {n.slots['pcp']} from the {n.slots['unit']}.",
        "COMPARISON: " + n.pick((f"{phi.date(when - timedelta(days=rng.randint(30, 900)))}.",
                                  f"Outside study from {n.slots['outside']} dated {phi.date(when - timedelta(days=rng.randint(1, 5)))}.",
                                  "None available.")),
        f"TECHNIQUE: {fill(technique)} MRN {phi.tag('Medical Record Number')}.",
        *[f"FINDINGS: {fill(findings[0])}"] + [fill(f) for f in findings[1:]],
        "IMPRESSION:\n" + fill(impression),
        f"Findings were discussed with {phi.doctor()} by telephone at {clock} on {phi.date(when)}.",
        f"DR. {phi.tag('First Name (STitle)', hi=9999)} {phi.tag('Doctor Last Name', hi=9999)}\n"
        f"DR. {phi.tag('First Name8 (NamePattern2)', blank=0.5)} {phi.tag('Last Name (NamePattern1)')}   "
        f"Approved: {phi.tag('Doctor First Name', blank=0.7)} {phi.date(when + timedelta(days=1))} 9:{rng.randint(10, 59)} AM",
    ]
    return title, paras


NURSING_SYSTEMS = (  # (system, alternatives); {doctor}/{relative}/{rn} are fresh placeholders
    ("Neuro", ("A+Ox3, MAE, follows commands. Denies pain.",
               "Lethargic but arousable to voice, oriented to self only. Reoriented frequently; {relative} at bedside helped calm pt.")),
    ("CV", ("{rhythm} 70s-100s, no ectopy. SBP 100s-130s. Pulses palpable. K repleted per sliding scale on {md1}.",
            "HR {rhythm} 90s-110s, SBP 90s at times, 500 mL NS bolus given per {doctor} with good effect.")),
    ("Resp", ("LS clear upper, diminished at bases. On 2L NC, sats 94-97%. IS encouraged.",
              "Coarse BS, suctioned for thick yellow secretions. RT {rn} following for nebs q4h.")),
    ("GI", ("Abd soft, +BS. Tolerating diet. Last BM {md0}.", "NPO after midnight for procedure on {md1}. IV PPI BID.")),
    ("GU", ("Foley placed {md0} draining clear yellow urine 40-80 mL/hr.", "Voiding in urinal, adequate amounts. Foley removed {md1}.")),
    ("Skin", ("Intact, turning q2h, heels floated.", "Stage 1 area on coccyx, wound care RN {rn} consulted.")),
    ("ID", ("Tmax 100.9. Cont on abx as ordered. Blood cx from {md0} pending.", "Afebrile. Abx day 2, started {md0}.")),
    ("Endo", ("FS 140-220 covered per RISS.", "FS qAC/HS, no coverage required since {md0}.")),
    ("Access", ("PIV x2, {side} IJ CVL placed {md0}.", "20g PIV {side} forearm, 18g PIV {side} AC, both placed {md0}.")),
)


def nursing_note(n: NoteCtx) -> tuple[str, list[str]]:
    adm, phi, cond = n.adm, n.phi, n.adm.condition
    n.slots["rhythm"] = "AF" if cond.key == "afib" else n.pick(("SR", "ST"))
    shift = n.pick(("0700-1900", "1900-0700", "7p-7a", "7a-7p"))

    def system(name: str, options: tuple[str, ...]) -> str:
        return f"{name}: " + n.fill(n.pick(options), doctor=phi.doctor(), relative=phi.relative(),
                                    rn=phi.tag("First Name (Titles)", hi=9999, blank=0.5))

    systems = [system(name, options) for name, options in NURSING_SYSTEMS]
    social = "Social: " + n.pick((
        f"{n.slots['spouse'].capitalize()} {phi.relative()} in to visit, updated on plan of care. Contact # {phi.tag('Telephone/Fax (1)')}.",
        f"Daughter {phi.relative()} called from {n.slots['state']}, updated by RN. HCP paperwork in chart."))
    paras = [
        f"Nursing Progress Note {shift}\nPt is a {n.slots['age']} yo {n.slots['sex']} admitted to the {n.slots['unit']} from "
        f"{n.slots['outside']} with {cond.diagnoses[0].lower()}.",
        "Events: " + n.pick((f"Seen by {phi.doctor()} at the start of shift, plan discussed.",
                             f"Rapid response called at 0230 for hypotension; {phi.doctor()} at bedside.")),
        f"{cond.diagnoses[0]} (focus)\nD: {n.fill(n.pick(cond.exam))}\nA: Meds given as ordered, {phi.doctor()} updated.\n"
        f"R: {n.pick(('Resting comfortably between cares.', 'Remains anxious, reassurance given.'))}",
        *systems[:5], social, *systems[5:],
        "Code status: " + n.pick(("Full code.", "DNR/DNI, confirmed with family.")),
        "Plan: " + n.pick(("Cont current management, wean O2 as tolerated, PT consult in am.",
                           "Monitor HR and BP closely, f/u am labs, possible call-out to the floor tomorrow.")),
        f"{phi.tag('First Name8 (NamePattern2)', blank=0.3)} {phi.tag('Last Name (NamePattern1)')}, RN",
    ]
    return "Nursing Progress Note", paras


def physician_note(n: NoteCtx) -> tuple[str, list[str]]:
    adm, phi, cond = n.adm, n.phi, n.adm.condition
    day = adm.admit + timedelta(days=1)
    course = [n.fill(n.pick(alts)) for alts in cond.course]
    paras = [
        f"Chief Complaint: {n.pick(cond.complaints)}",
        "24 Hour Events:\n" + n.pick((f"- Discussed with {phi.doctor()}, family meeting planned.",
                                      f"- Case reviewed with attending {phi.tag('Initials (NamePattern4)', blank=0.7)} {phi.tag('Last Name (NamePattern4)', hi=9999)}",
                                      f"- Seen by consult team ({phi.doctor()})\n- Pager {phi.tag('Pager number', hi=999)} for questions")),
        "Allergies:\n" + n.pick(ALLERGIES),
        "Last dose of Antibiotics:\n" + n.pick(("Ceftriaxone", "Vancomycin", "Azithromycin")) + f" - {phi.date(day)} 08:00 PM",
        "Infusions:\n" + n.pick(("Heparin Sodium - 1,100 units/hour", "Norepinephrine - 0.06 mcg/Kg/min", "Insulin - 4 units/hour"))
        + f" (started {phi.date(adm.admit)})",
        f"Other ICU medications:\n{n.pick(('Pantoprazole (Protonix)', 'Furosemide (Lasix) - 40 mg', 'Lorazepam (Ativan)'))} - {phi.date(day)} 11:30 PM",
        f"Changes to medical and family history:\nHistory obtained from {n.slots['spouse']} {phi.relative()} and records from {n.slots['outside']}.",
        "Review of systems is unchanged from admission except as noted below",
        f"Flowsheet Data as of  {phi.date(day)} 06:45 AM\n{vitals(n.rng)}",
        "Physical Examination\n" + "\n".join(n.fill(line) for line in cond.exam),
        "Labs / Radiology\n" + n.labs(day, True),
        f"Assessment and Plan\n{n.slots['pt']} is a {n.slots['age']} yo {n.slots['sex']} with {n.slots['pmh_short']} admitted with {cond.diagnoses[0].lower()}.",
        *course,
        "ICU Care\nNutrition: " + n.pick(("NPO", "Regular diet")) + "\nGlycemic Control: Regular insulin sliding scale\n"
        f"Lines: {n.pick(('20 Gauge', 'Arterial Line', 'Multi Lumen'))} - {phi.date(adm.admit)} 04:12 PM\nProphylaxis: DVT: SQ UF Heparin",
        "Code status: " + n.pick(("Full code", "DNR (do not resuscitate)")) + "\nDisposition: ICU",
        f"Protected Section\nAddendum by {phi.doctor()} on {phi.date(day)}. MD number {phi.tag('MD Number(3)', hi=999)}.",
    ]
    return "Physician Resident Progress Note", paras


NAME_OR_NUMBER = re.compile(r"\[\*\*[^*]*(?:Name|name|Number|number|Telephone|Initials)[^*]*\*\*\]")
PLACEHOLDER = re.compile(r"\[\*\*(.*?)\*\*\]")


def validate_note(paras: list[str]) -> None:
    """Fail loudly if a template change breaks the properties the project relies on."""
    assert len(paras) >= MIN_PARAGRAPHS, len(paras)
    with_phi = sum(bool(PLACEHOLDER.search(p)) for p in paras[1:13])
    assert with_phi >= 6, with_phi
    assert any(NAME_OR_NUMBER.search(p) for p in paras[1:6]), paras[1:6]
    assert any(NAME_OR_NUMBER.search(p) for p in paras[6:12]), paras[6:12]


def make_admissions(rng: random.Random, n: int) -> list[Admission]:
    subjects = rng.sample(range(1000, 99999), n)
    hadms = rng.sample(range(100000, 199999), n)
    admissions = []
    for i in range(n):
        admit = date(rng.randint(2100, 2195), rng.randint(1, 12), rng.randint(1, 28))
        age = rng.choice((rng.randint(42, 89), rng.randint(55, 89), rng.randint(90, 96))) if rng.random() < 0.9 \
            else rng.randint(22, 40)
        dob = admit - timedelta(days=365 * age + rng.randint(1, 360))
        admissions.append(Admission(
            subject_id=subjects[i], hadm_id=hadms[i], admit=admit, discharge=admit + timedelta(days=rng.randint(5, 12)),
            dob=dob, female=rng.random() < 0.45, condition=CONDITIONS[i % len(CONDITIONS)],
            chronic=[], seed=rng.randrange(2**31)))
        adm = admissions[-1]
        allowed = sorted(p for p in CHRONIC_PROBLEMS if not (adm.female and p in MALE_ONLY_PROBLEMS))
        adm.chronic = rng.sample(allowed, rng.randint(1, 4))
    return admissions


def make_mimic_notes(rng: random.Random) -> list[dict]:
    n_discharge = N_MIMIC_NOTES["Discharge summary"]
    admissions = make_admissions(rng, n_discharge)
    jobs = [("Discharge summary", adm) for adm in admissions]
    for category, builder_count in list(N_MIMIC_NOTES.items())[1:]:
        jobs += [(category, adm) for adm in rng.sample(admissions, builder_count)]
    row_ids = sorted(rng.sample(range(1, 2_000_000), len(jobs)))
    rows = []
    for row_id, (category, adm) in zip(row_ids, jobs):
        n = NoteCtx(adm, random.Random(adm.seed + len(category) + row_id))
        chart_time = store_time = cgid = ""
        if category == "Discharge summary":
            description, paras, chart_date = "Report", discharge_summary(n), adm.discharge
        else:
            builder = {"Radiology": radiology_report, "Nursing": nursing_note, "Physician ": physician_note}[category]
            description, paras = builder(n)
            chart_date = adm.admit + timedelta(days=n.rng.randint(0, (adm.discharge - adm.admit).days - 1))
            stamp = f"{chart_date.isoformat()} {n.rng.randint(0, 23):02d}:{n.rng.randint(0, 59):02d}:00"
            chart_time = stamp
            if category != "Radiology":
                store_time = stamp[:-5] + "59:00"
                cgid = str(n.rng.randint(14000, 21000))
        validate_note(paras)
        rows.append({
            "ROW_ID": row_id, "SUBJECT_ID": adm.subject_id, "HADM_ID": adm.hadm_id,
            "CHARTDATE": chart_date.isoformat(), "CHARTTIME": chart_time, "STORETIME": store_time,
            "CATEGORY": category, "DESCRIPTION": description, "CGID": cgid, "ISERROR": "",
            "TEXT": "\n\n".join(paras) + "\n",
        })
    return rows


MIMIC_HEADER = ("ROW_ID", "SUBJECT_ID", "HADM_ID", "CHARTDATE", "CHARTTIME", "STORETIME", "CATEGORY",
                "DESCRIPTION", "CGID", "ISERROR", "TEXT")


def write_mimic_notes(rows: list[dict], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / "NOTEEVENTS.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=MIMIC_HEADER, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


# ---------------------------------------------------------------------------
# Diversity report and entry point
# ---------------------------------------------------------------------------

def mean_pairwise_rouge_l(texts: list[str], n_pairs: int, seed: int = 0) -> tuple[float, int]:
    """Mean ROUGE-L F1 (stemmed) over all document pairs, or a fixed random sample of them."""
    from rouge_score import rouge_scorer  # optional: only needed for this report

    pairs = list(combinations(range(len(texts)), 2))
    if n_pairs < len(pairs):
        pairs = random.Random(seed).sample(pairs, n_pairs)
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    scores = [scorer.score(texts[i], texts[j])["rougeL"].fmeasure for i, j in pairs]
    return sum(scores) / len(scores), len(scores)


def corpus_texts(out_dir: Path) -> dict[str, list[str]]:
    tab = [doc["text"] for split in N_TAB_DOCS
           for doc in json.loads((out_dir / "tab" / f"echr_{split}.json").read_text(encoding="utf-8"))]
    with open(out_dir / "mimic" / "NOTEEVENTS.csv", encoding="utf-8", newline="") as fh:
        mimic = [row["TEXT"] for row in csv.DictReader(fh)]
    return {"TAB (ECHR)": tab, "MIMIC-III notes": mimic}


def main(out_dir: Path = DEFAULT_OUT) -> None:
    """Write both corpora under ``out_dir`` (``tab/`` and ``mimic/``)."""
    out_dir = Path(out_dir)
    rng = random.Random(SEED)
    write_tab_corpus(make_tab_corpus(rng), out_dir / "tab")
    write_mimic_notes(make_mimic_notes(rng), out_dir / "mimic")


def cli(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory (default: resources/demo)")
    parser.add_argument("--rouge-pairs", type=int, default=0,
                        help="also report the mean pairwise ROUGE-L F1 over this many random document pairs "
                             "(all pairs if there are fewer)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    main(args.out)
    print(f"wrote demo corpora to {args.out} in {time.perf_counter() - start:.1f}s")
    if args.rouge_pairs:
        for name, texts in corpus_texts(args.out).items():
            mean, n_pairs = mean_pairwise_rouge_l(texts, args.rouge_pairs)
            print(f"{name}: mean pairwise ROUGE-L F1 over {n_pairs} pairs of {len(texts)} documents = {mean:.3f}")


if __name__ == "__main__":
    cli()
