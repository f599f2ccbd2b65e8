"""Canary persons: a person's privacy is the whole of their documents, so the canary audit also plants
fictional persons whose details are spread over several documents of one privacy unit, audited in the
same training run as the sentence canaries (`plainsight.audit.canaries`; Steinke, Nasr and Jagielski
2023).

A canary person has a name, a date of birth, a place and a record number, drawn (seeded) from the
fictional pools of resources/canaries.yaml (`persons`), which share no entry with the codes' pools: a
generation never writes one from a fictional code. The person's r documents (`documents`) each name the
person and one other detail, in turn (birth date, place, record number, birth date, ...): every
document holds exactly two of the four details, none holds all of them, and from r = 3 on every detail
is in some document.

A person is one privacy unit: its documents share a `unit_id` of their own, and a fair coin of the
person's (seeded, independent of every other coin) puts all r of them into the training set or none.
Each document is a short training document of a training segment's paragraph range (drawn, seeded,
for the person), so trained methods fine-tune on it and in-context prompts may show it as any coded
segment of that range; its code holds the details it names that the run's identifier set codes (the
name and the record number are direct identifiers, the birth date and the place quasi-identifiers).
"""

from __future__ import annotations

import calendar
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from plainsight.codes.control_code import Entities, build_entities
from plainsight.entities import IDENTIFIER_SETS, SegmentKey
from plainsight.errors import InputError
from plainsight.rng import stable_rng

# Each detail's entity type and identifier type, as a corpus's annotation would give them.
DETAIL_TYPES: dict[str, tuple[str, str]] = {
    "name": ("PERSON", "DIRECT"),
    "birth_date": ("DATETIME", "QUASI"),
    "place": ("LOC", "QUASI"),
    "record_number": ("CODE", "DIRECT"),
}
# The details a person's documents name beside the name, in turn.
OTHER_DETAILS: tuple[str, ...] = ("birth_date", "place", "record_number")
OWN_UNIT = "person-"  # the unit_id of a canary person: this + its id; its documents add "-1", "-2", ...


@dataclass(frozen=True)
class PersonDesign:
    """The canary persons' pools and document sentences (resources/canaries.yaml, `persons`)."""

    given_names: tuple[str, ...]
    surnames: tuple[str, ...]
    places: tuple[str, ...]
    first_birth_year: int
    last_birth_year: int
    record_prefix: str
    record_digits: int
    sentences: Mapping[str, tuple[str, ...]]  # per detail of OTHER_DETAILS: sentences naming it and the name


@dataclass(frozen=True)
class PersonPlan:
    """How many canary persons, and over how many documents each (`audit.canaries.persons`)."""

    count: int  # 0: none
    documents: int
    seed: int

    def coins(self) -> list[bool]:
        """Each person's fair coin (True: all its documents in training), drawn on its own, seeded."""
        return [
            stable_rng(self.seed, "canary person coin", number).random() < 0.5 for number in range(self.count)
        ]


def check_person_plan(plan: PersonPlan) -> None:
    if plan.count == 1 or plan.count < 0:
        raise ValueError(
            f"audit.canaries.persons.count {plan.count}: the per-person audit needs at least 2 persons "
            "(0: none)"
        )
    if plan.documents < 2:
        raise ValueError(
            f"audit.canaries.persons.documents {plan.documents}: a person's details are spread over at least "
            "2 documents (a single document is what the single-insertion canaries test)"
        )


def held_details(number: int) -> tuple[str, str]:
    """The details a person's document `number` (from 0) names: the name and one other, in turn."""
    return "name", OTHER_DETAILS[number % len(OTHER_DETAILS)]


@dataclass(frozen=True)
class CanaryPerson:
    person_id: str
    member: bool  # its coin: all its documents in training
    details: Mapping[str, str]  # by DETAIL_TYPES key
    documents: tuple[str, ...]  # the texts of its documents, in order
    source: SegmentKey | None = None  # the training segment whose row (paragraph range, split) they copy

    @property
    def unit_id(self) -> str:
        return OWN_UNIT + self.person_id

    @property
    def document_ids(self) -> list[str]:
        return [f"{self.unit_id}-{number + 1}" for number in range(len(self.documents))]

    @property
    def segments(self) -> tuple[SegmentKey, ...]:
        """Where its documents went into training (none for a non-member)."""
        if not self.member or self.source is None:
            return ()
        return tuple((doc_id, self.source[1]) for doc_id in self.document_ids)

    def document_entities(self, number: int, identifier_set: str) -> Entities:
        """The code of document `number`: the details it names that `identifier_set` codes."""
        kept = IDENTIFIER_SETS[identifier_set]
        return build_entities(
            (DETAIL_TYPES[detail][0], self.details[detail])
            for detail in held_details(number)
            if DETAIL_TYPES[detail][1] in kept
        )

    def record(self) -> dict:
        return {
            "person_id": self.person_id,
            "member": self.member,
            "details": dict(self.details),
            "documents": list(self.documents),
            "source": None if self.source is None else list(self.source),
        }

    @classmethod
    def from_record(cls, record: Mapping) -> CanaryPerson:
        source = record["source"]
        return cls(
            str(record["person_id"]),
            bool(record["member"]),
            {str(key): str(value) for key, value in record["details"].items()},
            tuple(str(text) for text in record["documents"]),
            None if source is None else (str(source[0]), int(source[1])),
        )


