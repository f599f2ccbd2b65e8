"""Sign-offs: who accepted a method's release bundle although its verdict is not PASS, why, when, and for
which texts. `release.sign_off` lists them, one per method and bundle; each holds the SHA-256 of the
data file it accepted (`data_sha256` of the bundle's custodian/verdict.json), so that texts generated
later are not covered by it: a bundle whose texts differ from every sign-off of its method says NOT FOR
RELEASE again, and why. The public card, written without the verdict, says NOT FOR RELEASE until a
sign-off accepts its texts, whatever the verdict: the sign-off is the custodian's decision to release.

    python -m plainsight.report.sign_off results/release/{dataset}/{setting}/{idset}/{method} \\
        --by "J. Doe, data custodian" --reason "only for the internal pilot"

prints the entry to add under `release.sign_off` in the config overlay, with the method and data hash
read from the bundle's custodian/verdict.json and today's date; rebuilding the bundle then records it.
"""

from __future__ import annotations

import argparse
import datetime
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from plainsight.io import read_json
from plainsight.report.bundle_files import CUSTODIAN_FOLDER

SIGN_OFF_KEY = "release.sign_off"
SIGN_OFF_FIELDS = ("method", "by", "reason", "date", "data_sha256")
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class SignOff:
    """One method's bundle accepted by `by` on `date` (ISO, YYYY-MM-DD) for `reason`: the bundle whose
    data file has SHA-256 `data_sha256`."""

    method: str
    by: str
    reason: str
    date: str
    data_sha256: str

    def record(self) -> dict[str, str]:
        """As verdict.json records it."""
        return asdict(self)


def _date(value: Any, where: str) -> str:
    """An ISO date; YAML reads an unquoted 2026-11-28 as a date, a quoted one as text."""
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value.isoformat()
    try:
        return datetime.date.fromisoformat(str(value)).isoformat()
    except ValueError:
        raise ValueError(f"{where}.date: {value!r} is not a date (YYYY-MM-DD)") from None


def read_sign_off(entry: Any, where: str) -> SignOff:
    """One sign-off entry; a one-line error naming `where` and the key for a missing or malformed one."""
    if not isinstance(entry, Mapping):
        raise ValueError(f"{where}: a sign-off is a mapping of {', '.join(SIGN_OFF_FIELDS)}, not {entry!r}")
    unknown = sorted(set(map(str, entry)) - set(SIGN_OFF_FIELDS))
    if unknown:
        raise ValueError(
            f"{where}: unknown key(s) {', '.join(unknown)}; a sign-off has {', '.join(SIGN_OFF_FIELDS)}"
        )
    for key in SIGN_OFF_FIELDS:
        if entry.get(key) is None or not str(entry[key]).strip():
            raise ValueError(f"{where}.{key}: missing (a sign-off names {', '.join(SIGN_OFF_FIELDS)})")
    sha = str(entry["data_sha256"]).strip()
    if not _SHA256.fullmatch(sha):
        raise ValueError(
            f"{where}.data_sha256: {sha!r} is not a SHA-256 (64 lower-case hex digits, as in verdict.json)"
        )
    return SignOff(
        str(entry["method"]).strip(),
        str(entry["by"]).strip(),
        str(entry["reason"]).strip(),
        _date(entry["date"], where),
        sha,
    )


def read_sign_offs(entries: Sequence[Any] | None, source: str = SIGN_OFF_KEY) -> tuple[SignOff, ...]:
    """Every sign-off of `source` (config `release.sign_off`: a list, or null for none)."""
    if entries is None:
        return ()
    if isinstance(entries, Mapping) or not isinstance(entries, Sequence):
        raise ValueError(f"{source}: a list of sign-offs, one per method and bundle, not {entries!r}")
    return tuple(read_sign_off(entry, f"{source}[{number}]") for number, entry in enumerate(entries))


@dataclass(frozen=True)
class BundleSignOff:
    """The sign-offs of one bundle: the one for its texts (None: none), and its method's others."""

    accepted: SignOff | None
    other_texts: tuple[SignOff, ...]


UNSIGNED = BundleSignOff(None, ())  # no sign-off of the method at all


def bundle_sign_off(sign_offs: Sequence[SignOff], method: str, data_sha256: str | None) -> BundleSignOff:
    """Which of `sign_offs` covers the bundle of `method` whose data file has `data_sha256` (the latest
    where several do), and which of the method's are for other texts."""
    own = [sign_off for sign_off in sign_offs if sign_off.method == method]
    matching = [sign_off for sign_off in own if data_sha256 and sign_off.data_sha256 == data_sha256]
    latest = max(matching, key=lambda sign_off: sign_off.date, default=None)
    return BundleSignOff(latest, tuple(sign_off for sign_off in own if sign_off not in matching))


def other_texts_note(others: Sequence[SignOff]) -> str:
    """Why the sign-offs of a method do not cover this bundle: they accepted other texts."""
    accepted = "; ".join(
        f"by {sign_off.by} on {sign_off.date} for data SHA-256 {sign_off.data_sha256}" for sign_off in others
    )
    return (
        f"the sign-off of this method ({accepted}) is for other texts: these were generated or filtered "
        "since, and need a sign-off of their own"
    )


def sign_off_entry(
    verdict: Mapping[str, Any], by: str, reason: str, date: datetime.date, source: str = "verdict.json"
) -> dict[str, str]:
    """The `release.sign_off` entry accepting the bundle whose verdict.json (at `source`) is `verdict`."""
    entry = {
        "method": verdict.get("method"),
        "by": by,
        "reason": reason,
        "date": date.isoformat(),
        "data_sha256": verdict.get("data_sha256"),
    }
    return read_sign_off(entry, source).record()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Print the release.sign_off entry that accepts a release bundle's texts."
    )
    parser.add_argument("bundle", type=Path, help="the bundle's folder (results/release/.../{method})")
    parser.add_argument("--by", required=True, help="who accepts it (a name and a role)")
    parser.add_argument(
        "--reason", required=True, help="why it may leave (the verdict, or why although it is not PASS)"
    )
    parser.add_argument("--date", type=datetime.date.fromisoformat, default=datetime.date.today())
    args = parser.parse_args(argv)
    verdict = args.bundle / CUSTODIAN_FOLDER / "verdict.json"
    entry = sign_off_entry(read_json(verdict), args.by, args.reason, args.date, str(verdict))
    print(f"# add under {SIGN_OFF_KEY} in your config overlay, then rebuild the bundle")
    print(yaml.safe_dump([entry], sort_keys=False, allow_unicode=True, default_style=None), end="")


if __name__ == "__main__":
    main()
