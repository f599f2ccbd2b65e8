"""The social-services case notes demo corpus, in the generic format (one JSON object a line).

Every client has two or three notes (the client is the privacy unit: `unit_id`), one service area
(`label`) and a district (`group`). Spans are character offsets with the corpus's own labels
(CLIENT, CASE_NUMBER, ...), as an annotation tool would export them.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from faker import Faker
from fictional_pools import fictional_pool_terms
from texts import read_yaml

SPEC = read_yaml("casenotes.yaml")
SLOT = re.compile(r"\{(\w+)\}")
PARAGRAPH_ORDER = (
    "opening",
    "background",
    "situation",
    "household",
    "finances",
    "actions",
    "views",
    "plan",
    "closing",
)
FILE_NAME = "casenotes.jsonl"


@dataclass(frozen=True)
class Client:
    unit_id: str
    name: str
    short: str
    label: str
    district: str
    split: str
    birth: date
    address: str
    town: str
    agency: str
    case_no: str


def unused_name(fake: Faker, forbidden: set[str], taken: set[str]) -> tuple[str, str, str]:
    """(first, last, title) of a person whose words are in no fictional pool and not used before."""
    while True:
        title = fake.random_element(["Mr", "Ms", "Mrs"])
        first = fake.first_name_male() if title == "Mr" else fake.first_name_female()
        last = fake.last_name()
        if not {first, last} & forbidden and f"{first} {last}" not in taken:
            taken.add(f"{first} {last}")
            return first, last, title


def make_clients(rng: random.Random, fake: Faker, forbidden: set[str]) -> list[Client]:
    splits = [split for split, count in SPEC["splits"].items() for _ in range(count)]
    taken: set[str] = set()
    clients = []
    for number, split in enumerate(splits, start=1):
        first, last, title = unused_name(fake, forbidden, taken)
        label = rng.choice(sorted(SPEC["labels"]))
        birth = date(1935, 1, 1) + timedelta(days=rng.randrange(365 * 70))
        clients.append(
            Client(
                f"client-{number:03d}",
                f"{first} {last}",
                f"{title} {last}",
                label,
                rng.choice(SPEC["districts"]),
                split,
                birth,
                f"{rng.randint(1, 180)} {rng.choice(SPEC['streets'])}",
                rng.choice(SPEC["towns"]),
                rng.choice(SPEC["agencies"][label]),
                f"SC-{rng.randint(10000, 99999)}",
            )
        )
    return clients


def render(template: str, values: dict[str, str], start: int) -> tuple[str, list[dict]]:
    """The filled paragraph and the spans of its slots, offsets counted from `start`."""
    out, spans, position = [], [], start
    for index, piece in enumerate(SLOT.split(template)):
        text = values[piece] if index % 2 else piece
        if index % 2:
            spans.append({"start": position, "end": position + len(text), "label": SPEC["spans"][piece]})
        out.append(text)
        position += len(text)
    return "".join(out), spans


def note_values(client: Client, visit: date, worker: str, rng: random.Random) -> dict[str, str]:
    age = (visit - client.birth).days // 365
    return {
        "client": client.name,
        "client_short": client.short,
        "worker": worker,
        "case_no": client.case_no,
        "date": _long_date(visit),
        "review_date": _long_date(visit + timedelta(days=28)),
        "birth_date": client.birth.strftime("%d/%m/%Y"),
        "address": client.address,
        "town": client.town,
        "agency": client.agency,
        "age": str(age),
        "amount": f"£{rng.randint(12, 480) * 5:,}",
    }


def _long_date(day: date) -> str:
    return f"{day.day} {day.strftime('%B')} {day.year}"


def make_note(client: Client, number: int, visit: date, worker: str, rng: random.Random) -> dict:
    values = note_values(client, visit, worker, rng)
    paragraphs, spans, position = [], [], 0
    for kind in PARAGRAPH_ORDER:
        options = SPEC["paragraphs"][kind]
        options = options[client.label] if isinstance(options, dict) else options
        text, found = render(rng.choice(options), values, position)
        paragraphs.append(text)
        spans.extend(found)
        position += len(text) + 2
    return {
        "doc_id": f"{client.unit_id}-note{number}",
        "unit_id": client.unit_id,
        "split": client.split,
        "label": SPEC["labels"][client.label],
        "group": client.district,
        "text": "\n\n".join(paragraphs),
        "spans": spans,
    }


def make_casenotes(rng: random.Random, seed: int) -> list[dict]:
    fake = Faker("en_GB")
    fake.seed_instance(seed)
    forbidden = set(fictional_pool_terms())
    workers = [" ".join(unused_name(fake, forbidden, set())[:2]) for _ in range(SPEC["workers"])]
    notes = []
    for index, client in enumerate(make_clients(rng, fake, forbidden)):
        visit = date(2019, 1, 1) + timedelta(days=rng.randrange(365 * 4))
        worker = rng.choice(workers)
        for number in range(1, 2 + (index % 3 != 0) + 1):
            notes.append(make_note(client, number, visit, worker, rng))
            visit += timedelta(days=rng.randint(14, 90))
    return notes


def write_casenotes(notes: list[dict], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(note, ensure_ascii=False) + "\n" for note in notes]
    (out_dir / FILE_NAME).write_text("".join(lines), encoding="utf-8")
