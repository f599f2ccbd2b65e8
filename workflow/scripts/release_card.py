"""Rule `release_card`: a bundle's public card (README.md), written from its data file, its mechanisms'
guarantee records and the config alone (`plainsight.report.public_card`)."""

from pathlib import Path

from plainsight.audit.guarantee import read_bundle_accounting, read_guarantee_record
from plainsight.io import write_text
from plainsight.logs import warn_if
from plainsight.report.public_card import public_card
from plainsight.report.release_run import BundleSettings, PublicBundle
from plainsight.report.sign_off import read_sign_offs
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    w, files = job.wildcards, job.input
    warn_if(job.params.unconfigured_training)
    bundle = PublicBundle(
        w.dataset,
        w.setting,
        w.idset,
        w.method,
        job.params.model,
        job.params.generation,
        BundleSettings.from_config(job.params.release),
        read_sign_offs(job.params.release["sign_off"]),
    )
    card = public_card(
        bundle,
        Path(files.data).read_bytes(),
        [read_guarantee_record(path) for path in files.guarantees],
        read_bundle_accounting(files.provenance, job.params.mechanisms, files.mechanisms),
        Path(files.data).name,
    )
    write_text(card, job.output[0])


run_rule(main)
