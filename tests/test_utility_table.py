"""The utility table (means over seeds, the real row first, Markdown with intervals) and its plots."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from plainsight.report.utility_table import (
    CHANCE_DISPLAY,
    REAL_DISPLAY,
    REAL_SAMPLE_DISPLAY,
    ZERO_LEARNING_DISPLAY,
    markdown_utility_table,
    utility_notes,
    utility_plots,
    utility_table,
)

METHODS = {"icl": "ICL", "ft": "Fine-tuning"}


def measures() -> pd.DataFrame:
    base = {
        "dataset": "tab",
        "setting": "known",
        "idset": "direct",
        "labels": "6, 13",
        "texts": 24,
        "macro_f1_low": 0.1,
        "macro_f1_high": 0.9,
        "adherence_exact": math.nan,
        "self_bleu": 0.2,
    }
    return pd.DataFrame(
        [
            {
                **base,
                "method": "ft",
                "seed": 1,
                "label_source": "silver",
                "macro_f1": 0.4,
                "adherence_exact": 0.5,
            },
            {
                **base,
                "method": "ft",
                "seed": 2,
                "label_source": "silver",
                "macro_f1": 0.6,
                "adherence_exact": 0.7,
            },
            {**base, "method": "real", "seed": 0, "label_source": "real", "macro_f1": 0.8},
            {**base, "method": "icl.large", "seed": 1, "label_source": "silver", "macro_f1": 0.3},
            {
                **base,
                "method": "real_sample",
                "seed": 0,
                "label_source": "real",
                "macro_f1": 0.5,
                "train_texts": 24,
            },
            {
                **base,
                "method": "chance",
                "seed": 0,
                "label_source": "none",
                "macro_f1": 0.3,
                "macro_f1_low": math.nan,
                "macro_f1_high": math.nan,
                "train_texts": 0,
            },
        ]
    )


def test_rows_are_means_over_seeds_with_the_real_row_first():
    table = utility_table(measures(), METHODS)
    assert table["display"].tolist() == [
        REAL_DISPLAY,
        CHANCE_DISPLAY,
        REAL_SAMPLE_DISPLAY,
        "ICL",
        "Fine-tuning",
    ]
    ft = table.set_index("method").loc["ft"]
    assert ft["macro_f1"] == pytest.approx(0.5) and ft["adherence_exact"] == pytest.approx(0.6)
    assert ft["seeds"] == 2 and table.set_index("method").loc["real", "seeds"] == 0


def test_the_zero_learning_corpus_stands_beside_the_real_rows_with_its_seeds():
    zero = [
        {**measures().iloc[0].to_dict(), "method": "negative_control", "seed": seed, "macro_f1": f1}
        for seed, f1 in ((1, 0.2), (2, 0.4))
    ]
    table = utility_table(pd.concat([measures(), pd.DataFrame(zero)], ignore_index=True), METHODS)
    assert table["display"].tolist() == [
        REAL_DISPLAY,
        CHANCE_DISPLAY,
        REAL_SAMPLE_DISPLAY,
        ZERO_LEARNING_DISPLAY,
        "ICL",
        "Fine-tuning",
    ]
    row = table.set_index("method").loc["negative_control"]
    assert row["macro_f1"] == pytest.approx(0.3) and row["seeds"] == 2  # (0.2 + 0.4) / 2
    text = markdown_utility_table(table, utility_notes("tfidf_logreg"))
    assert f"| {ZERO_LEARNING_DISPLAY} | 0.300 [0.100, 0.900] |" in text


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="without a display name: dpsgd"):
        utility_table(measures().assign(method="dpsgd"), METHODS)


def test_markdown_shows_intervals_percentages_and_notes():
    text = markdown_utility_table(utility_table(measures(), METHODS), utility_notes("tfidf_logreg"))
    assert "## TAB, private entities known, direct identifiers" in text
    assert "Downstream labels: 6, 13; synthetic texts labelled silver." in text
    row = next(line for line in text.splitlines() if line.startswith("| Fine-tuning"))
    assert "| 0.500 [0.100, 0.900] |" in row and "| 60 |" in row  # adherence as a percentage
    assert next(line for line in text.splitlines() if line.startswith(f"| {REAL_DISPLAY}")).count("—") >= 3
    assert "- Downstream: a tfidf_logreg classifier" in text
    assert f"| {CHANCE_DISPLAY} | 0.300 |" in text  # an expected value: no interval


def test_plots_are_written(tmp_path):
    docs = pd.DataFrame({"split": ["train", "train", "test"], "text": ["a b c", "a b", "c d e f"]})
    corpora = [
        pd.DataFrame({"method": ["ft", "ft"], "text": ["a", "a b c d"]}),
        pd.DataFrame({"method": ["icl.large"], "text": ["a b"]}),
    ]
    lengths, downstream = tmp_path / "lengths.png", tmp_path / "f1.png"
    utility_plots(measures(), docs, corpora, METHODS, lengths, downstream)
    assert lengths.read_bytes().startswith(b"\x89PNG") and downstream.read_bytes().startswith(b"\x89PNG")
