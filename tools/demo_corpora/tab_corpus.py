"""The TAB (ECHR) corpus: judgments and admissibility decisions with their annotations."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from language import PRONOUNS, count_of, indefinite
from tab_context import DOCUMENT_TEXTS, STATES, WORDS, Ctx, Ent, Para, State, join_paras
from tab_storylines import STORYLINES, Story

N_TAB_DOCS = {"train": 64, "dev": 12, "test": 12}
MIN_PARAGRAPHS = 14
TAB_CHAR_RANGE = (2000, 5000)

HEADINGS = DOCUMENT_TEXTS["headings"]
PROCEDURE = DOCUMENT_TEXTS["procedure"]
FACTS = DOCUMENT_TEXTS["facts"]
LAW = DOCUMENT_TEXTS["law"]


def build_tab_text(c: Ctx, story: Story, judgment: bool) -> Para:
    """Assemble a judgment or an admissibility decision.

    The storyline's facts were rendered first, so the events after them
    (aftermath, lodging of the application, notice) take later dates.
    """
    if story.job:
        c.slots["job"], c.slots["a_job"] = Ent(story.job, "DEM", "QUASI"), indefinite(story.job)
    aftermath = [c.para(FACTS["aftermath"], d=c.date(20, 200), d2=c.date(30, 200))] if c.chance(0.6) else []
    lodged = c.tl.next(30, 300)
    c.slots.update(
        lodged=c.date_ent(lodged),
        allegation=story.allegation.format(**PRONOUNS[c.applicant.female]),
        appno=Ent(f"{c.rng.randint(1000, 59999)}/{lodged.year % 100:02d}", "CODE", "DIRECT"),
        art=story.articles[0],
        ngo=Ent(c.pick(WORDS["ngos"]), "ORG", "QUASI"),
        children=count_of(c.rng.randint(1, 4), "child"),
    )
    paras: list[Para] = []
    if judgment:
        paras += [
            c.heading(HEADINGS["procedure"]),
            c.para(PROCEDURE["origin"]),
            c.para(PROCEDURE["representation"]),
            c.para(PROCEDURE["government"]),
        ]
        if c.chance(0.7):
            paras.append(c.para(PROCEDURE["allegation"]))
        if c.chance(0.6):
            paras.append(
                c.para(PROCEDURE["notice"], notice=c.date(100, 900), section=c.pick(WORDS["court_sections"]))
            )
        paras.append(c.heading(HEADINGS["facts"]))
        paras += c.maybe_heading(0.7, HEADINGS["circumstances"])
        paras.append(c.para(FACTS["background"]))
    else:
        paras += [
            c.heading(HEADINGS["facts"]),
            c.para(FACTS["decision_introduction"]),
            c.para(PROCEDURE["government"]),
            c.heading(HEADINGS["decision_circumstances"]),
            c.para(FACTS["decision_summary"]),
        ]
    paras += story.facts + aftermath
    if c.chance(0.45):
        paras += [c.heading(HEADINGS["domestic_law"]), story.domestic_law]
    has_complaints_section = not judgment or c.chance(0.25)
    if has_complaints_section:
        paras += [c.heading(HEADINGS["complaints"]), story.complaint]
    paras.append(c.heading(HEADINGS["law"]))
    if not judgment:
        return join_paras([*paras, c.para(LAW["decision_outcome"])])
    if c.chance(0.6):
        paras.append(c.heading(HEADINGS["violation"], article=story.articles[0]))
    # Where the complaint was already set out, THE LAW restates it briefly.
    complaint = c.para(LAW["restatement"]) if has_complaints_section else story.complaint
    paras += [complaint, c.para(LAW["government_position"]), c.para(LAW["admissibility"]), story.merits]
    if c.chance(0.5):
        claim = c.rng.randint(5, 90) * 1000
        paras += [
            c.heading(HEADINGS["just_satisfaction"]),
            c.para(
                LAW["damages"],
                claim=c.qty(f"EUR {claim:,}"),
                award=c.qty(f"EUR {claim // c.rng.randint(2, 6):,}"),
            ),
        ]
        if c.chance(0.5):
            costs = c.rng.randint(15, 120) * 100
            paras.append(
                c.para(LAW["costs"], costs=c.qty(f"EUR {costs:,}"), award=c.qty(f"EUR {costs // 2:,}"))
            )
    return join_paras(paras)


# ---------------------------------------------------------------------------
# Annotations
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
    return [
        Mention(
            s,
            e,
            ent.etype,
            ent.ident,
            ent.conf,
            ent.key,
            ent.related,
            rng.choices(("check", "insert", "correct"), (0.8, 0.14, 0.06))[0],
        )
        for s, e, ent in sorted(doc.spans, key=lambda x: (x[0], x[1]))
    ]


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
        records.append(
            {
                "entity_type": m.etype,
                "entity_mention_id": mention_id,
                "start_offset": m.start,
                "end_offset": m.end,
                "span_text": text[m.start : m.end],
                "edit_type": m.edit_type,
                "identifier_type": m.ident,
                "entity_id": entity_id,
                "confidential_status": m.conf,
            }
        )
    for record, m in zip(records, mentions):
        targets = mention_ids_by_key.get(m.related or "", [])
        if targets and rng.random() < 0.8:
            record["related_mentions"] = targets[:1]
    return {"entity_mentions": records}


# ---------------------------------------------------------------------------
# Documents and corpus
# ---------------------------------------------------------------------------


def validate_tab_text(doc: Para) -> bool:
    """Length and paragraph count in range, and a direct identifier both in paragraphs 1-5 and 6-11."""
    paragraphs = doc.text.split("\n\n")
    if len(paragraphs) < MIN_PARAGRAPHS or not TAB_CHAR_RANGE[0] <= len(doc.text) <= TAB_CHAR_RANGE[1]:
        return False
    starts = [0]
    for p in paragraphs[:-1]:
        starts.append(starts[-1] + len(p) + 2)
    direct_paras = {
        sum(1 for st in starts if st <= s) - 1 for s, _, ent in doc.spans if ent.ident == "DIRECT"
    }
    return bool(direct_paras & set(range(1, 6))) and bool(direct_paras & set(range(6, 12)))


def make_tab_document(
    rng: random.Random, doc_id: str, split: str, story_fn, state: State, checked: bool
) -> dict:
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
        "meta": {
            "year": year,
            "legal_branch": branch,
            "articles": story.articles,
            "countries": state.code,
            "applicant": c.applicant.full,
        },
        "task": f"Task: Annotate the document to anonymise the following person: {c.applicant.full}",
        "quality_checked": [f"annotator{c.rng.choice(annotators)}"] if checked else [],
        "annotations": {
            f"annotator{n}": annotation_json(doc_id, text.text, n, m, c.rng)
            for n, m in zip(annotators, versions)
        },
    }


def make_tab_corpus(rng: random.Random, documents: Mapping[str, int] = N_TAB_DOCS) -> dict[str, list[dict]]:
    """`documents[split]` documents per split, drawn in the order train, dev, test whatever the
    mapping's order, so that the same sizes give the same corpus."""
    total = sum(documents[split] for split in N_TAB_DOCS)
    doc_numbers = sorted(rng.sample(range(90001, 99999), total))
    slots = [
        (STORYLINES[i % len(STORYLINES)], STATES[(i * 7 + i // len(STATES)) % len(STATES)])
        for i in range(total)
    ]
    rng.shuffle(slots)
    corpus, i = {}, 0
    for split in N_TAB_DOCS:
        corpus[split] = []
        for k in range(documents[split]):
            story_fn, state = slots[i]
            # train: a third quality-checked; dev/test: all but every fourth document
            checked = k % 3 == 0 if split == "train" else k % 4 != 3
            corpus[split].append(
                make_tab_document(rng, f"001-{doc_numbers[i]}", split, story_fn, state, checked)
            )
            i += 1
    return corpus


def write_tab_corpus(corpus: dict[str, list[dict]], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for split, docs in corpus.items():
        with open(out_dir / f"echr_{split}.json", "w", encoding="utf-8", newline="\n") as fh:
            json.dump(docs, fh, ensure_ascii=False, indent=2)
            fh.write("\n")
