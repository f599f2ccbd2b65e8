"""Every utility measure of one run's synthetic corpora, beside the real corpus: one row per
(method, seed) and one `real` row (`results/{dataset}/{setting}/{idset}/utility/measures.parquet`).

- downstream: `plainsight.evaluation.downstream` (the real row is the real-trained ceiling);
- adherence: the mean over a corpus's generations of `plainsight.evaluation.adherence`;
- diversity and distribution: `plainsight.evaluation.diversity`. The real row's Self-BLEU,
  distinct-n, lengths and FID are taken on a seeded sample of real training segments as large as
  the largest synthetic corpus (Self-BLEU and distinct-n depend on the number of texts);
- entity types: the types of the fictional values a corpus holds against those of the real
  training codes (NaN in the real row);
- FID: the corpus's MiniLM features against those of the real test segments that MAUVE compares
  with (`mauve_targets`: the same real sample).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from plainsight.data.segments import mauve_targets
from plainsight.evaluation.adherence import ADHERENCE_COLUMNS, corpus_adherence, fictional_pairs, found_types
from plainsight.evaluation.diversity import (
    corpus_distinct_n,
    frechet_distance,
    length_distance,
    real_vocabulary_share,
    self_bleu,
    type_distance,
    words,
)
from plainsight.evaluation.downstream import CHANCE, REAL, REAL_SAMPLE, DownstreamSettings, downstream_scores
from plainsight.evaluation.features import FeatureSettings, featurize
from plainsight.rng import stable_rng


@dataclass(frozen=True)
class RunKey:
    dataset: str
    setting: str
    idset: str


def real_reference(docs: pd.DataFrame, size: int) -> list[str]:
    """A seeded sample of `size` real training segments (all where there are fewer)."""
    texts = docs[docs["split"] == "train"].sort_values(["doc_id", "segment"])["text"].astype(str).tolist()
    if size >= len(texts):
        return texts
    return [texts[i] for i in sorted(stable_rng("utility real reference").sample(range(len(texts)), size))]


def real_entity_types(codes: pd.DataFrame) -> list[str]:
    """The entity type of every distinct value of the real training codes, once per segment."""
    train = codes[codes["split"] == "train"]
    return [
        str(entity["type"])
        for entities in train["entities"]
        for entity in {str(e["value"]): e for e in entities}.values()
    ]


def diversity_row(
    texts: list[str],
    real_texts: list[str],
    types: list[str],
    real_types: list[str],
    features: np.ndarray,
    target_features: np.ndarray,
) -> dict[str, float]:
    """The diversity and distribution columns of one set of texts."""
    return {
        "self_bleu": self_bleu(texts),
        "distinct1": corpus_distinct_n(texts, 1),
        "distinct2": corpus_distinct_n(texts, 2),
        "mean_words": float(np.mean([len(words(t)) for t in texts])) if texts else math.nan,
        "length_ks": length_distance(texts, real_texts),
        "vocabulary": len({w for t in texts for w in words(t)}),
        "real_vocabulary_share": real_vocabulary_share(texts, real_texts),
        "entity_type_jsd": type_distance(types, real_types) if types else math.nan,
        "fid": frechet_distance(features, target_features) if len(features) >= 2 else math.nan,
    }


def utility_measures(
    docs: pd.DataFrame,
    codes: pd.DataFrame,
    corpora: Mapping[tuple[str, int], pd.DataFrame],
    run: RunKey,
    downstream: DownstreamSettings,
    mauve: FeatureSettings,
    mauve_samples: int | None,
    placement: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One row per corpus (method, seed) and the `real` row: downstream scores, mean adherence,
    diversity and distribution measures."""
    scores = downstream_scores(docs, corpora, downstream, run.dataset, placement).set_index(
        ["method", "seed"]
    )
    real_texts = docs[docs["split"] == "train"]["text"].astype(str).tolist()
    real_types = real_entity_types(codes)
    test_text = dict(
        zip(zip(docs["doc_id"].astype(str), docs["segment"].astype(int)), docs["text"].astype(str))
    )
    targets = [test_text[key] for key in mauve_targets(docs, mauve_samples)]
    reference = real_reference(docs, max((len(c) for c in corpora.values()), default=len(targets)))
    sets = {(REAL, 0): reference, **{key: c["text"].astype(str).tolist() for key, c in corpora.items()}}
    features = featurize([t for texts in sets.values() for t in texts] + targets, mauve)
    offsets = np.cumsum([0, *(len(texts) for texts in sets.values())])
    target_features = features[offsets[-1] :]
    rows = []
    for number, (key, texts) in enumerate(sets.items()):
        corpus = corpora.get(key)
        types = (
            [t for row in corpus.to_dict("records") for t in found_types(row["text"], fictional_pairs(row))]
            if corpus is not None
            else []
        )  # the real row's distance to itself would be 0 by definition
        adherence = (
            corpus_adherence(corpus).mean().to_dict()
            if corpus is not None
            else dict.fromkeys(ADHERENCE_COLUMNS, math.nan)
        )
        rows.append(
            {
                "dataset": run.dataset,
                "setting": run.setting,
                "idset": run.idset,
                "method": key[0],
                "seed": key[1],
                "texts": len(texts),
                **scores.loc[key].to_dict(),
                **adherence,
                **diversity_row(
                    texts,
                    real_texts,
                    types,
                    real_types,
                    features[offsets[number] : offsets[number + 1]],
                    target_features,
                ),
            }
        )
    # downstream scores only: chance has no texts, the real sample's measures are the real row's
    references = [key for key in ((CHANCE, 0), (REAL_SAMPLE, 0)) if key in scores.index]
    rows[1:1] = [
        {**run.__dict__, "method": key[0], "seed": 0, **scores.loc[key].to_dict()} for key in references
    ]
    return pd.DataFrame(rows)
