# Release bundles (results/release): a method's synthetic texts alone and their public card (the public
# part, release_data.smk), and the custodian's part, with the verdict of the texts they ship, the
# guarantee, the utility and the reviewers' comments of its run. Built on request for any dataset,
# setting, identifier set and method, not by rule all: a bundle brings its own audit (rule release_audit)
# and its run's utility measures, whatever `audit` and `utility.runs` list; on a run the config does not
# train, it trains that run's adapters (release_unconfigured_training says so).

from plainsight.report.bundle_files import CUSTODIAN_FOLDER, EVIDENCE_FILE, UTILITY_FILE
from plainsight.report.sign_off import read_sign_offs


include: "functions/release.smk"


# A malformed sign-off stops the workflow here, before any job, with one line naming its entry and key.
read_sign_offs(config["release"]["sign_off"])


# What a bundle ships, decided once per seed (rule release_filter), and the audit of exactly those rows
# (rule release_audit): beside the run's other results, never in the bundle's folder, which holds only
# what ships. The review page reads them too, where it shows each bundle's summary (review.smk).
RELEASE = "results/{dataset}/{setting}/{idset}/release/{method}"
RELEASE_KEPT = f"{RELEASE}/seed{{seed}}_kept.parquet"
RELEASE_FILTERED = f"{RELEASE}/seed{{seed}}_filter.parquet"
RELEASE_AUDIT = f"{RELEASE}/audit.json"
RELEASE_METRICS = (
    "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet"
)
# The custodian's part of a bundle: the evidence computed on the private corpus, beside the public part
# (release_data.smk) but never part of what leaves with it.
CUSTODIAN = (
    f"results/release/{{dataset}}/{{setting}}/{{idset}}/{{method}}/{CUSTODIAN_FOLDER}"
)
RELEASE_SETTINGS = {
    key: config["release"][key]
    for key in ("drop", "drop_guaranteed", "license", "language", "sign_off")
}


rule release_filter:
    """What one seed of a bundle ships: the generations `release.drop` keeps (every column of the corpus), and the filter's record of every generation (its leak flags, the rule, whether it is left out). The bundle and its audit read the same kept rows."""
    input:
        corpus=CORPUS,
        metrics="results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet",
        spans=SPANS,
        codes=CODES,
        guarantees=release_seed_guarantee,
    output:
        kept=RELEASE_KEPT,
        filtered=RELEASE_FILTERED,
    log:
        "results/logs/release_filter/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        release=RELEASE_SETTINGS,
    script:
        "../scripts/release_filter.py"


rule release_audit:
    """The audit of what a bundle ships: every seed's kept generations against the run's controls (each leak measure's held-out control, the released-text audit against the seed's negative control, the guarantee, the adapter attacks and canaries where the verdict reads them), each seed's row built and judged as the privacy audit table's, the worst seed winning."""
    input:
        unpack(release_canaries),
        kept=release_runs(RELEASE_KEPT),
        negative_controls=release_runs(NEGATIVE_CONTROL_CORPUS),
        guarantees=release_mechanism_records,
        scores=release_scores,
        utility=release_utility_measures,
        codes=CODES,
        docs=DOCS,
        spans=SPANS,
        paper=config["tables"]["paper"],
    output:
        RELEASE_AUDIT,
    log:
        "results/logs/release_audit/{dataset}_{setting}_{idset}_{method}.log",
    benchmark:
        "results/benchmarks/release_audit/{dataset}_{setting}_{idset}_{method}.tsv"
    conda:
        "../envs/mauve.yaml"
    threads: AUDIT["threads"]
    resources:
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("mauve"),
    params:
        seeds=lambda wildcards: release_seeds(wildcards.method),
        metrics=PRIVACY_METRICS,
        verbatim_ngram=AUDIT["verbatim_ngram"],
        bootstrap=AUDIT["bootstrap"],
        split=dataset_split,
        gate=config["release"]["gate"],
        release=RELEASE_SETTINGS,
        delta=CONFIG_SETTINGS.dpsgd.delta,
        privacy_unit=CONFIG_SETTINGS.dpsgd.privacy_unit,
        canary_claims=release_canary_claims,
        canary_guesses=AUDIT["canaries"]["guesses"],
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/release_audit.py"


rule release_bundle:
    """The custodian's part of a bundle (its custodian/ folder, which does not leave with it): the evidence card of its data file (rule release_data: the kept rows of every seed, no real text, no context ids) with the verdict of those texts, the counts of private values behind it, its run's utility table and the summary a custodian signs."""
    input:
        corpora=release_runs(CORPUS),
        filtered=release_runs(RELEASE_FILTERED),
        kept=release_runs(RELEASE_KEPT),
        summaries=release_runs(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_summary.parquet"
        ),
        metrics=release_runs(RELEASE_METRICS),
        spans=SPANS,
        guarantees=release_guarantees,
        audit=RELEASE_AUDIT,
        run_audit=release_audit_tables,
        utility=release_utility_measures,
        paper=config["tables"]["paper"],
        comments=release_comments,
        docs=DOCS,
        mechanisms=release_mechanism_records,
        provenance=PROVENANCE,
        data="results/release/{dataset}/{setting}/{idset}/{method}/synthetic.jsonl",
    output:
        card=f"{CUSTODIAN}/{EVIDENCE_FILE}",
        verdict=f"{CUSTODIAN}/verdict.json",
        summary=f"{CUSTODIAN}/SUMMARY.md",
        utility=f"{CUSTODIAN}/{UTILITY_FILE}",
    log:
        "results/logs/release_bundle/{dataset}_{setting}_{idset}_{method}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        release=RELEASE_SETTINGS,
        config_fingerprint=CONFIG_FINGERPRINT,
        model=variant_model,
        generation=release_generation_settings,
        mechanisms=release_mechanism_names,
    script:
        "../scripts/release_bundle.py"


include: "release_data.smk"
