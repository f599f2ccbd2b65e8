"""RPSG (Ma and Rajtmajer 2025, "Private Seeds, Public LLMs", Algorithm 1) on the configured model.

Per paragraph range, `private_seeds` training segments are drawn (seeded). Each seed is redacted by
the PII patterns; the model writes m abstracted candidates of it; the Gaussian mechanism picks one on
the normalised cosine of seed and candidate (`plainsight.methods.private_selection`). The model then
writes a realistic passage from the chosen candidate (the variant) and restates the variant (the
synthetic text). A surrogate, the configured model fine-tuned on the variants (`fit`, through
`plainsight.training.finetune`), scores the synthetic texts: those most similar to any seed go first
(the cosine filter keeps the `similarity_keep` least similar share), then those at or below the
`nll_percentile` of the surrogate's NLL. The survivors are redacted once more.

Departures from the paper, for a single configured model: the abstraction is the configured model
prompted to describe its seed in general terms (the paper: a BART summariser, with a sentiment model
steering m of K candidates); the cosine filter uses the sentence embedder (the paper: the surrogate's
own embeddings); the surrogate is the configured model (the paper: BERT-small).

The guarantee (`guarantee`): each selection is (epsilon, delta)-DP in the utilities of its candidates;
the candidates themselves are written from their seed, so the released text is a rewrite of one
private seed and the selection's epsilon bounds nothing about the release (`release_epsilon`: None).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from plainsight.data.segments import SegmentKey
from plainsight.generation.selection import (
    Embedder,
    PrivateSegments,
    StepWriter,
    Written,
    cosines,
    selection_frame,
)
from plainsight.methods.pii import PiiPatterns
from plainsight.methods.private_selection import (
    SeedRewriteSettings,
    above_percentile,
    least_similar,
    noisy_argmax,
    normalised_cosine,
)
from plainsight.methods.registry import PROTECTED, method
from plainsight.models import load_model
from plainsight.rng import numpy_rng, stable_rng
from plainsight.training.finetune import FinetuneSettings, finetune, text_nlls

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RewriteRun:
    """What one RPSG corpus is written from: the method and seed, the settings, the PII patterns."""

    method: str
    seed: int
    settings: SeedRewriteSettings
    surrogate: FinetuneSettings
    abstract_tokens: int  # new tokens of an abstraction (the paper: 50 to 150)
    max_new_tokens: int  # of a variant and of a synthetic text
    pii: PiiPatterns


def draw_seeds(private: PrivateSegments, per_range: int | None, seed: int) -> list[int]:
    """Positions of the private seeds: `per_range` training segments of each paragraph range (all when
    None or more than the range has), drawn with the run's seed, in record order."""
    chosen = []
    for segment in sorted(set(private.ranges)):
        positions = [i for i, s in enumerate(private.ranges) if s == segment]
        count = len(positions) if per_range is None else min(per_range, len(positions))
        chosen += stable_rng(seed, "private seeds", segment).sample(positions, count)
    return sorted(chosen)


def select_candidates(
    run: RewriteRun, seed_keys: Sequence[SegmentKey], utilities: np.ndarray, sigma: float
) -> list[int]:
    """Per seed, the index of the candidate the Gaussian mechanism keeps (each seed its own noise)."""
    return [
        noisy_argmax(row, sigma, numpy_rng(run.seed, "candidate selection", *key))
        for key, row in zip(seed_keys, utilities)
    ]


def utilities(embedder: Embedder, seed_texts: Sequence[str], candidates: Sequence[str], m: int) -> np.ndarray:
    """u(x, s_j) of each seed's m candidates: the normalised cosine of their embeddings, [seeds, m]."""
    seeds = embedder(seed_texts, desc="seed embeddings")
    rows = embedder(candidates, desc="candidate embeddings").reshape(len(seed_texts), m, -1)
    return np.stack([normalised_cosine(seed, row) for seed, row in zip(seeds, rows)])


def write_texts(
    run: RewriteRun,
    writer: StepWriter,
    embedder: Embedder,
    seeds: Sequence[tuple[SegmentKey, str, str]],
    sigma: float,
) -> tuple[list[Written], list[Written]]:
    """(variants, synthetic texts), one each per seed (key, text, redacted text): m abstractions of the
    redacted text, the noisy choice among them, then the two rounds of variations."""
    m = run.settings.candidates
    abstractions = [redacted for _, _, redacted in seeds for _ in range(m)]
    candidates = writer.write("abstraction", abstractions, run.abstract_tokens, "abstractions")
    scores = utilities(embedder, [text for _, text, _ in seeds], [c.text for c in candidates], m)
    chosen = select_candidates(run, [key for key, _, _ in seeds], scores, sigma)
    picked = [candidates[i * m + j].text for i, j in enumerate(chosen)]
    variants = writer.write("variant", picked, run.max_new_tokens, "variants")
    synthetic = writer.write("rephrase", [v.text for v in variants], run.max_new_tokens, "synthetic texts")
    return variants, synthetic


