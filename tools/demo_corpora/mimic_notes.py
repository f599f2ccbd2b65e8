"""The four MIMIC-III note categories: what each note draws, in which order.

The layouts and wording are in mimic_notes.yaml. Each builder first draws a few parts (the
discharge summary's exam, history, course and follow-up lines; the nursing note's systems), then
fills its layout with keyword arguments, which Python evaluates from left to right, so the other
draws follow the layout. Changing that order changes every later note, and the shipped corpus
would no longer regenerate byte for byte.
"""

from __future__ import annotations

from datetime import timedelta

from mimic_context import CHRONIC_PROBLEMS, NOTES, NoteCtx, vitals

DISCHARGE = NOTES["discharge_summary"]
RADIOLOGY = NOTES["radiology"]
NURSING = NOTES["nursing"]
PHYSICIAN = NOTES["physician"]


def numbered(items: list[str]) -> str:
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, 1))


def paragraphs(text: str) -> list[str]:
    return text.split("\n\n")


def discharge_summary(n: NoteCtx) -> tuple[str, list[str]]:
    adm, cond, phi, rng = n.adm, n.adm.condition, n.phi, n.rng
    chronic = [CHRONIC_PROBLEMS[c] for c in adm.chronic]
    disposition = n.pick(DISCHARGE["dispositions"])
    abnormal = [n.fill(line) for line in rng.sample(cond.exam, k=min(2, len(cond.exam)))]
    # A system's normal finding is drawn only where the condition has no abnormal one.
    exam_lines = (
        [vitals(rng)]
        + [
            next((a for a in abnormal if a.startswith(system + ":")), None) or f"{system}: {n.pick(options)}"
            for system, options in NOTES["normal_exam"].items()
        ]
        + [a for a in abnormal if a.split(":")[0] not in NOTES["normal_exam"]]
    )
    history = [
        f"- {name}" + (n.fill(DISCHARGE["diagnosed"]) if i == 0 and rng.random() < 0.5 else "")
        for i, name in enumerate(adm.chronic)
    ]
    sex = "female" if adm.female else "male"
    history += [
        "- "
        + n.fill(
            surgery["text"],
            y=phi.year(adm.admit.year - rng.randint(2, 30)),
            hosp=phi.tag("Hospital", hi=9999),
        )
        for surgery in rng.sample(DISCHARGE["surgical_history"], rng.randint(0, 2))
        if surgery.get("only") in (None, sex)
    ]
    course = [n.fill(n.pick(alternatives)) for alternatives in cond.course] + [
        n.fill(n.pick(problem["course"])) for problem in chronic[:3]
    ]
    appointment = n.fill(
        DISCHARGE["appointment"],
        provider_first=phi.tag("First Name8 (NamePattern2)"),
        provider_last=phi.tag("Last Name (NamePattern1)"),
        date=phi.date(adm.discharge + timedelta(days=rng.randint(5, 20))),
        hour=rng.randint(8, 16),
        minute=n.pick(("00", "15", "30", "45")),
    )
    follow_up = n.choose(
        DISCHARGE["follow_up"],
        follow_up_hospital=phi.tag("Hospital", hi=9999),
        follow_up_phone=phi.tag("Telephone/Fax (1)"),
        in_two_weeks=phi.month_day(adm.discharge + timedelta(days=14)),
    )
    medications = [problem["medication"] for problem in chronic]
    facility = f"\n\n{n.fill(disposition['facility'])}" if "facility" in disposition else ""
    note = n.fill(
        DISCHARGE["layout"],
        admit=phi.date(adm.admit),
        discharge=phi.date(adm.discharge),
        dob=phi.date(adm.dob),
        service=cond.service,
        allergies=n.pick(NOTES["allergies"]),
        attending=phi.tag("First Name3 (LF)"),
        complaint=n.pick(cond.complaints),
        procedure=n.pick(cond.procedures),
        hpi=n.fill(n.pick(cond.hpi)),
        past_history="\n".join(history),
        social_history=n.fill(n.pick(DISCHARGE["social_history"])),
        family_history=n.fill(n.pick(DISCHARGE["family_history"])),
        exam="\n".join(exam_lines),
        admission_labs=n.labs(adm.admit, True),
        studies="\n\n".join(n.fill(s) for s in cond.studies),
        discharge_labs=n.labs(adm.discharge, False),
        course_summary=n.fill(n.pick(DISCHARGE["course_summary"]), cc=n.pick(cond.complaints)),
        course="\n\n".join(course),
        admission_medications=numbered(medications),
        discharge_medications=numbered(medications + cond.meds),
        disposition=disposition["disposition"] + facility,
        primary_diagnoses="\n".join(rng.sample(cond.diagnoses, k=min(2, len(cond.diagnoses)))),
        secondary_diagnoses="\n".join(adm.chronic),
        discharge_condition=n.pick(DISCHARGE["discharge_conditions"]),
        instructions=cond.instructions,
        general_instructions=n.pick(DISCHARGE["general_instructions"]),
        contact=n.fill(n.pick(DISCHARGE["contact"])),
        appointment=appointment,
        follow_up=follow_up,
        signer_first=phi.tag("First Name11 (Name Pattern1)", blank=0.5),
        signer_last=phi.tag("Last Name (NamePattern4)", hi=9999),
        md_number=phi.tag("MD Number(1)", hi=9999),
        completed=phi.date(adm.discharge + timedelta(days=rng.randint(0, 6))),
    )
    return DISCHARGE["description"], paragraphs(note)


