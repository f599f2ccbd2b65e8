"""Unknown setting: private values found by Presidio instead of gold annotations."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Detection:
    start: int
    end: int
    presidio_type: str
    score: float


@dataclass(frozen=True)
class EntityMap:
    spacy_labels: dict[str, str]
    presidio_to_tab: dict[str, tuple[str, str]]
    patterns: tuple[dict, ...]

    @classmethod
    def from_yaml(cls, path: str | Path) -> EntityMap:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        return cls(
            data["spacy_labels"],
            {k: tuple(v) for k, v in data["presidio_to_tab"].items()},
            tuple(data.get("patterns", [])),
        )


def resolve_overlaps(detections: Iterable[Detection]) -> list[Detection]:
    """Keep the best of overlapping detections: highest score, then longest, then earliest."""
    ranked = sorted(detections, key=lambda d: (-d.score, -(d.end - d.start), d.start))
    kept: list[Detection] = []
    for candidate in ranked:
        if all(candidate.end <= k.start or candidate.start >= k.end for k in kept):
            kept.append(candidate)
    return sorted(kept, key=lambda d: d.start)


def extra_patterns(entity_map: EntityMap, names: Sequence[str]) -> list[dict]:
    """The map's pattern recognizers named in `names` (`codes.presidio.extra_recognizers`); an
    unknown name is an error listing the known ones."""
    known = {spec["name"]: spec for spec in entity_map.patterns}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(
            f"unknown Presidio recognizer(s) {', '.join(unknown)} in codes.presidio.extra_recognizers: "
            f"known are {', '.join(known) or 'none'}"
        )
    return [known[name] for name in names]


def build_analyzer(spacy_model: str, entity_map: EntityMap, extra_recognizers: Sequence[str] = ()):
    """A Presidio analyzer on the given spaCy pipeline, with the map's label mapping, and of the
    map's own pattern recognizers those named in `extra_recognizers` (none: Presidio as it ships,
    as the paper used it)."""
    from presidio_analyzer import AnalyzerEngine, Pattern, PatternRecognizer, RecognizerRegistry
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    # The e-mail and URL recognizers ask tldextract for a fresh public-suffix list
    # on first use; offline that fails loudly and it falls back to its bundled copy.
    logging.getLogger("tldextract").setLevel(logging.CRITICAL)
    nlp_configuration = {
        "nlp_engine_name": "spacy",
        "models": [{"lang_code": "en", "model_name": spacy_model}],
        "ner_model_configuration": {
            "model_to_presidio_entity_mapping": entity_map.spacy_labels,
            "low_score_entity_names": [],
            "labels_to_ignore": [],
        },
    }
    nlp_engine = NlpEngineProvider(nlp_configuration=nlp_configuration).create_engine()
    registry = RecognizerRegistry(supported_languages=["en"])
    registry.load_predefined_recognizers(nlp_engine=nlp_engine, languages=["en"])
    for spec in extra_patterns(entity_map, extra_recognizers):
        pattern = Pattern(name=spec["name"], regex=spec["regex"], score=spec["score"])
        registry.add_recognizer(PatternRecognizer(supported_entity=spec["entity"], patterns=[pattern]))
    return AnalyzerEngine(nlp_engine=nlp_engine, registry=registry, supported_languages=["en"])


def detect_spans(
    docs: pd.DataFrame,
    analyzer,
    entity_map: EntityMap,
    score_threshold: float,
    progress: Iterable | None = None,
) -> pd.DataFrame:
    """Detected values per segment, mapped to TAB categories and identifier types."""
    rows, ignored = [], Counter()
    for doc in progress if progress is not None else docs.itertuples(index=False):
        results = analyzer.analyze(text=doc.text, language="en", score_threshold=score_threshold)
        detections = resolve_overlaps(Detection(r.start, r.end, r.entity_type, r.score) for r in results)
        for detection in detections:
            mapped = entity_map.presidio_to_tab.get(detection.presidio_type)
            if mapped is None:
                ignored[detection.presidio_type] += 1
                continue
            entity_type, identifier_type = mapped
            rows.append(
                {
                    "doc_id": doc.doc_id,
                    "segment": doc.segment,
                    "start": detection.start,
                    "end": detection.end,
                    "text": doc.text[detection.start : detection.end],
                    "entity_type": entity_type,
                    "identifier_type": identifier_type,
                    "score": detection.score,
                }
            )
    if ignored:
        log.info("ignored Presidio types without a TAB category: %s", dict(ignored))
    return pd.DataFrame(
        rows, columns=["doc_id", "segment", "start", "end", "text", "entity_type", "identifier_type", "score"]
    )


def detect_corpus(docs: pd.DataFrame, entity_map_path: str | Path, settings: Mapping) -> pd.DataFrame:
    """Rule `detect_presidio`: every segment's findings with the `codes.presidio` settings (spaCy model,
    extra recognizers, score threshold), mapped by the entity map at `entity_map_path`."""
    from tqdm import tqdm

    entity_map = EntityMap.from_yaml(entity_map_path)
    analyzer = build_analyzer(settings["spacy_model"], entity_map, settings["extra_recognizers"])
    progress = tqdm(docs.itertuples(index=False), total=len(docs), desc="presidio", unit="segment")
    return detect_spans(docs, analyzer, entity_map, settings["score_threshold"], progress)
