"""The MIMIC-III corpus: clinical notes in the format of NOTEEVENTS.csv."""

from __future__ import annotations

import csv
import random
import re
from datetime import date, timedelta
from pathlib import Path

from mimic_context import CHRONIC_PROBLEMS, CONDITIONS, MALE_ONLY_PROBLEMS, Admission, NoteCtx
from mimic_notes import NOTE_BUILDERS

N_MIMIC_NOTES = {"Discharge summary": 48, "Radiology": 8, "Nursing": 6, "Physician ": 4}
MIN_PARAGRAPHS = 14
MIMIC_HEADER = (
    "ROW_ID",
    "SUBJECT_ID",
    "HADM_ID",
    "CHARTDATE",
    "CHARTTIME",
    "STORETIME",
    "CATEGORY",
    "DESCRIPTION",
    "CGID",
    "ISERROR",
    "TEXT",
)

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
        age = (
            rng.choice((rng.randint(42, 89), rng.randint(55, 89), rng.randint(90, 96)))
            if rng.random() < 0.9
            else rng.randint(22, 40)
        )
        dob = admit - timedelta(days=365 * age + rng.randint(1, 360))
        admissions.append(
            Admission(
                subject_id=subjects[i],
                hadm_id=hadms[i],
                admit=admit,
                discharge=admit + timedelta(days=rng.randint(5, 12)),
                dob=dob,
                female=rng.random() < 0.45,
                condition=CONDITIONS[i % len(CONDITIONS)],
                chronic=[],
                seed=rng.randrange(2**31),
            )
        )
        adm = admissions[-1]
        allowed = sorted(p for p in CHRONIC_PROBLEMS if not (adm.female and p in MALE_ONLY_PROBLEMS))
        # At least one chronic problem: the notes' past history and "{pmh_short}" are never empty.
        adm.chronic = rng.sample(allowed, rng.randint(1, 4))
    return admissions


def make_mimic_notes(rng: random.Random) -> list[dict]:
    admissions = make_admissions(rng, N_MIMIC_NOTES["Discharge summary"])
    jobs = [("Discharge summary", adm) for adm in admissions]
    for category, count in list(N_MIMIC_NOTES.items())[1:]:
        jobs += [(category, adm) for adm in rng.sample(admissions, count)]
    row_ids = sorted(rng.sample(range(1, 2_000_000), len(jobs)))
    rows = []
    for row_id, (category, adm) in zip(row_ids, jobs):
        n = NoteCtx(adm, random.Random(adm.seed + len(category) + row_id))
        description, paras = NOTE_BUILDERS[category](n)
        chart_time = store_time = cgid = ""
        if category == "Discharge summary":
            chart_date = adm.discharge
        else:
            chart_date = adm.admit + timedelta(days=n.rng.randint(0, (adm.discharge - adm.admit).days - 1))
            chart_time = f"{chart_date.isoformat()} {n.rng.randint(0, 23):02d}:{n.rng.randint(0, 59):02d}:00"
            if category != "Radiology":
                store_time = chart_time[:-5] + "59:00"
                cgid = str(n.rng.randint(14000, 21000))
        validate_note(paras)
        rows.append(
            {
                "ROW_ID": row_id,
                "SUBJECT_ID": adm.subject_id,
                "HADM_ID": adm.hadm_id,
                "CHARTDATE": chart_date.isoformat(),
                "CHARTTIME": chart_time,
                "STORETIME": store_time,
                "CATEGORY": category,
                "DESCRIPTION": description,
                "CGID": cgid,
                "ISERROR": "",
                "TEXT": "\n\n".join(paras) + "\n",
            }
        )
    return rows


def write_mimic_notes(rows: list[dict], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / "NOTEEVENTS.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=MIMIC_HEADER, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