def radiology_report(n: NoteCtx) -> tuple[str, list[str]]:
    adm, cond, phi, rng = n.adm, n.adm.condition, n.phi, n.rng
    exam = RADIOLOGY["exams"][n.pick(cond.radiology)]
    when = adm.admit + timedelta(days=rng.randint(0, max(0, (adm.discharge - adm.admit).days - 1)))
    # {heart}, {finding_lung}, ...: the condition's own finding where it has one, else a generic one
    findings = {
        slot: n.fill(n.pick(by_condition.get(cond.key, by_condition["*"])))
        for slot, by_condition in RADIOLOGY["findings"].items()
    }
    findings.update({slot.capitalize(): text[0].upper() + text[1:] for slot, text in list(findings.items())})
    clock = f"{rng.randint(1, 12)}:{rng.randint(0, 59):02d} {n.pick(('AM', 'PM'))}"
    note = n.fill(
        RADIOLOGY["layout"],
        date=phi.date(when),
        clock=clock,
        title=exam["title"],
        clip=phi.tag("Clip Number (Radiology)"),
        reason=exam["reason"],
        diagnosis=cond.diagnoses[0].upper(),
        unit_number=phi.tag("Unit Number", hi=99999),
        referrer_first=phi.tag("First Name8 (NamePattern2)", blank=0.3),
        referrer_last=phi.tag("Last Name (NamePattern1)"),
        hospital=phi.tag("Hospital", hi=9999),
        diagnosis_lower=cond.diagnoses[0].lower(),
        reason_remark=n.choose(RADIOLOGY["reason_remarks"], pager=phi.tag("Pager number", hi=999)),
        contrast_remark=n.choose(
            RADIOLOGY["contrast_remarks"],
            reader=phi.doctor(),
            clock=clock,
            pager=phi.tag("Pager number", hi=999),
        ),
        job=phi.tag("Job Number", hi=99999),
        indication=exam["reason"].capitalize(),
        comparison=n.choose(
            RADIOLOGY["comparisons"],
            earlier=phi.date(when - timedelta(days=rng.randint(30, 900))),
            outside_date=phi.date(when - timedelta(days=rng.randint(1, 5))),
        ),
        technique=n.fill(exam["technique"], **findings),
        mrn=phi.tag("Medical Record Number"),
        findings="\n\n".join(n.fill(finding, **findings) for finding in exam["findings"]),
        impression=n.fill(exam["impression"], **findings),
        discussed_with=phi.doctor(),
        attending_first=phi.tag("First Name (STitle)", hi=9999),
        attending_last=phi.tag("Doctor Last Name", hi=9999),
        resident_first=phi.tag("First Name8 (NamePattern2)", blank=0.5),
        resident_last=phi.tag("Last Name (NamePattern1)"),
        approver=phi.tag("Doctor First Name", blank=0.7),
        approved=phi.date(when + timedelta(days=1)),
        approved_minute=rng.randint(10, 59),
    )
    return exam["title"], paragraphs(note)


