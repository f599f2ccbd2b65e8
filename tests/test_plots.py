"""The privacy-utility plot's numbers (ours over seeds, the paper's from its tables) and the corpus sample."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from conftest import RESOURCES
from plainsight.evaluation.privacy import AVERAGED_SEGMENT
from plainsight.report.plots import method_points, paper_points, plot_privacy_utility, seed_privacy_utility
from plainsight.report.samples import examples_markdown
from plainsight.report.table_specs import load_table_specs

METHODS = {"icl": "ICL", "ft": "Fine-tuning"}


def runs() -> pd.DataFrame:
    privacy = pd.DataFrame(
        {
            "method": ["icl", "icl", "icl", "ft"],
            "seed": [1, 2, 1, 1],
            "segment": [AVERAGED_SEGMENT, AVERAGED_SEGMENT, 0, AVERAGED_SEGMENT],
            "pipp": [10.0, 20.0, 99.0, 0.0],
            "rougeL": [0.3, 0.5, 0.9, 0.1],
        }
    )
    utility = pd.DataFrame(
        {"method": ["icl", "ft"], "seed": [1, 1], "mauve": [0.8, 0.6], "perplexity": [12.0, 11.0]}
    )
    return seed_privacy_utility(privacy, utility)


def test_points_are_means_over_seeds_of_the_averaged_rows():
    points = method_points(runs(), METHODS).set_index("method")
    assert points.loc["ICL", "pipp"] == 15.0 and points.loc["ICL", "rougeL"] == pytest.approx(0.4)
    # two seeds: t(0.975, 1) * sd / sqrt(2) = 12.7062 * 7.0711 / 1.4142
    assert points.loc["ICL", "pipp_high"] - 15.0 == pytest.approx(12.7062047 * 5.0, rel=1e-6)
    assert points.loc["ICL", "mauve"] == 0.8 and math.isnan(points.loc["ICL", "mauve_low"])
    assert points.loc["Fine-tuning", "perplexity"] == 11.0


def test_pipp_bars_are_pooled_over_the_generations_when_given():
    from plainsight.evaluation.intervals import wilson_interval

    generations = pd.DataFrame(
        {
            "method": "icl",
            "seed": [1] * 5 + [2] * 5,
            "generation_id": list(range(10)),
            "leaked": [True] + [False] * 9,
            "rougeL": [0.4] * 10,
        }
    )
    points = method_points(runs(), METHODS, generations).set_index("method")
    low, high = wilson_interval(1, 10)
    assert (points.loc["ICL", "pipp_low"], points.loc["ICL", "pipp_high"]) == pytest.approx(
        (100 * low, 100 * high)
    )
    assert points.loc["ICL", "rougeL_low"] == pytest.approx(0.4)
    assert math.isnan(points.loc["Fine-tuning", "pipp_high"])  # one seed, no generations: no interval


def test_paper_points_come_from_the_tables_of_that_setting():
    specs = load_table_specs(RESOURCES / "paper_tables.yaml")
    known = paper_points(specs, "tab", "known", "direct").set_index("method")
    assert known.loc["Baseline", "pipp"] == 50.0 and known.loc["Baseline", "rougeL"] == 0.4303  # table1
    assert (
        known.loc["ICL", "perplexity"] == 11.8 and known.loc["ICL", "mauve"] == 0.78
    )  # table4, known columns
    unknown = paper_points(specs, "tab", "unknown", "direct").set_index("method")
    assert unknown.loc["ICL", "perplexity"] == 13.5 and unknown.loc["ICL", "pipp"] == 0.89  # table4, table2


def test_plot_is_written_as_png(tmp_path):
    specs = load_table_specs(RESOURCES / "paper_tables.yaml")
    path = tmp_path / "plot.png"
    plot_privacy_utility(
        method_points(runs(), METHODS), paper_points(specs, "tab", "known", "direct"), "T", path
    )
    assert path.read_bytes().startswith(b"\x89PNG") and path.stat().st_size > 20_000
    assert [p.name for p in tmp_path.iterdir()] == ["plot.png"]  # no temporary file left


def test_examples_markdown_shows_codes_contexts_and_texts():
    corpus = pd.DataFrame(
        {
            "generation_id": [2, 0, 1, 3],
            "segment": [0, 0, 0, 1],
            "text": ["Third.", "The applicant, Mr Jon Berg,\n\nlives in Oslo.", "", "Fourth."],
            "context_doc_ids": [["a"], ["b", "c"], ["d"], ["e"]],
            "context_segments": [[0], [0, 1], [0], [1]],
            "fictional_code": ["PERSON: X", "PERSON: Mr Jon Berg", "", "LOC: Y"],
        }
    )
    markdown = examples_markdown(corpus, 3, "icl, seed 1")
    assert markdown.startswith("# icl, seed 1\n") and "4 generations; the first 3 are shown." in markdown
    assert (
        markdown.index("## Generation 0")
        < markdown.index("## Generation 1")
        < markdown.index("## Generation 2")
    )
    assert "## Generation 3" not in markdown
    assert "Context documents: b (segment 0), c (segment 1)" in markdown
    assert "> The applicant, Mr Jon Berg,\n>\n> lives in Oslo." in markdown
    assert "(none: the method writes from no control code)" in markdown and "*(empty generation)*" in markdown


def test_downstream_f1_axis_joins_the_utility_measures(tmp_path):
    from plainsight.report.plots import DOWNSTREAM_PANEL, panels

    privacy = pd.DataFrame(
        {
            "method": ["icl", "ft"],
            "seed": [1, 1],
            "segment": AVERAGED_SEGMENT,
            "pipp": [10.0, 0.0],
            "rougeL": [0.3, 0.1],
        }
    )
    utility = pd.DataFrame(
        {"method": ["icl", "ft"], "seed": [1, 1], "mauve": [0.8, 0.6], "perplexity": [12.0, 11.0]}
    )
    measures = pd.DataFrame({"method": ["real", "icl", "ft"], "seed": [0, 1, 1], "macro_f1": [0.9, 0.5, 0.2]})
    points = method_points(seed_privacy_utility(privacy, utility, measures), METHODS).set_index("method")
    assert points.loc["ICL", "downstream_f1"] == 0.5 and points.loc["Fine-tuning", "downstream_f1"] == 0.2
    assert panels("downstream_f1")[0] == DOWNSTREAM_PANEL and panels("mauve")[0][1] == "mauve"
    with pytest.raises(ValueError, match="utility_axis"):
        panels("bleu")
    specs = load_table_specs(RESOURCES / "paper_tables.yaml")
    path = tmp_path / "plot.png"
    plot_privacy_utility(
        points.reset_index(), paper_points(specs, "tab", "known", "direct"), "T", path, "downstream_f1"
    )
    assert path.read_bytes().startswith(b"\x89PNG")
