"""Rules `perplexity` and `base_perplexity`: perplexity on the real test split of a fresh model
fine-tuned on one synthetic corpus, or of the configured model untouched (the reference)."""

from pathlib import Path

from plainsight.evaluation.perplexity import FinetuneSettings, PerplexityJob, write_perplexity
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    common = {
        "docs": Path(job.input.docs),
        "settings": FinetuneSettings.from_params(job.params.perplexity),
        "model": job.params.model,
        "placement": job.params.placement,
        "output": Path(job.output[0]),
        "threads": job.threads,
    }
    # Rule `perplexity` fine-tunes on a corpus first; `base_perplexity` scores the model untouched.
    tuned = (
        {
            "corpus": Path(job.input.corpus),
            "method": job.method,
            "seed": job.seed,
            "setting": job.wildcards.setting,
        }
        if "corpus" in job.input
        else {}
    )
    write_perplexity(PerplexityJob(**common, **tuned))


run_rule(main)
