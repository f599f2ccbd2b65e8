"""Rule `generate_tab`: a fictional TAB corpus of the configured size, from the demo generator."""

import sys
from pathlib import Path

# The generator is the one that writes the shipped demo corpora (tools/demo_corpora), not a package.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "demo_corpora"))

from make_demo_corpora import write_tab_of_size

from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    write_tab_of_size(job.params.documents, Path(job.output[0]).parent)


run_rule(main)