def read_person_design(path: str) -> PersonDesign:
    """The `persons` block of a canary design file; a missing, empty or ill-formed entry is a one-line
    error naming the file."""
    import yaml

    from plainsight.io import read_text_utf8

    spec = (yaml.safe_load(read_text_utf8(path)) or {}).get("persons")
    try:
        design = PersonDesign(
            tuple(map(str, spec["given_names"])),
            tuple(map(str, spec["surnames"])),
            tuple(map(str, spec["places"])),
            int(spec["birth_years"]["first"]),
            int(spec["birth_years"]["last"]),
            str(spec["record_number"]["prefix"]),
            int(spec["record_number"]["digits"]),
            {detail: tuple(map(str, spec["documents"][detail])) for detail in OTHER_DETAILS},
        )
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(path, "persons", f"canary persons incomplete or not a number: {error}") from None
    for key, valid in [
        ("given_names", all(design.given_names)),
        ("surnames", all(design.surnames)),
        ("places", all(design.places)),
        ("birth_years", 1 <= design.first_birth_year <= design.last_birth_year),
        ("record_number", design.record_digits >= 1),
        ("documents", all(design.sentences[detail] for detail in OTHER_DETAILS)),
    ]:
        if not valid:
            raise InputError(path, f"persons.{key}", "empty or out of range")
    placeholders = dict.fromkeys(DETAIL_TYPES, "")
    for detail, sentences in design.sentences.items():
        for sentence in sentences:
            try:
                sentence.format(**placeholders)
            except (KeyError, IndexError, ValueError) as error:
                raise InputError(path, f"persons.documents.{detail}", f"{sentence!r}: {error}") from None
            if "{name}" not in sentence or f"{{{detail}}}" not in sentence:
                raise InputError(
                    path, f"persons.documents.{detail}", f"{sentence!r} must name {{name}} and {{{detail}}}"
                )
    return design


def _birth_date(design: PersonDesign, rng) -> str:
    year = rng.randint(design.first_birth_year, design.last_birth_year)
    month = rng.randint(1, 12)
    return f"{rng.randint(1, calendar.monthrange(year, month)[1])} {calendar.month_name[month]} {year}"


def person_documents(details: Mapping[str, str], design: PersonDesign, documents: int) -> tuple[str, ...]:
    """The texts of a person's documents: document n names the person and `held_details(n)`'s other
    detail in that detail's next sentence."""
    texts = []
    for number in range(documents):
        detail = held_details(number)[1]
        sentences = design.sentences[detail]
        texts.append(sentences[(number // len(OTHER_DETAILS)) % len(sentences)].format(**details))
    return tuple(texts)


def drawn_persons(design: PersonDesign, plan: PersonPlan) -> list[CanaryPerson]:
    """The plan's persons (seeded): distinct names and record numbers, each with its coin."""
    names = [f"{given} {surname}" for given in design.given_names for surname in design.surnames]
    numbers = 10**design.record_digits
    if plan.count > min(len(set(names)), numbers):
        raise ValueError(
            f"{plan.count} canary persons need as many distinct names and record numbers; the design has "
            f"{len(set(names))} names and {numbers} numbers"
        )
    rng = stable_rng(plan.seed, "canary persons")
    chosen = rng.sample(sorted(set(names)), plan.count)
    records = rng.sample(range(numbers), plan.count)
    persons = []
    for number, (name, record, included) in enumerate(zip(chosen, records, plan.coins())):
        details = {
            "name": name,
            "birth_date": _birth_date(design, rng),
            "place": rng.choice(design.places),
            "record_number": f"{design.record_prefix}{record:0{design.record_digits}d}",
        }
        persons.append(
            CanaryPerson(
                f"p{number:03d}", included, details, person_documents(details, design, plan.documents)
            )
        )
    return persons


def placed_persons(
    persons: Sequence[CanaryPerson], training: Sequence[SegmentKey], seed: int
) -> list[CanaryPerson]:
    """Each person with a training segment (seeded, drawn for every person whatever its coin) whose
    paragraph range and row its documents take."""
    if persons and not training:
        raise ValueError("canary persons need a training segment to take their paragraph range from")
    rng = stable_rng(seed, "canary person sources")
    keys = sorted(training)
    return [replace(p, source=rng.choice(keys)) for p in persons]


def person_document_rows(persons: Sequence[CanaryPerson]) -> list[tuple[SegmentKey, dict]]:
    """The docs rows an included person adds, as (source segment, what differs from its row): a
    document of its own per text, all in the person's own unit."""
    return [
        (p.source, {"doc_id": doc_id, "unit_id": p.unit_id, "text": text})
        for p in persons
        if p.segments
        for doc_id, text in zip(p.document_ids, p.documents)
    ]


def person_code_rows(persons: Sequence[CanaryPerson], identifier_set: str) -> list[tuple[SegmentKey, dict]]:
    """The codes rows an included person adds, as `person_document_rows` gives its docs rows."""
    from plainsight.codes.control_code import entities_to_records, format_code

    rows = []
    for p in persons:
        if not p.segments:
            continue
        for number, doc_id in enumerate(p.document_ids):
            entities = p.document_entities(number, identifier_set)
            rows.append(
                (
                    p.source,
                    {
                        "doc_id": doc_id,
                        "code": format_code(entities),
                        "entities": entities_to_records(entities),
                    },
                )
            )
    return rows


def read_persons(path: str) -> list[CanaryPerson]:
    """The canary persons of a `canary_docs` record."""
    from plainsight.io import read_json

    return [CanaryPerson.from_record(p) for p in read_json(path)["persons"]]
