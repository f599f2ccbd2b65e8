# Paper-style result tables: results/tables/{table}.csv, .md and _vs_paper.csv.

import yaml

PAPER_TABLES = yaml.safe_load(open(config["tables"]["paper"], encoding="utf-8"))["tables"]


def table_summaries(wildcards):
    spec = PAPER_TABLES[wildcards.table]
    return expand(
        "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_summary.parquet",
        dataset=spec["dataset"],
        setting=spec["setting"],
        idset=spec["idset"],
        method=config["methods"],
        seed=SEEDS,
    )


rule table:
    """One result table of the paper, with the paper's numbers beside ours."""
    input:
        summaries=table_summaries,
        paper=config["tables"]["paper"],
    output:
        csv=report("results/tables/{table}.csv", caption="../report/table.rst", category="Tables",
                   labels={"table": "{table}", "content": "ours"}),
        markdown="results/tables/{table}.md",
        versus=report("results/tables/{table}_vs_paper.csv", caption="../report/table_vs_paper.rst",
                      category="Tables", labels={"table": "{table}", "content": "beside the paper"}),
    wildcard_constraints:
        table="|".join(PAPER_TABLES),
    log:
        "results/logs/table/{table}.log",
    conda:
        "../../envs/metrics.yaml"
    script:
        "../../scripts/make_table.py"
