"""Rule `detect_presidio`: every Presidio finding per segment, mapped to TAB categories."""

import pandas as pd
from tqdm import tqdm

from plainsight.codes.presidio import EntityMap, build_analyzer, detect_spans
from plainsight.io import write_parquet
from plainsight.logs import run_step


def main():
    settings = snakemake.params.presidio  # noqa: F821
    docs = pd.read_parquet(snakemake.input.docs)  # noqa: F821
    entity_map = EntityMap.from_yaml(snakemake.input.entity_map)  # noqa: F821
    analyzer = build_analyzer(settings["spacy_model"], entity_map)
    progress = tqdm(docs.itertuples(index=False), total=len(docs), desc="presidio", unit="segment")
    detected = detect_spans(docs, analyzer, entity_map, settings["score_threshold"], progress)
    write_parquet(detected, snakemake.output[0])  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