def surrogate_nll(run: RewriteRun, model_path: str, placement, variants: Sequence[str], texts: Sequence[str]):
    """Mean token NLL of each text under the surrogate: the configured model tuned on the variants
    (float32 weights when every weight is tuned)."""
    device, dtype = placement
    model, tokenizer = load_model(model_path, device, run.surrogate.weights_dtype(dtype))
    tuned, history = finetune(model, tokenizer, variants, run.surrogate, run.seed, desc="surrogate")
    scored = text_nlls(
        tuned, tokenizer, texts, run.surrogate.max_length, run.surrogate.batch_size, "surrogate NLL"
    )
    return [nll / tokens if tokens else float("inf") for nll, tokens in scored], history


def refine(run: RewriteRun, synthetic: Sequence[Written], seed_embeddings: np.ndarray, embedder: Embedder):
    """Positions of the texts that pass the cosine filter: non-empty ones, the least similar to any seed."""
    present = [i for i, t in enumerate(synthetic) if t.text.strip()]
    if not present:
        return []
    nearest = cosines(
        embedder([synthetic[i].text for i in present], desc="synthetic embeddings"), seed_embeddings
    )
    return [present[i] for i in least_similar(nearest.max(axis=1).tolist(), run.settings.similarity_keep)]


def guarantee(run: RewriteRun, records: int, sigma: float) -> dict[str, Any]:
    """What the selection's epsilon covers, and what it does not: the record beside the corpus."""
    return {
        "method": run.method,
        "seed": run.seed,
        "mechanism": "Gaussian noise on each seed's candidate utilities (normalised cosine, sensitivity 1), "
        "sigma = sqrt(2 ln(1.25 / delta)) / epsilon (RPSG's Eq. 1); the best noisy candidate is kept",
        "epsilon": run.settings.epsilon,
        "delta": run.settings.delta_for(records),
        "sigma": sigma,
        "privacy_unit": f"one {PROTECTED[method(run.method).protects]}, per selection (its seed)",
        "covers": "which of its m candidates a seed's selection keeps, given those candidates",
        "not_covered": "the candidates: the model writes each from its seed's redacted text, so every "
        "released text is a rewrite of one private seed (a one-to-one rewrite); the redaction, both "
        "rounds of variations, the cosine filter against the seeds and the surrogate's NLL filter "
        "read private text without noise",
        "release_epsilon": None,
        "private_records": records,
        "candidates": run.settings.candidates,
        "settings": asdict(run.settings),
        "surrogate": asdict(run.surrogate),
    }


def rewrite_corpus(
    run: RewriteRun,
    private: PrivateSegments,
    writer: StepWriter,
    embedder: Embedder,
    surrogate_model: tuple[str, Any],
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The RPSG corpus of one seed and its guarantee record. `writer` decodes with the loaded model; the
    surrogate is loaded anew from `surrogate_model` (its path, and the (device, dtype) placement)."""
    positions = draw_seeds(private, run.settings.private_seeds, run.seed)
    redacted = [run.pii.redact(private.texts[i]) for i in positions]
    seeds = [(private.keys[i], private.texts[i], text) for i, (text, _) in zip(positions, redacted)]
    sigma = run.settings.sigma(len(private.keys))
    log.info(
        "%d private seeds of %d training segments, selection sigma %.3f", len(seeds), len(private.keys), sigma
    )
    variants, synthetic = write_texts(run, writer, embedder, seeds, sigma)
    kept = refine(run, synthetic, embedder([text for _, text, _ in seeds], desc="seed embeddings"), embedder)
    nll, history = surrogate_nll(
        run, *surrogate_model, [v.text for v in variants], [synthetic[i].text for i in kept]
    )
    kept = [kept[i] for i in above_percentile(nll, run.settings.nll_percentile)]
    final = [run.pii.redact(synthetic[i].text) for i in kept]
    texts = [replace(synthetic[i], text=text) for i, (text, _) in zip(kept, final)]
    sources = [(seeds[i][0],) for i in kept]
    frame = selection_frame(
        run.method, run.seed, texts, [s[0][1] for s in sources], sources, writer.placement
    )
    # a person whose documents feed k seeds has k selections' epsilon (plainsight.audit.protection)
    seeded_units = Counter(private.units[i] for i in positions)
    record = guarantee(run, len(private.keys), sigma) | {
        "seeds": len(seeds),
        "seeded_units": len(seeded_units),
        "largest_unit_seeds": max(seeded_units.values()),
        "texts": {"written": len(synthetic), "after_cosine_filter": len(nll), "released": len(kept)},
        "redactions": {"seeds": sum(n for _, n in redacted), "released": sum(n for _, n in final)},
        "surrogate_steps": len(history),
        "surrogate_final_loss": history[-1]["loss"] if history else None,
    }
    return frame, record
