"""`README.md` of a release bundle: its public card, the part that leaves with the data file.

It is written from what the bundle ships and what the mechanisms released, never from the private corpus
(rule `release_card`; the provenance check follows every path to it, `plainsight.audit.provenance`):
the data file itself, each mechanism's guarantee record and their composition, the config's settings and
the custodian's sign-off. The evidence computed on the private corpus (the verdict, leak counts, the
audit, the utility measures) is the custodian's part (`custodian/`, `plainsight.report.release`), which
this card names but does not quote: even the verdict is one bit read from the private corpus, outside
every mechanism, and only the custodian decides whether it leaves.

Without the verdict, the card cannot know a PASS: it says NOT FOR RELEASE until a sign-off in
`release.sign_off` accepts the texts of its data file (their SHA-256, computed here from the file).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from plainsight.methods import registry
from plainsight.report.bundle_files import CUSTODIAN_FOLDER
from plainsight.report.release_card import (
    CARD_TAGS,
    accounting_notes,
    selection_notes,
    size_category,
)
from plainsight.report.release_run import KNOWN_LIMITS, PublicBundle
from plainsight.report.sign_off import (
    SIGN_OFF_KEY,
    bundle_sign_off,
    other_texts_note,
)
from plainsight.report.summary import NOT_FOR_RELEASE
from plainsight.report.table_format import dp_notes


def file_sha256(data: bytes) -> str:
    """The SHA-256 of the data file's bytes: the `data_sha256` its audit and sign-offs name."""
    return hashlib.sha256(data).hexdigest()


def decision_section(bundle: PublicBundle, data_sha256: str) -> tuple[bool, list[str]]:
    """(stamped, lines): the custodian's decision on these texts as the sign-offs state it; NOT FOR
    RELEASE where none accepts them."""
    accepted = bundle_sign_off(bundle.sign_offs, bundle.method, data_sha256)
    custodian = f"`{CUSTODIAN_FOLDER}/`, which does not leave with this bundle"
    if accepted.accepted is not None:
        sign_off = accepted.accepted
        return False, [
            f"**Released** by {sign_off.by} on {sign_off.date} for the texts of data SHA-256 "
            f"{sign_off.data_sha256}: {sign_off.reason}",
            "",
        ]
    unsigned = (
        other_texts_note(accepted.other_texts)
        if accepted.other_texts
        else f"no custodian has signed these texts off (`{SIGN_OFF_KEY}`, data SHA-256 {data_sha256})"
    )
    return True, [
        f"**{NOT_FOR_RELEASE}.** This card is written without the privacy audit's verdict, which is read "
        f"from the private corpus and stays with the custodian ({custodian}); {unsigned}.",
        "",
    ]


def settings_section(bundle: PublicBundle, rows: Sequence[Mapping[str, Any]], data_file: str) -> list[str]:
    method = registry.method(bundle.method)
    seeds = ", ".join(map(str, sorted({row["seed"] for row in rows}))) or "none"
    return [
        "## Method and settings",
        "",
        f"- Method `{bundle.method}` ({method.family}; shows real codes: {method.shows_codes}; "
        f"blocks real values while decoding: {method.blocks_context_values}; "
        f"training: {method.training or 'none'}).",
        f"- Model: `{bundle.model}`.",
        f"- Seeds: {seeds}; {len(rows)} generations shipped.",
        "- Generation: " + ", ".join(f"{k} {v}" for k, v in bundle.generation.items()) + ".",
        f"- Data: `{data_file}`, one JSON line per generation (`text`, `fictional_code`, `method`, `seed`).",
        "",
    ]


def guarantee_section(
    dp_records: Sequence[Mapping[str, Any]], accounting: Mapping[str, Any] | None
) -> list[str]:
    """The formal guarantee, as the mechanisms' own records state it; none for a method without one."""
    selection = [record for record in dp_records if "mechanism" in record]
    trained = [record for record in dp_records if "mechanism" not in record]
    notes = [*dp_notes(trained), *selection_notes(selection), *accounting_notes(accounting)]
    if not notes:
        notes = [
            "No formal guarantee: nothing bounds what these texts reveal of the private corpus but the "
            "custodian's audit."
        ]
    return ["## Privacy guarantee", "", *notes, ""]


def public_card(
    bundle: PublicBundle,
    data: bytes,
    dp_records: Sequence[Mapping[str, Any]],
    accounting: Mapping[str, Any] | None,
    data_file: str,
) -> str:
    """README.md of a bundle whose data file holds `data` (JSON lines), with the guarantee records of its
    seeds (`dp_records`) and the composition of its mechanisms (`accounting`)."""
    rows = [json.loads(line) for line in data.decode("utf-8").splitlines()]
    stamped, decision = decision_section(bundle, file_sha256(data))
    header = {
        "license": bundle.settings.license,
        "language": list(bundle.settings.language),
        "size_categories": [size_category(len(rows))],
        "task_categories": ["text-generation"],
        "pretty_name": f"Synthetic corpus: {bundle.title}",
        "tags": [*CARD_TAGS, *(["not-for-release"] if stamped else [])],
        "configs": [{"config_name": "default", "data_files": [{"split": "train", "path": data_file}]}],
    }
    lines = [
        f"# {NOT_FOR_RELEASE}: synthetic corpus: {bundle.title}"
        if stamped
        else f"# Synthetic corpus: {bundle.title}",
        "",
        *decision,
        *settings_section(bundle, rows, data_file),
        *guarantee_section(dp_records, accounting),
        "## Known limits",
        "",
        *(f"- {limit}" for limit in KNOWN_LIMITS),
        "",
    ]
    front = "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n"
    return front + "\n" + "\n".join(lines)
