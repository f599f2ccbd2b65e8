"""What the notes of one MIMIC-III admission are written with: de-identification placeholders,
the clinical condition, and the slots every template may use."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta

from language import PRONOUNS
from texts import read_yaml

NOTES = read_yaml("mimic_notes.yaml")
_CONDITIONS_TEXTS = read_yaml("mimic_conditions.yaml")
CHRONIC_PROBLEMS: dict[str, dict] = _CONDITIONS_TEXTS["chronic_problems"]
MALE_ONLY_PROBLEMS: list[str] = _CONDITIONS_TEXTS["male_only_problems"]


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
        # Every form is drawn before one is chosen, so each doctor costs the same draws.
        return self.rng.choice(
            (
                f"Dr. {self.tag('Last Name (STitle)', blank=0.3)}",
                f"Dr. {self.tag('First Name8 (NamePattern2)', blank=0.3)} "
                f"{self.tag('Last Name (NamePattern1)')}",
                f"Dr. {self.tag('Doctor Last Name', blank=0.5)}",
                f"Dr. {self.tag('Doctor First Name', blank=0.5)} {self.tag('Last Name (un)', hi=9999)}",
            )
        )

    def relative(self) -> str:
        return self.rng.choice(
            (
                self.tag("Name (NI)", blank=0.6),
                self.tag("First Name (Titles)", hi=9999),
                self.tag("Known firstname", hi=9999),
            )
        )


@dataclass(frozen=True)
class Condition:
    """One clinical storyline (mimic_conditions.yaml)."""

    key: str
    service: str
    complaints: list[str]
    procedures: list[str]
    hpi: list[str]
    exam: list[str]  # abnormal exam lines, "System: finding"
    abnormal_labs: dict  # lab -> [low, high] on admission
    extra_labs: list[str]  # shown in addition to the blood count and chemistry panels
    studies: list[str]  # imaging / study paragraphs
    course: list[list[str]]  # problem paragraphs, each with alternatives
    diagnoses: list[str]
    meds: list[str]
    radiology: list[str]  # keys of the radiology exams suitable for this condition
    instructions: str


CONDITIONS = tuple(Condition(**entry) for entry in _CONDITIONS_TEXTS["conditions"])


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
        words = NOTES["patient_words"]["female" if adm.female else "male"]
        age = "[**Age over 90 **]" if adm.age >= 90 else str(adm.age)
        los = (adm.discharge - adm.admit).days
        self.slots = {
            **PRONOUNS[adm.female],
            "age": age,
            "sex": words["sex"],
            "man": words["man"],
            "pt": f"{words['honorific']} {p.tag('Known lastname', 'patient')}",
            "pcp": p.doctor(),
            "outside": p.tag(self.pick(("Hospital", "Hospital3")), hi=9999),
            "hosp1": p.tag("Hospital1", "hosp1", hi=200, blank=0.4),
            "unit": p.tag("Hospital Unit Name", hi=200),
            "ward": p.tag("Hospital Ward Name", hi=999),
            "loc": p.tag(self.pick(("Location (un)", "Location")), hi=9999),
            "state": p.tag("State", hi=999),
            "company": p.tag("Company", hi=9999),
            "company2": p.tag("Company", hi=9999),
            "facility": f"{p.tag('Hospital', hi=9999)} {self.pick(NOTES['facility_kinds'])}",
            "street": p.tag("Street Address(2)", hi=9999),
            "relative": p.relative(),
            "phone": p.tag("Telephone/Fax (1)"),
            "spouse": words["spouse"],
            "gi_doc": p.tag("Last Name (STitle)", hi=9999),
            "ortho_doc": p.tag("Doctor Last Name", hi=9999),
            "clinic": NOTES["anticoagulation_clinic"].format(hospital=p.tag("Hospital1", "hosp1", hi=200)),
            "age90": "[**Age over 90 **]",
            "y_prev": p.year(adm.admit.year - self.rng.randint(1, 4)),
            "y_old": p.year(adm.admit.year - self.rng.randint(6, 25)),
            "side": self.pick(NOTES["sides"]),
            "n": self.rng.randint(2, 7),
            "ef": self.rng.randint(15, 35),
            "kg": self.rng.randint(3, 8),
            "bnp": self.rng.randint(3500, 24000),
            "liters": self.rng.randint(4, 11),
            "dry_wt": self.rng.randint(62, 118),
            "hct": round(self.rng.uniform(19, 27), 1),
            "units": self.rng.randint(2, 6),
            "lactate": round(self.rng.uniform(2.4, 5.8), 1),
            "nihss": self.rng.randint(4, 18),
            "fev1": self.rng.randint(22, 45),
            "glucose": self.rng.randint(420, 780),
            "lipase": self.rng.randint(900, 4200),
            "chads": self.rng.randint(1, 4),
            "course_days": self.pick((5, 7, 8)),
            "packs": self.rng.randint(10, 60),
            "country": p.tag("Country", hi=999),
            "year4": "[**Year (4 digits) **]",
            "apt": p.tag("Apartment Address(1)", hi=9999),
            "college": p.tag("University/College", blank=0.6, hi=999),
            "month_only": p.tag("Month (only)", hi=999),
            "email": p.tag("E-mail address", hi=9999),
            "url": p.tag("URL", hi=9999),
            "holiday": p.tag("Holiday", hi=999),
            "date_range": p.tag("Date range (1)", hi=9999),
            "month_day2": p.tag("Month/Day (2)", hi=999),
            "serial": p.tag("Serial Number", hi=99999),
            "ssn": "[**Social Security Number **]",
        }
        self.slots["Side"] = self.slots["side"].capitalize()
        self.slots["Spouse"] = self.slots["spouse"].capitalize()
        self.slots["pmh_short"] = self.pmh_short()
        # {d_m5} .. {d_m1}, {d0} .. {d<length of stay>}: dates relative to admission; {md...}: month-day only
        for k in range(-5, los + 1):
            d = adm.admit + timedelta(days=k)
            name = f"m{-k}" if k < 0 else str(k)
            self.slots[f"d_{name}" if k < 0 else f"d{name}"] = p.date(d)
            self.slots[f"md_{name}" if k < 0 else f"md{name}"] = p.month_day(d)

    def pick(self, options):
        return self.rng.choice(options)

    def fill(self, template: str, **extra) -> str:
        return template.format(**{**self.slots, **extra})

    def choose(self, alternatives: list[str], **fresh) -> str:
        """Pick one alternative and fill it.

        ``fresh`` holds the new people or numbers that the alternatives name; being arguments,
        they are drawn before the pick, whichever alternative it takes.
        """
        return self.fill(self.pick(alternatives), **fresh)

    def pmh_short(self) -> str:
        names = [CHRONIC_PROBLEMS[c]["short"] for c in self.adm.chronic]
        return ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1]

    def labs(self, when: date, abnormal: bool) -> str:
        """One line per panel; values outside the normal range are starred, as in MIMIC."""
        cond = self.adm.condition
        time_ = f"{self.rng.randint(1, 12):02d}:{self.rng.randint(0, 59):02d}{self.pick(('AM', 'PM'))}"
        lines = []
        for panel in NOTES["lab_panels"] + [cond.extra_labs]:
            values = []
            for name in panel:
                lo, hi, dec = NOTES["lab_ranges"][name]
                lo2, hi2 = cond.abnormal_labs[name] if abnormal and name in cond.abnormal_labs else (lo, hi)
                value = round(self.rng.uniform(lo2, hi2), dec)
                text = f"{value:.{dec}f}" if dec else str(int(value))
                values.append(f"{name}-{text}{'*' if not lo <= value <= hi else ''}")
            lines.append(f"{self.phi.date(when)} {time_} BLOOD " + " ".join(values))
        return "\n".join(lines)


def vitals(rng: random.Random) -> str:
    return NOTES["vitals"].format(
        temperature=rng.uniform(97.5, 102.4),
        systolic=rng.randint(88, 168),
        diastolic=rng.randint(48, 96),
        heart_rate=rng.randint(62, 128),
        respiratory_rate=rng.randint(14, 30),
        saturation=rng.randint(86, 99),
        oxygen=rng.choice(NOTES["oxygen"]),
    )
