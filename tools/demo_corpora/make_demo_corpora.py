#!/usr/bin/env python
"""Generate the small FICTIONAL demo corpora shipped in ``resources/demo``.

Three corpora are written; the first two in the exact on-disk format of a real dataset:

* ``tab/echr_{train,dev,test}.json`` -- documents in the format of the Text
  Anonymization Benchmark (TAB, ECHR court cases), with character-offset
  entity annotations;
* ``mimic/NOTEEVENTS.csv`` -- clinical notes in the format of MIMIC-III
  ``NOTEEVENTS.csv``, whose identifiers are (as in the real data) replaced by
  ``[** ... **]`` de-identification placeholders;
* ``casenotes.jsonl`` -- social-services case notes in the generic format (one
  JSON object a line, with spans, a label, a group and the client as privacy unit).

Every person, case, organisation and clinical story is invented. The words are
in the YAML files of this directory (templates, word lists, storylines); the
Python modules decide what is drawn and in which order. Names are drawn from a
seeded Faker and everything else from a seeded ``random.Random``, so two runs
produce byte-identical files (for a fixed Faker version).

Usage::

    python tools/demo_corpora/make_demo_corpora.py [--out resources/demo]
    python tools/demo_corpora/make_demo_corpora.py --rouge-pairs 400   # report diversity
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import random
import time
from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path

from casenotes_corpus import make_casenotes, write_casenotes
from mimic_corpus import make_mimic_notes, write_mimic_notes
from tab_corpus import N_TAB_DOCS, make_tab_corpus, write_tab_corpus

SEED = 20240611
CASENOTES_SEED = 20261125  # a generator of its own: the older corpora keep their draws
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "resources" / "demo"

log = logging.getLogger("demo_corpora")


def main(out_dir: Path = DEFAULT_OUT) -> None:
    """Write the corpora under ``out_dir`` (``tab/``, ``mimic/`` and ``casenotes.jsonl``)."""
    out_dir = Path(out_dir)
    # One generator for both corpora: the MIMIC notes continue the TAB corpus's draws.
    rng = random.Random(SEED)
    write_tab_corpus(make_tab_corpus(rng), out_dir / "tab")
    write_mimic_notes(make_mimic_notes(rng), out_dir / "mimic")
    write_casenotes(make_casenotes(random.Random(CASENOTES_SEED), CASENOTES_SEED), out_dir)


def write_tab_of_size(documents: Mapping[str, int], out_dir: Path) -> None:
    """A fictional TAB corpus of `documents[split]` documents per split in ``out_dir``, drawn as the
    shipped one is (its seed, its first draws): the same sizes give byte-identical files, and the
    shipped sizes (``N_TAB_DOCS``) the shipped files. Logs each file's documents and characters."""
    corpus = make_tab_corpus(random.Random(SEED), documents)
    write_tab_corpus(corpus, Path(out_dir))
    for split, docs in corpus.items():
        log.info(
            "echr_%s.json: %d documents, %d characters",
            split,
            len(docs),
            sum(len(doc["text"]) for doc in docs),
        )


def mean_pairwise_rouge_l(texts: list[str], n_pairs: int, seed: int = 0) -> tuple[float, int]:
    """Mean ROUGE-L F1 (stemmed) over all document pairs, or a fixed random sample of them."""
    from rouge_score import rouge_scorer  # optional: only needed for this report

    pairs = list(combinations(range(len(texts)), 2))
    if n_pairs < len(pairs):
        pairs = random.Random(seed).sample(pairs, n_pairs)
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    scores = [scorer.score(texts[i], texts[j])["rougeL"].fmeasure for i, j in pairs]
    return sum(scores) / len(scores), len(scores)


def corpus_texts(out_dir: Path) -> dict[str, list[str]]:
    tab = [
        doc["text"]
        for split in N_TAB_DOCS
        for doc in json.loads((out_dir / "tab" / f"echr_{split}.json").read_text(encoding="utf-8"))
    ]
    with open(out_dir / "mimic" / "NOTEEVENTS.csv", encoding="utf-8", newline="") as fh:
        mimic = [row["TEXT"] for row in csv.DictReader(fh)]
    return {"TAB (ECHR)": tab, "MIMIC-III notes": mimic}


def cli(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="output directory (default: resources/demo)"
    )
    parser.add_argument(
        "--rouge-pairs",
        type=int,
        default=0,
        help="also report the mean pairwise ROUGE-L F1 over this many random document pairs "
        "(all pairs if there are fewer)",
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    main(args.out)
    print(f"wrote demo corpora to {args.out} in {time.perf_counter() - start:.1f}s")
    if args.rouge_pairs:
        for name, texts in corpus_texts(args.out).items():
            mean, n_pairs = mean_pairwise_rouge_l(texts, args.rouge_pairs)
            print(
                f"{name}: mean pairwise ROUGE-L F1 over {n_pairs} pairs of {len(texts)} documents "
                f"= {mean:.3f}"
            )


if __name__ == "__main__":
    cli()
