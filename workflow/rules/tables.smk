# Paper-style result tables: results/tables/{table}.csv, .md and _vs_paper.csv.

import yaml

PAPER_TABLES = yaml.safe_load(open(config["tables"]["paper"], encoding="utf-8"))["tables"]


def table_seeds(table):
    """Seeds of a table: `utility.seeds` for utility tables; `tables.seeds.<table>` where the paper
    reports a single run; else `seeds`."""
    if PAPER_TABLES[table].get("source") == "utility":
        return config["utility"]["seeds"]
    return config["tables"]["seeds"].get(table, SEEDS)


def table_methods(table):
    """The method keys (with the table's model variant, if any) whose runs a table reads."""
    from plainsight.methods.registry import with_variant

    spec = PAPER_TABLES[table]
    listed = [m for m in config["methods"] if m in spec.get("methods", config["methods"])]
    return [with_variant(m, spec.get("model")) for m in listed]


def table_inputs(wildcards):
    spec = PAPER_TABLES[wildcards.table]
    settings = spec["setting"] if isinstance(spec["setting"], list) else [spec["setting"]]
    if spec.get("source", "privacy") == "utility":
        pattern = "results/{dataset}/{setting}/{idset}/utility/{method}/seed{seed}.json"
        reference = [f"results/{spec['dataset']}/utility/base_model_perplexity.json"]
    else:
        pattern = "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_summary.parquet"
        reference = []
    runs = expand(pattern, dataset=spec["dataset"], setting=settings, idset=spec["idset"],
                  method=table_methods(wildcards.table), seed=table_seeds(wildcards.table))
    return runs + reference


def table_examples(_wildcards):
    """A readable sample of every synthetic corpus a privacy table reads."""
    paths = []
    for table, spec in PAPER_TABLES.items():
        if spec.get("source", "privacy") == "privacy":
            paths += expand("results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}_examples.md",
                            dataset=spec["dataset"], setting=spec["setting"], idset=spec["idset"],
                            method=table_methods(table), seed=table_seeds(table))
    return sorted(set(paths))


rule table:
    """One result table of the paper, with the paper's numbers beside ours."""
    input:
        summaries=table_inputs,
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
    params:
        methods=lambda wildcards: table_methods(wildcards.table),
    conda:
        "../../envs/metrics.yaml"
    script:
        "../../scripts/make_table.py"


rule all_tables:
    """Every table of the paper, and the privacy-utility plots; the file lists what was built."""
    input:
        tables=expand("results/tables/{table}.csv", table=PAPER_TABLES),
        plots=expand("results/plots/privacy_utility_{dataset}.png", dataset=config["plots"]["datasets"]),
        examples=table_examples,
    output:
        "results/tables/all",
    log:
        "results/logs/all_tables.log",
    conda:
        "../../envs/metrics.yaml"
    script:
        "../../scripts/list_outputs.py"
