"""Rules `generate_icl`, `generate_trained` and `mauve_texts`: a synthetic corpus of one method and seed.

The corpus rules write the method's generations (or one shard of them); `mauve_texts` writes
one text per sampled real test segment, from that segment's real code, for MAUVE to compare
(`plainsight.generation.jobs`).
"""

from plainsight.generation.jobs import GenerateJob, generate_texts
from plainsight.io import write_parquet
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    inputs, params = job.input, job.params
    spec = GenerateJob(
        job.method,
        job.seed,
        params.purpose,
        inputs.codes,
        params.model,
        params.placement,
        params.generation,
        docs=getattr(inputs, "docs", None),
        spans=getattr(inputs, "spans", None),
        pools=getattr(inputs, "pools", None),
        surrogates=getattr(params, "surrogates", "paper"),
        surrogate_lists=getattr(inputs, "lists", None) or None,
        fictional=getattr(inputs, "fictional", None),
        adapter=getattr(inputs, "adapter", None),
        generations=getattr(params, "generations", None),
        mauve_samples=getattr(params, "mauve_samples", None),
        shard=params.shard["index"],
        shards=params.shard["count"],
        threads=job.threads,
    )
    write_parquet(generate_texts(spec), job.output[0])


run_rule(main)
