"""A short human-readable sample of a synthetic corpus, for a reviewer to read what was produced."""

from __future__ import annotations

import pandas as pd


def examples_markdown(corpus: pd.DataFrame, count: int, title: str) -> str:
    """The first `count` generations (by id): fictional code, context documents, and the text."""
    lines = [
        f"# {title}",
        "",
        f"{len(corpus)} generations; the first {min(count, len(corpus))} are shown.",
        "",
    ]
    for row in corpus.sort_values("generation_id").head(count).to_dict("records"):
        contexts = (
            ", ".join(
                f"{doc} (segment {segment})"
                for doc, segment in zip(row["context_doc_ids"], row["context_segments"])
            )
            or "none"
        )
        lines += [
            f"## Generation {row['generation_id']} (paragraph range {row['segment']})",
            "",
            f"Context documents: {contexts}",
            "",
            "Fictional control code:",
            "",
            "```",
            row["fictional_code"] or "(none: the method writes from no control code)",
            "```",
            "",
            "Text:",
            "",
        ]
        text = row["text"].strip()
        lines += (
            [f"> {line}" if line else ">" for line in text.splitlines()] if text else ["*(empty generation)*"]
        )
        lines.append("")
    return "\n".join(lines)


def corpus_examples(
    corpus: pd.DataFrame, count: int, dataset: str, setting: str, idset: str, method: str, seed: int | str
) -> str:
    """Rule `corpus_examples`: the sample of one run's corpus, titled with the run."""
    title = f"{method}, seed {seed}: {dataset}, private entities {setting}, {idset} identifiers"
    return examples_markdown(corpus, count, title)