def nursing_note(n: NoteCtx) -> tuple[str, list[str]]:
    cond, phi = n.adm.condition, n.phi
    n.slots["rhythm"] = "AF" if cond.key == "afib" else n.pick(NURSING["rhythms"])
    shift = n.pick(NURSING["shifts"])
    systems = {
        system: n.fill(
            n.pick(options),
            doctor=phi.doctor(),
            family_member=phi.relative(),
            rn=phi.tag("First Name (Titles)", hi=9999, blank=0.5),
        )
        for system, options in NURSING["systems"].items()
    }
    social = n.choose(
        NURSING["social"],
        visitor=phi.relative(),
        contact_phone=phi.tag("Telephone/Fax (1)"),
        daughter=phi.relative(),
    )
    # The systems and the social line were drawn above, before the rest of the note.
    note = n.fill(
        NURSING["layout"],
        shift=shift,
        diagnosis_lower=cond.diagnoses[0].lower(),
        events=n.choose(NURSING["events"], doctor=phi.doctor(), responder=phi.doctor()),
        diagnosis=cond.diagnoses[0],
        focus_exam=n.fill(n.pick(cond.exam)),
        doctor=phi.doctor(),
        response=n.pick(NURSING["responses"]),
        **systems,
        social=social,
        code_status=n.pick(NURSING["code_status"]),
        plan=n.pick(NURSING["plan"]),
        nurse_first=phi.tag("First Name8 (NamePattern2)", blank=0.3),
        nurse_last=phi.tag("Last Name (NamePattern1)"),
    )
    return NURSING["description"], paragraphs(note)


def physician_note(n: NoteCtx) -> tuple[str, list[str]]:
    adm, cond, phi = n.adm, n.adm.condition, n.phi
    day = adm.admit + timedelta(days=1)
    course = [n.fill(n.pick(alternatives)) for alternatives in cond.course]
    note = n.fill(
        PHYSICIAN["layout"],
        complaint=n.pick(cond.complaints),
        events=n.choose(
            PHYSICIAN["events"],
            doctor=phi.doctor(),
            attending_initials=phi.tag("Initials (NamePattern4)", blank=0.7),
            attending_last=phi.tag("Last Name (NamePattern4)", hi=9999),
            consultant=phi.doctor(),
            pager=phi.tag("Pager number", hi=999),
        ),
        allergies=n.pick(NOTES["allergies"]),
        antibiotic=n.pick(PHYSICIAN["antibiotics"]),
        day=phi.date(day),
        infusion=n.pick(PHYSICIAN["infusions"]),
        admit=phi.date(adm.admit),
        icu_medication=n.pick(PHYSICIAN["icu_medications"]),
        informant=phi.relative(),
        vitals=vitals(n.rng),
        exam="\n".join(n.fill(line) for line in cond.exam),
        labs=n.labs(day, True),
        diagnosis_lower=cond.diagnoses[0].lower(),
        course="\n\n".join(course),
        nutrition=n.pick(PHYSICIAN["nutrition"]),
        line=n.pick(PHYSICIAN["lines"]),
        code_status=n.pick(PHYSICIAN["code_status"]),
        addendum_by=phi.doctor(),
        md_number=phi.tag("MD Number(3)", hi=999),
    )
    return PHYSICIAN["description"], paragraphs(note)


NOTE_BUILDERS = {
    "Discharge summary": discharge_summary,
    "Radiology": radiology_report,
    "Nursing": nursing_note,
    "Physician ": physician_note,
}
