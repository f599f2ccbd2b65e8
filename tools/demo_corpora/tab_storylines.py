"""The twelve TAB storylines: which people, dates and amounts each case draws, in which order.

The words are in tab_storylines.yaml, one section per storyline: its paragraphs of facts, the
complaint, the Court's assessment, the domestic law, and the names and word lists it draws from.
Each function below receives its section as ``t``.

The draws happen in the order written, a paragraph's slot values (its keyword arguments) before
the choice of its wording. Changing that order changes every later document, and the shipped
corpora would no longer regenerate byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import partial

from language import PRONOUNS, count_of, duration_text, indefinite, number_words
from tab_context import STATES, WORDS, Ctx, Ent, Para, the
from texts import read_yaml


@dataclass
class Story:
    articles: list[int]
    allegation: str  # "that ...", with pronoun slots
    facts: list[Para]
    complaint: Para
    merits: Para
    domestic_law: Para
    job: str | None = None  # replaces the applicant's job where the story needs a particular one


def detention(c: Ctx, t: dict) -> Story:
    f = t["facts"]
    offence = c.misc(c.pick(WORDS["offences"]))
    co1, co2, judge = c.person(), c.person(), c.person()
    arrest = c.tl.next()
    facts = c.maybe_heading(0.5, t["headings"]["arrest"])
    facts.append(
        c.para(
            f["arrest"],
            d=c.date_ent(arrest),
            offence=offence,
            custody=c.qty(count_of(c.rng.randint(2, 12), "day")),
        )
    )
    facts.append(c.para(f["remand"], d=c.date(3, 14), judge=c.name(judge)))
    facts += c.maybe_heading(0.4, t["headings"]["trial"])
    facts.append(
        c.para(
            f["indictment"],
            d=c.date(60, 300),
            n=c.qty(number_words(c.rng.randint(3, 14))),
            co1=c.name(co1),
            co2=c.name(co2),
            offence=offence,
        )
    )
    facts.append(c.para(f["continued_detention"], n=c.qty(count_of(c.rng.randint(9, 31), "time"))))
    release = c.tl.next(200, 1400)
    sentence = c.qty(
        f"{count_of(c.rng.randint(2, 14), 'year')} and {count_of(c.rng.randint(1, 11), 'month')}'"
    )
    facts.append(c.para(f["verdict"], d=c.date_ent(release), sentence=sentence))
    length = c.qty(duration_text((release - arrest).days))
    facts.append(c.para(f["final_decision"], d=c.date(150, 600), case=c.case_no(), length=length))
    return Story(
        articles=[5, 6],
        allegation=c.pick(t["allegation"]),
        facts=facts,
        complaint=c.para(t["complaint"], length=length),
        merits=c.para(t["merits"], length=length),
        domestic_law=c.para(t["domestic_law"], months=c.qty(count_of(c.rng.choice((1, 2, 3)), "month"))),
    )


def ill_treatment(c: Ctx, t: dict) -> Story:
    f = t["facts"]
    officer, witness, doctor = c.person(), c.person(), c.person()
    injury = c.misc(c.pick(t["words"]["injuries"]), conf="HEALTH")
    hospital = c.local_org(t["names"]["hospital"])
    facts = c.maybe_heading(0.4, t["headings"]["custody"])
    facts.append(c.para(f["arrest"], d=c.date(), vehicle=c.misc(c.pick(t["words"]["vehicles"]))))
    facts.append(c.para(f["beating"], hours=c.qty(f"{c.rng.randint(18, 96)} hours"), officer=c.name(officer)))
    facts.append(
        c.para(
            f["medical_report"],
            d=c.date(1, 4),
            doctor=c.name(doctor),
            hospital=hospital,
            injury=injury,
            days=c.qty(count_of(c.rng.randint(5, 30), "day")),
        )
    )
    facts += c.maybe_heading(0.4, t["headings"]["investigation"])
    facts.append(c.para(f["criminal_complaint"], d=c.date(5, 60), witness=c.name(witness)))
    facts.append(c.para(f["discontinuation"], d=c.date(120, 500), case=c.case_no(), witness=c.name(witness)))
    facts.append(c.para(f["objection"], d=c.date(20, 120), d2=c.date(10, 60)))
    return Story(
        articles=[3, 13],
        allegation=c.pick(t["allegation"]),
        facts=facts,
        complaint=c.para(t["complaint"]),
        merits=c.para(t["merits"], injury=injury, length=c.qty(count_of(c.rng.randint(2, 5), "year"))),
        domestic_law=c.para(
            t["domestic_law"],
            years=c.qty(count_of(c.rng.randint(5, 10), "year")),
            days=c.qty(count_of(c.rng.choice((7, 14, 15)), "day")),
        ),
    )


def medical(c: Ctx, t: dict) -> Story:
    f, names = t["facts"], t["names"]
    illness = c.misc(c.pick(t["words"]["illnesses"]), conf="HEALTH")
    hospital = c.local_org(names["hospital"], city=c.other_cities[0])
    forensic = the(c.local_org(c.pick(names["forensic_institute"])))
    w1 = c.rng.randint(68, 95)
    facts = c.maybe_heading(0.4, t["headings"]["conviction"])
    facts.append(
        c.para(
            f["conviction"],
            d=c.date(),
            sentence=c.qty(count_of(c.rng.randint(4, 16), "year") + "'"),
            offence=c.misc(c.pick(WORDS["offences"])),
        )
    )
    facts.append(c.para(f["diagnosis"], d=c.date_ent(c.tl.next(60, 400), "month"), illness=illness))
    facts.append(
        c.para(
            f["hospital_report"],
            d=c.date(30, 200),
            hospital=hospital,
            w1=c.qty(f"{w1} kg"),
            w2=c.qty(f"{w1 - c.rng.randint(9, 21)} kg"),
        )
    )
    facts += c.maybe_heading(0.3, t["headings"]["release_requests"])
    facts.append(
        c.para(
            f["stay_request"],
            d=c.date(20, 120),
            forensic=forensic,
            prosecutor_cap=c.local_org(names["prosecutor"]),
        )
    )
    facts.append(
        c.para(
            f["forensic_report"],
            d=c.date(40, 200),
            d2=c.date(10, 90),
            forensic=forensic,
            prison_hospital=the(c.local_org(names["prison_hospital"], city=c.other_cities[1])),
            stay=c.qty(count_of(c.rng.randint(2, 9), "week")),
        )
    )
    facts.append(
        c.para(
            f["further_requests"], d=c.date(30, 200), d2=c.date(30, 200), sister=c.name(c.person(female=True))
        )
    )
    wait = c.qty(count_of(c.rng.randint(7, 30), "month"))
    return Story(
        articles=[3],
        allegation=c.pick(t["allegation"]),
        facts=facts,
        complaint=c.para(t["complaint"]),
        merits=c.para(t["merits"], illness=illness, wait=wait),
        domestic_law=c.para(t["domestic_law"]),
    )


def length_civil(c: Ctx, t: dict) -> Story:
    f = t["facts"]
    company, expert = c.company(), c.person()
    cause = c.misc(c.pick(t["words"]["civil_causes"]).format(**c.slots))
    start = c.tl.next()
    levels = c.rng.choice((2, 3))
    facts = c.maybe_heading(0.5, t["headings"]["proceedings"])
    facts.append(
        c.para(
            f["action"],
            d=c.date_ent(start),
            company=company,
            claim=c.money(c.rng.randint(5, 400) * 1000),
            cause=cause,
        )
    )
    hearings = c.rng.randint(9, 28)
    facts.append(
        c.para(
            f["hearings"],
            d=c.date(30, 120),
            d2=c.date(300, 900),
            n=c.qty(number_words(hearings)),
            k=c.qty(number_words(hearings // 2)),
            K=c.qty(number_words(hearings // 2).capitalize()),
        )
    )
    facts.append(
        c.para(
            f["expert"],
            d=c.date(20, 120),
            d2=c.date(150, 500),
            expert=c.name(expert),
            expert_sur=c.name(expert, "last"),
        )
    )
    facts.append(
        c.para(
            f["first_instance"],
            d=c.date(60, 300),
            award=c.money(c.rng.randint(2, 200) * 1000),
            company=company,
        )
    )
    facts += c.maybe_heading(0.4, t["headings"]["appeal"])
    facts.append(c.para(f["appeal"], d=c.date(200, 700)))
    end = c.tl.next(200, 900)
    total = c.qty(duration_text((end - start).days))
    facts.append(c.para(f["final_decision"], d=c.date_ent(end), company=company))
    return Story(
        articles=[6],
        allegation=c.pick(t["allegation"]),
        facts=facts,
        complaint=c.para(t["complaint"], company=company, total=total),
        merits=c.para(
            t["merits"], d=c.date_ent(start), d_end=c.date_ent(end), total=total, levels=number_words(levels)
        ),
        domestic_law=c.para(
            t["domestic_law"],
            year=Ent(str(c.rng.randint(2003, 2009)), "DATETIME", "NO_MASK"),
            cap=c.money(c.rng.randint(5, 20) * 1000, "NO_MASK"),
        ),
    )


def expropriation(c: Ctx, t: dict) -> Story:
    f = t["facts"]
    village = c.loc(c.surname() + c.pick(t["names"]["village_suffixes"]))
    neighbour = c.person()
    authority = ("the ", c.local_org(c.pick(t["names"]["authorities"])))
    area = c.rng.randint(900, 38000)
    facts = c.maybe_heading(0.5, t["headings"]["expropriation"])
    facts.append(
        c.para(
            f["land"],
            area=c.qty(f"{area:,} square metres"),
            village=village,
            plot=Ent(f"{c.rng.randint(1, 999)}/{c.rng.randint(1, 40)}", "CODE", "QUASI"),
        )
    )
    facts.append(
        c.para(
            f["expropriation"],
            d=c.date(),
            d2=c.date(30, 200),
            authority=authority,
            project=c.misc(c.pick(t["words"]["projects"])),
            value=c.money(area * c.rng.randint(2, 9)),
        )
    )
    facts += c.maybe_heading(0.3, t["headings"]["compensation"])
    facts.append(
        c.para(f["compensation_claim"], d=c.date(200, 700), extra=c.money(area * c.rng.randint(3, 12)))
    )
    facts.append(
        c.para(
            f["payment"],
            d=c.date(100, 400),
            d2=c.date(300, 900),
            inflation=c.qty(f"{c.rng.randint(18, 85)}%"),
        )
    )
    facts.append(c.para(f["neighbour"], d=c.date(5, 100), neighbour=c.name(neighbour), village=village))
    return Story(
        articles=[6],
        allegation=c.pick(t["allegation"]),
        facts=facts,
        complaint=c.para(t["complaint"]),
        merits=c.para(t["merits"]),
        domestic_law=c.para(t["domestic_law"], days=c.qty(count_of(c.rng.choice((30, 60, 90)), "day"))),
    )


def custody(c: Ctx, t: dict) -> Story:
    f = t["facts"]
    app = c.applicant
    c.set_age(23, 40)
    spouse = c.person(female=not app.female)
    father = spouse if app.female else app
    child = replace(c.person(), last=father.last)
    c.slots.update(sp_title=spouse.title, spouse_sur=c.name(spouse, "last"))
    social = the(c.local_org(t["names"]["social_services"], city=c.other_cities[0]))
    psych, worker = c.person(female=True), c.person()
    spouse_adj = c.pick([s.adjective for s in STATES])
    facts = c.maybe_heading(0.5, t["headings"]["background"])
    facts.append(
        c.para(
            f["marriage"],
            y=c.date_ent(c.tl.next(), "year"),
            spouse=c.name(spouse),
            a_sp=indefinite(spouse_adj),
            sp_nat=Ent(spouse_adj, "DEM", "QUASI", key="spouse-nat"),
            child=c.name(child),
            born=c.date(300, 700),
        )
    )
    facts.append(
        c.para(
            f["separation"],
            d=c.date_ent(c.tl.next(300, 1200), "month"),
            child_first=Ent(child.first, "PERSON", "DIRECT", key=child.key),
            sp_him=PRONOUNS[spouse.female]["him"],
        )
    )
    facts += c.maybe_heading(0.4, t["headings"]["proceedings"])
    facts.append(c.para(f["divorce"], d=c.date(60, 400), weeks=c.qty(count_of(c.rng.randint(2, 4), "week"))))
    facts.append(
        c.para(
            f["social_services"], d=c.date(30, 200), d2=c.date(20, 90), social=social, worker=c.name(worker)
        )
    )
    facts.append(
        c.para(
            f["enforcement"],
            d=c.date(30, 200),
            d2=c.date(200, 600),
            n=c.qty(number_words(c.rng.randint(4, 11)).capitalize()),
            n_low=c.qty(number_words(c.rng.randint(4, 11))),
            fine=c.money(c.rng.randint(2, 60) * 100),
        )
    )
    facts.append(c.para(f["psychologist"], d=c.date(60, 300), psych=c.name(psych)))
    return Story(
        articles=[8],
        allegation=c.pick(t["allegation"]),
        facts=facts,
        complaint=c.para(t["complaint"]),
        merits=c.para(t["merits"]),
        domestic_law=c.para(t["domestic_law"]),
    )


def expression(c: Ctx, t: dict) -> Story:
    f, words = t["facts"], t["words"]
    official = c.person(female=False)
    first_word, second_word = t["names"]["newspaper"]
    paper = the(Ent(f"{c.pick(first_word)} {c.pick(second_word)}", "ORG", "QUASI"))
    office = c.pick(words["offices"])
    job = c.pick(words["jobs"])
    facts = c.maybe_heading(0.5, t["headings"]["article"])
    facts.append(
        c.para(
            f["employment"],
            job=Ent(job, "DEM", "QUASI"),
            a_job=indefinite(job),
            paper=paper,
            y=c.date_ent(c.tl.next(), "year"),
        )
    )
    facts.append(
        c.para(
            f["article"],
            d=c.date(),
            paper=paper,
            headline=c.misc(c.pick(words["article_titles"])),
            office=office,
            official=c.name(official),
        )
    )
    facts += c.maybe_heading(0.4, t["headings"]["defamation"])
    facts.append(
        c.para(
            f["action"],
            d=c.date(10, 90),
            official_sur=c.name(official, "last"),
            office=office,
            claim=c.money(c.rng.randint(10, 200) * 1000),
        )
    )
    facts.append(
        c.para(
            f["judgment"],
            d=c.date(120, 500),
            award=c.money(c.rng.randint(2, 50) * 1000),
            official=c.name(official),
            paper=paper,
        )
    )
    facts.append(c.para(f["appeal"], d=c.date(100, 400)))
    facts.append(
        c.para(
            f["consequences"],
            n=c.qty(number_words(c.rng.randint(6, 24))),
            months=c.qty(count_of(c.rng.randint(8, 30), "month")),
            paper=paper,
            d=c.date(30, 200),
        )
    )
    return Story(
        articles=[10],
        allegation=c.pick(t["allegation"]),
        facts=facts,
        complaint=c.para(t["complaint"]),
        merits=c.para(t["merits"]),
        domestic_law=c.para(t["domestic_law"]),
        job=job,
    )


def non_enforcement(c: Ctx, t: dict) -> Story:
    f = t["facts"]
    # A "{surname} Coal Mine" is among the employers, so a surname is drawn whichever is picked.
    surname = c.surname()
    plant = the(c.local_org(c.pick(t["names"]["employers"]), surname=surname))
    official = c.person()
    bailiffs = the(c.local_org(t["names"]["bailiffs"]))
    facts = c.maybe_heading(0.5, t["headings"]["judgment"])
    facts.append(
        c.para(
            f["employment"],
            d=c.date_ent(c.tl.next()),
            plant=plant,
            months=c.qty(count_of(c.rng.randint(4, 18), "month")),
        )
    )
    judgment = c.tl.next(60, 400)
    facts.append(
        c.para(
            f["judgment"],
            d=c.date_ent(judgment),
            d2=c.date(10, 40),
            arrears=c.money(c.rng.randint(3, 90) * 1000),
        )
    )
    facts += c.maybe_heading(0.4, t["headings"]["enforcement"])
    facts.append(
        c.para(
            f["enforcement"],
            d=c.date(10, 60),
            bailiffs=bailiffs,
            case=c.case_no(),
            n=c.qty(number_words(c.rng.randint(2, 6))),
        )
    )
    facts.append(c.para(f["insolvency"], d=c.date(100, 500)))
    facts.append(c.para(f["reply"], d=c.date(60, 300), official=c.name(official)))
    paid = c.tl.next(300, 1600)
    total = c.qty(duration_text((paid - judgment).days))
    facts.append(c.para(f["payment"], d=c.date_ent(paid)))
    return Story(
        articles=[6],
        allegation=c.pick(t["allegation"]),
        facts=facts,
        complaint=c.para(t["complaint"], d=c.date_ent(judgment), total=total),
        merits=c.para(t["merits"], total=total),
        domestic_law=c.para(t["domestic_law"], months=c.qty(count_of(c.rng.choice((2, 6)), "month"))),
    )


def death(c: Ctx, t: dict) -> Story:
    f = t["facts"]
    c.set_age(40, 58)
    son = replace(c.person(female=False), last=c.applicant.last)
    commander, soldier = c.person(female=False), c.person(female=False)
    unit = the(Ent(c.pick(t["words"]["units"]), "ORG", "QUASI"))
    son_first = Ent(son.first, "PERSON", "DIRECT", key=son.key)
    parent = t["words"]["parent"]["female" if c.applicant.female else "male"]
    facts = c.maybe_heading(0.5, t["headings"]["death"])
    facts.append(
        c.para(
            f["conscription"],
            parent=parent,
            son=c.name(son),
            son_first=son_first,
            y=c.date_ent(c.tl.current - timedelta(days=365 * 19), "year"),
            d=c.date_ent(c.tl.next(), "month"),
            unit=unit,
        )
    )
    facts.append(
        c.para(
            f["death"],
            d=c.date(100, 500),
            son_first=son_first,
            commander=c.name(commander),
            wound=c.misc(c.pick(t["words"]["wounds"])),
        )
    )
    facts.append(
        c.para(
            f["autopsy"],
            d=c.date(1, 3),
            hospital=c.local_org(t["names"]["hospital"], city=c.other_cities[0]),
            dist=c.qty(f"{c.rng.randint(5, 50)} centimetres"),
        )
    )
    facts += c.maybe_heading(0.4, t["headings"]["investigation"])
    facts.append(
        c.para(
            f["investigation"],
            d=c.date(5, 60),
            soldier=c.name(soldier),
            n=c.qty(number_words(c.rng.randint(5, 20))),
        )
    )
    facts.append(c.para(f["discontinuation"], d=c.date(100, 400), d2=c.date(60, 300), son_first=son_first))
    facts.append(c.para(f["appeal"], d=c.date(60, 300)))
    return Story(
        articles=[2, 13],
        allegation=c.pick(t["allegation"]),
        facts=facts,
        complaint=c.para(t["complaint"], son=c.name(son)),
        merits=c.para(t["merits"]),
        domestic_law=c.para(t["domestic_law"]),
    )


def assembly(c: Ctx, t: dict) -> Story:
    """A religious service or a political demonstration, broken up by the police and fined."""
    f, words = t["facts"], t["words"]
    gathering = t["variants"]["religious_service" if c.chance(0.5) else "demonstration"]
    officer, co1 = c.person(), c.person()
    group = Ent(c.pick(gathering["groups"]), gathering["group_type"], "QUASI", conf=gathering["confidential"])
    address = c.loc(f"{c.surname()} {c.pick(words['street_kinds'])}")
    act = c.pick(words["statutes"])
    article = gathering["article"]
    facts = c.maybe_heading(0.5, t["headings"]["background"], year=c.tl.current.year + 1)
    facts.append(
        c.para(
            gathering["intro"], a_group=indefinite(group.text), group=group, y=c.date_ent(c.tl.next(), "year")
        )
    )
    facts.append(
        c.para(
            gathering["event"],
            d=c.date(),
            n=c.qty(number_words(c.rng.randint(15, 95))),
            address=address,
            topic=c.misc(c.pick(words["protest_topics"])),
        )
    )
    facts.append(
        c.para(
            f["dispersal"],
            officer=c.name(officer),
            co1=c.name(co1),
            hours=c.qty(count_of(c.rng.randint(2, 9), "hour")),
            minutes=c.qty(count_of(c.rng.randint(10, 50), "minute")),
        )
    )
    facts += c.maybe_heading(0.4, t["headings"]["proceedings"])
    facts.append(
        c.para(
            f["conviction"],
            d=c.date(10, 90),
            sec=c.rng.randint(5, 40),
            act=act,
            fine=c.money(c.rng.randint(1, 30) * 100),
        )
    )
    facts.append(c.para(f["appeal"], d=c.date(30, 200), d2=c.date(5, 40)))
    return Story(
        articles=[article, 14] if c.chance(0.3) else [article],
        allegation=c.pick(gathering["allegation"]),
        facts=facts,
        complaint=c.para(t["complaint"], art=article, what=gathering["gathering"]),
        merits=c.para(t["merits"]),
        domestic_law=c.para(
            t["domestic_law"],
            sec=c.rng.randint(3, 12),
            act=act,
            days=c.qty(count_of(c.rng.choice((3, 5, 10)), "day")),
        ),
    )


def prison_conditions(c: Ctx, t: dict) -> Story:
    f, words = t["facts"], t["words"]
    governor = c.person()
    area, inmates = c.rng.randint(8, 24), c.rng.randint(4, 14)
    prison2 = c.org(c.state.prison, city=c.other_cities[0])
    facts = c.maybe_heading(0.5, t["headings"]["conditions"])
    facts.append(
        c.para(
            f["cell"],
            d=c.date(),
            d2=c.date(300, 1100),
            area=c.qty(f"{area} square metres"),
            n=c.qty(number_words(inmates)),
        )
    )
    facts.append(
        c.para(
            f["conditions"],
            minutes=c.qty(count_of(c.rng.choice((10, 15, 20)), "minute")),
            yard=c.qty(f"{c.rng.randint(12, 40)} square metres"),
            illness=c.misc(c.pick(words["illnesses"]), conf="HEALTH"),
        )
    )
    facts.append(
        c.para(
            f["governor"],
            d=c.date(30, 300),
            governor=c.name(governor),
            area2=c.qty(f"{area + c.rng.randint(3, 10)} square metres"),
            n2=c.qty(number_words(max(2, inmates - 3))),
            rate=c.qty(f"{c.rng.randint(130, 260)}%"),
        )
    )
    facts += c.maybe_heading(0.3, t["headings"]["complaints"])
    facts.append(c.para(f["complaints"], d=c.date(20, 200), d2=c.date(20, 120)))
    facts.append(
        c.para(f["compensation_claim"], claim=c.money(c.rng.randint(5, 80) * 1000), d=c.date(100, 500))
    )
    facts.append(c.para(f["transfer"], d=c.date(30, 300), prison2=prison2))
    return Story(
        articles=[3, 13],
        allegation=c.pick(t["allegation"]),
        facts=facts,
        complaint=c.para(t["complaint"]),
        merits=c.para(t["merits"], space=c.qty(f"{c.pick(words['personal_space'])} square metres")),
        domestic_law=c.para(
            t["domestic_law"], space=c.qty(f"{c.pick(words['legal_minimum_space'])} square metres")
        ),
    )


def surveillance(c: Ctx, t: dict) -> Story:
    f, words = t["facts"], t["words"]
    company, partner = c.company(), c.person()
    w1, w2 = c.person(), c.person()
    months = c.qty(count_of(c.rng.randint(2, 9), "month"))
    offence = c.misc(c.pick(WORDS["offences"]))
    facts = c.maybe_heading(0.5, t["headings"]["interception"])
    facts.append(
        c.para(
            f["interception"], d=c.date(), phone=c.phone(), months=months, offence=offence, company=company
        )
    )
    facts.append(
        c.para(
            f["search"],
            d=c.date(30, 200),
            car=c.misc(c.pick(words["cars"])),
            plate=c.plate(),
            items=c.misc(c.pick(words["seized_items"])),
        )
    )
    facts.append(c.para(f["witnesses"], w1=c.name(w1), w2=c.name(w2)))
    facts += c.maybe_heading(0.3, t["headings"]["events"])
    facts.append(c.para(f["publication"], d=c.date(20, 200), partner=c.name(partner)))
    facts.append(c.para(f["challenge"], d=c.date(60, 300), d2=c.date(60, 400)))
    return Story(
        articles=[8, 13],
        allegation=c.pick(t["allegation"]),
        facts=facts,
        complaint=c.para(t["complaint"]),
        merits=c.para(t["merits"], months=months),
        domestic_law=c.para(t["domestic_law"]),
    )


_TEXTS = read_yaml("tab_storylines.yaml")
# In this order, documents are dealt to the storylines round-robin.
STORYLINES: tuple[Callable[[Ctx], Story], ...] = tuple(
    partial(story, t=_TEXTS[story.__name__])
    for story in (
        detention,
        ill_treatment,
        medical,
        length_civil,
        expropriation,
        custody,
        expression,
        non_enforcement,
        death,
        assembly,
        prison_conditions,
        surveillance,
    )
)
