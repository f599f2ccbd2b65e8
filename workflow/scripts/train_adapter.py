"""Rule `train_adapter`: the adapter of a trained method, fitted on (real code, document) pairs."""

from pathlib import Path

from plainsight.settings import Settings
from plainsight.snakemake_job import RuleJob, run_rule
from plainsight.training.adapter import AdapterJob, train_method_adapter
from plainsight.training.checkpoints import Checkpoints


def main(job: RuleJob) -> None:
    # How often to checkpoint decides nothing about the adapter: read from the config, not the params.
    every = Settings.from_config(job.config).prefix_tuning.checkpoint_every_steps
    train_method_adapter(
        AdapterJob(
            method=job.method,
            seed=job.seed,
            training=job.params.training,
            docs=Path(job.input.docs),
            spans=Path(job.input.spans),
            codes=Path(job.input.codes),
            pools=Path(job.input.pools),
            model=job.params.model,
            placement=job.params.placement,
            output=Path(job.output[0]),
            checkpoints=Checkpoints(Path(job.params.checkpoints), every, job.method),
            threads=job.threads,
        )
    )


run_rule(main)
