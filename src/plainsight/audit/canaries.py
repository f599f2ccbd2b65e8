"""Canary exposure (Carlini et al. 2019, "The Secret Sharer").

A canary is one fixed template with a random secret ("... reference is 318204."), inserted into
fine-tuning documents a number of times. After training, the model's log-perplexity of the canary
with its true secret is compared with that of the same template holding other secrets drawn from
the same space R (all `digits`-digit numbers). Exposure = log2 |R| - log2 rank, where rank is the
true secret's position among all of R by likelihood. R is too large to score whole, so the rank is
estimated from a uniform sample of candidates, as the paper's sampling estimate does:
rank ~ 1 + |R| x (share of sampled candidates the model finds at least as likely as the secret).
A secret the model prefers to every sampled candidate gets the highest exposure this sample can show,
log2 of the sample size plus one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from plainsight.rng import stable_rng


@dataclass(frozen=True)
class Canary:
    secret: str
    repeats: int  # fine-tuning documents it is inserted into

    def text(self, template: str) -> str:
        return template.format(secret=self.secret)


def draw_secrets(count: int, digits: int, seed: int) -> list[str]:
    """`count` distinct random secrets of `digits` digits (leading zeros kept), seeded."""
    if count > 10**digits:
        raise ValueError(f"{count} distinct secrets do not fit in {digits} digits")
    rng = stable_rng(seed, "canary secrets")
    secrets: dict[str, None] = {}
    while len(secrets) < count:
        secrets[f"{rng.randrange(10**digits):0{digits}d}"] = None
    return list(secrets)


def insert_canaries(texts: Sequence[str], canaries: Sequence[Canary], template: str, seed: int) -> list[str]:
    """The documents with each canary's sentence appended to `repeats` distinct documents (seeded)."""
    out = list(texts)
    rng = stable_rng(seed, "canary documents")
    for canary in canaries:
        if canary.repeats > len(out):
            raise ValueError(
                f"a canary repeated {canary.repeats} times needs as many documents, not {len(out)}"
            )
        for index in rng.sample(range(len(out)), canary.repeats):
            out[index] = f"{out[index].rstrip()}\n\n{canary.text(template)}"
    return out


def estimated_rank(secret_score: float, candidate_scores: Sequence[float], space: int) -> float:
    """The secret's rank in the whole space, from a uniform sample (scores: negative log-perplexity)."""
    candidates = np.asarray(candidate_scores, dtype=float)
    if len(candidates) == 0:
        raise ValueError("no candidates to rank the secret among")
    share = float((candidates >= secret_score).mean())
    return max(1.0, 1.0 + space * share) if share > 0 else max(1.0, space / (len(candidates) + 1))


def exposure(secret_score: float, candidate_scores: Sequence[float], space: int) -> float:
    """log2 |R| - log2 rank: 0 when the secret is as unlikely as any, up to log2 |R| when it ranks first."""
    return math.log2(space) - math.log2(estimated_rank(secret_score, candidate_scores, space))


def canary_scores(
    model, tokenizer, template: str, secrets: Sequence[str], max_length: int, batch_size: int = 8
) -> np.ndarray:
    """Negative log-perplexity (summed token log-probability) of the template holding each secret, scored
    as a fine-tuning document with an empty code (the prompt format the adapter was trained on)."""
    from plainsight.audit.membership import document_log_probs
    from plainsight.training.loop import build_example

    examples = [
        build_example(("canary", number), "", template.format(secret=secret), [], tokenizer, max_length)
        for number, secret in enumerate(secrets)
    ]
    return np.array(
        [values.sum() for values in document_log_probs(model, examples, tokenizer.pad_token_id, batch_size)]
    )


def canary_exposures(
    model,
    tokenizer,
    template: str,
    canaries: Sequence[Canary],
    digits: int,
    candidates: int,
    seed: int,
    max_length: int,
) -> list[float]:
    """Exposure of each canary, its rank estimated among `candidates` secrets drawn uniformly (seeded)."""
    space = 10**digits
    drawn = draw_secrets(candidates + len(canaries), digits, seed + 1)
    sample = [secret for secret in drawn if secret not in {c.secret for c in canaries}][:candidates]
    candidate_scores = canary_scores(model, tokenizer, template, sample, max_length)
    secret_scores = canary_scores(model, tokenizer, template, [c.secret for c in canaries], max_length)
    return [exposure(score, candidate_scores, space) for score in secret_scores]


REPEATS = (1, 4, 16)  # fine-tuning documents each canary goes into: seen once, a few times, often


