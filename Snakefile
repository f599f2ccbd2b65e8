# Privacy-preserving synthetic text with entity-aware control codes.
# Stages: data -> codes -> generation -> metrics and utility -> tables and plots (workflow/rules/*.smk).

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/resources.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/codes.smk"
include: "workflow/rules/model.smk"
include: "workflow/rules/generation.smk"
include: "workflow/rules/training.smk"
include: "workflow/rules/metrics.smk"
include: "workflow/rules/utility.smk"
include: "workflow/rules/plots.smk"
include: "workflow/rules/tables.smk"
