"""Regular-expression redaction of PII-like strings (RPSG's PII filter): e-mail addresses, URLs,
phone, card and case numbers, dates. The patterns are data (`resources/pii_patterns.yaml`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from plainsight.errors import InputError
from plainsight.io import read_text_utf8


@dataclass(frozen=True)
class PiiPatterns:
    mask: str
    patterns: tuple[tuple[str, re.Pattern], ...]  # (name, compiled), applied in order

    @classmethod
    def load(cls, path: str | Path) -> PiiPatterns:
        """The mask and the named patterns of a YAML file; a bad pattern stops naming it."""
        data = yaml.safe_load(read_text_utf8(path)) or {}
        if not isinstance(data.get("mask"), str) or not isinstance(data.get("patterns"), dict):
            raise InputError(path, None, "expected a `mask` string and a `patterns` mapping")
        compiled = []
        for name, pattern in data["patterns"].items():
            try:
                compiled.append((str(name), re.compile(str(pattern), re.IGNORECASE)))
            except re.error as err:
                raise InputError(path, f"pattern {name}", f"not a regular expression: {err}") from None
        return cls(data["mask"], tuple(compiled))

    def redact(self, text: str) -> tuple[str, int]:
        """`text` with every match of every pattern replaced by the mask, and the number of matches."""
        count = 0
        for _, pattern in self.patterns:
            text, found = pattern.subn(self.mask, text)
            count += found
        return text, count