@dataclass(frozen=True)
class CanarySettings:
    template: str
    digits: int
    per_repeat: int  # canaries drawn for each count of `REPEATS`
    candidates: int  # uniformly drawn secrets its rank is estimated among
    seed: int


def planned_canaries(settings: CanarySettings) -> list[Canary]:
    """`per_repeat` canaries for each count of `REPEATS`, their secrets distinct and seeded."""
    secrets = draw_secrets(settings.per_repeat * len(REPEATS), settings.digits, settings.seed)
    return [
        Canary(secret, repeats)
        for n, secret in enumerate(secrets)
        for repeats in [REPEATS[n // settings.per_repeat]]
    ]


def canaried_docs(docs, codes, canaries: Sequence[Canary], template: str, seed: int):
    """docs.parquet with the canaries' sentence appended to fine-tuning segments (train split, one with a
    control code): the set the canary adapters train on. Other rows are unchanged."""
    import pandas as pd

    train = codes[codes["split"] == "train"]
    keys = set(zip(train["doc_id"].astype(str), train["segment"].astype(int)))
    rows = [
        index
        for index, key in enumerate(zip(docs["doc_id"].astype(str), docs["segment"].astype(int)))
        if key in keys
    ]
    texts = insert_canaries([docs["text"].iloc[i] for i in rows], canaries, template, seed)
    out = docs.copy()
    out.loc[out.index[rows], "text"] = pd.Series(texts, index=out.index[rows])
    return out


def canary_report(
    model,
    tokenizer,
    settings: CanarySettings,
    canaries: Sequence[Canary],
    generations: Sequence[str],
    max_length: int,
):
    """One row per canary: its secret, how often it was inserted, its exposure under the canary adapter,
    and how many generations of that adapter hold the secret (or the whole canary sentence)."""
    import pandas as pd

    exposures = canary_exposures(
        model,
        tokenizer,
        settings.template,
        canaries,
        settings.digits,
        settings.candidates,
        settings.seed,
        max_length,
    )
    return pd.DataFrame(
        {
            "secret": [c.secret for c in canaries],
            "repeats": [c.repeats for c in canaries],
            "exposure": exposures,
            "max_exposure": math.log2(10**settings.digits),
            "generations_with_secret": [sum(c.secret in text for text in generations) for c in canaries],
            "generations_with_sentence": [
                sum(c.text(settings.template) in text for text in generations) for c in canaries
            ],
            "generations": len(generations),
        }
    )


def read_canary_settings(path: str, per_repeat: int, candidates: int, seed: int) -> CanarySettings:
    """The settings of `audit.canaries`, with the template and secret length of its file."""
    import yaml

    from plainsight.io import read_text_utf8

    spec = yaml.safe_load(read_text_utf8(path))
    if "{secret}" not in str(spec.get("template", "")):
        raise ValueError(f"{path}: the canary template must hold {{secret}}")
    return CanarySettings(spec["template"], int(spec["secret_digits"]), per_repeat, candidates, seed)


def write_canaried_docs(
    docs_path: str, codes_path: str, settings: CanarySettings, docs_out: str, canaries_out: str
) -> None:
    """Rule `canary_docs`: the fine-tuning set with the canaries in it, and the canaries (secret, repeats)."""
    import pandas as pd

    from plainsight.io import write_json, write_parquet

    canaries = planned_canaries(settings)
    docs = canaried_docs(
        pd.read_parquet(docs_path), pd.read_parquet(codes_path), canaries, settings.template, settings.seed
    )
    write_parquet(docs, docs_out)
    write_json([{"secret": c.secret, "repeats": c.repeats} for c in canaries], canaries_out)


def write_canary_report(
    adapter: str,
    model_name: str,
    placement,
    settings: CanarySettings,
    canaries_path: str,
    generations_path: str,
    max_length: int,
    threads: int,
    output: str,
) -> None:
    """Rule `canary_exposure`: each canary's exposure under the adapter trained on the canaried set, and
    its appearances in that adapter's generations."""
    import pandas as pd
    import torch

    from plainsight.io import read_json, write_parquet
    from plainsight.models import load_model, resolve_placement
    from plainsight.training.prefix import load_adapter

    torch.set_num_threads(threads)
    model, tokenizer = load_model(model_name, *resolve_placement(placement))
    model = load_adapter(model, adapter).eval()
    canaries = [Canary(str(c["secret"]), int(c["repeats"])) for c in read_json(canaries_path)]
    generations = pd.read_parquet(generations_path)["text"].tolist()
    write_parquet(canary_report(model, tokenizer, settings, canaries, generations, max_length), output)
