"""Rule `detect_presidio`: every Presidio finding per segment, mapped to TAB categories."""

import pandas as pd
from tqdm import tqdm

from plainsight.codes.presidio import EntityMap, build_analyzer, detect_spans
from plainsight.io import write_parquet
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    settings = job.params.presidio
    docs = pd.read_parquet(job.input.docs)
    entity_map = EntityMap.from_yaml(job.input.entity_map)
    analyzer = build_analyzer(settings["spacy_model"], entity_map, settings["extra_recognizers"])
    progress = tqdm(docs.itertuples(index=False), total=len(docs), desc="presidio", unit="segment")
    detected = detect_spans(docs, analyzer, entity_map, settings["score_threshold"], progress)
    write_parquet(detected, job.output[0])


run_rule(main)
