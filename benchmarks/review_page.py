"""Review page at the paper's size: build time, data size and load time in headless Chromium.

A fake corpus of --generations texts (default 5,000) is written from the demo TAB training segments:
each text is the opening of a real segment with some of its private values swapped for fictional ones,
so the page has real leaks, fictional values and shared n-grams to highlight. Metrics hold the exact
leaks of the segment's values (as `privacy_metrics` counts them for in-context methods); nearest rows name
three training segments with made-up cosines. The page is built as the `review_page` rule builds it
and opened from file:// in headless Chromium.

    .venv/bin/python benchmarks/review_page.py --generations 5000

Reports generations, build seconds, the corpus data file's size, and in the browser: ms until the
first corpus list shows (from navigation start), ms to open a document, to filter to leaking
generations sorted by nearest cosine, and to look up a value.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path

import pandas as pd

from common import demo_tab_frames, metrics_settings, write_report

FICTIONAL = [
    ("PERSON", "Tomas Berg"),
    ("PERSON", "Lena Marsh"),
    ("LOC", "Oslo"),
    ("ORG", "Northfield Council"),
    ("DATETIME", "3 March 1999"),
    ("CODE", "12345/06"),
]


def fake_run(
    generations: int, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(docs, spans, corpus, metrics, nearest) with `generations` rows from the demo TAB segments."""
    from plainsight.matching import leaked_values

    docs, spans, _ = demo_tab_frames("direct")
    rng = random.Random(seed)
    train = docs[docs["split"] == "train"].reset_index(drop=True)
    values = {
        (d, s): list(g["text"])
        for (d, s), g in spans[spans["identifier_type"] == "DIRECT"].groupby(["doc_id", "segment"])
    }
    rows, metrics, nearest = [], [], []
    for index in range(generations):
        source = train.iloc[rng.randrange(len(train))]
        text = " ".join(source["text"].split()[: rng.randint(60, 220)])
        private = values.get((source["doc_id"], source["segment"]), [])
        for value in rng.sample(private, k=len(private) // 2):
            text = text.replace(value, rng.choice(FICTIONAL)[1])
        leaked = leaked_values(text, private)
        rows.append(
            {
                "generation_id": f"g{index}",
                "method": "icl",
                "seed": 1,
                "segment": index % 2,
                "text": text,
                "context_doc_ids": [source["doc_id"]],
                "context_segments": [int(source["segment"])],
                "fictional_code": "\n".join(f"{t}: {v}" for t, v in FICTIONAL),
                "fictional_entities": [{"type": t, "value": v} for t, v in FICTIONAL],
                "regenerations": rng.choice([0, 0, 0, 1]),
                "hit_max_regenerations": False,
            }
        )
        metrics.append(
            {
                "leaked": bool(leaked),
                "leaked_values": leaked,
                "partial_leak": bool(leaked),
                "near_leak": bool(leaked),
                "near_leaked_values": leaked,
                "is_document": len(text.split()) > 80,
            }
        )
        for rank, neighbour in enumerate(
            [source, *[train.iloc[rng.randrange(len(train))] for _ in range(2)]], 1
        ):
            nearest.append(
                {
                    "generation": index,
                    "rank": rank,
                    "doc_id": neighbour["doc_id"],
                    "segment": int(neighbour["segment"]),
                    "cosine": round(0.95 - 0.2 * rank * rng.random(), 4),
                    "longest_shared_ngram": 60 if rank == 1 else rng.randint(0, 6),
                }
            )
    return docs, spans, pd.DataFrame(rows), pd.DataFrame(metrics), pd.DataFrame(nearest)


def build(folder: Path, generations: int) -> tuple[Path, float]:
    from plainsight.report.review_site import ReviewRun, ReviewSubject, build_review_site

    docs, spans, corpus, metrics, nearest = fake_run(generations)
    for name, frame in (("corpus", corpus), ("metrics", metrics), ("nearest", nearest)):
        frame.to_parquet(folder / f"{name}.parquet")
    run = ReviewRun(
        "icl", 1, folder / "corpus.parquet", folder / "metrics.parquet", folder / "nearest.parquet"
    )
    site = folder / "review"
    started = time.perf_counter()
    build_review_site(
        ReviewSubject("tab", "known", "direct"),
        [run],
        docs,
        spans,
        {"icl": "ICL"},
        metrics_settings(),
        site / "index.html",
        site / "data",
    )
    return site, time.perf_counter() - started


def timed(browser, action, ready) -> float:
    started = time.perf_counter()
    action()
    while not ready():
        time.sleep(0.005)
    return round((time.perf_counter() - started) * 1000, 1)


def measure_in_chromium(site: Path) -> dict:
    from selenium import webdriver
    from selenium.webdriver.common.by import By

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
        options.add_argument(argument)
    browser = webdriver.Chrome(service=webdriver.ChromeService(shutil.which("chromedriver")), options=options)
    try:
        browser.get((site / "index.html").as_uri())
        while browser.execute_script("return document.body.dataset.ready") != "icl/1":
            time.sleep(0.01)
        loaded = browser.execute_script("return window.reviewLoadedMs")
        row = browser.find_element(By.CSS_SELECTOR, "#generations tbody tr")
        document = timed(browser, row.click, lambda: browser.find_element(By.ID, "doc-text").text)

        def filter_and_sort():
            browser.find_element(By.ID, "only-leaking").click()
            browser.execute_script(
                "const s = document.getElementById('sort'); s.value = 'cosine';"
                "s.dispatchEvent(new Event('change'));"
            )

        filtering = timed(browser, filter_and_sort, lambda: True)
        lookup = timed(
            browser,
            lambda: browser.execute_script(
                "document.getElementById('lookup-input').value = 'Oslo';"
                "document.getElementById('lookup-button').click();"
            ),
            lambda: browser.find_elements(By.CSS_SELECTOR, "#lookup-results li, #lookup-results p"),
        )
    finally:
        browser.quit()
    return {
        "first_list_ms": round(loaded, 1),
        "open_document_ms": document,
        "filter_leaking_sort_by_cosine_ms": filtering,
        "first_lookup_ms": lookup,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--generations", type=int, default=5000)
    parser.add_argument("--out", default="results/benchmarks/review_page.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        site, seconds = build(Path(tmp), args.generations)
        sizes = {path.name: round(path.stat().st_size / 1e6, 2) for path in sorted((site / "data").iterdir())}
        report = {
            "generations": args.generations,
            "build_seconds": round(seconds, 1),
            "data_mb": sizes,
            **measure_in_chromium(site),
        }
    write_report(report, Path(args.out))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
