# The seeds, guarantees, audit inputs, the run's audit table and utility measures, comments and
# generation settings of a release bundle (release.smk).

import hashlib
import json
from pathlib import Path

from snakemake.logging import logger

# The config a bundle was built with, as its verdict.json records it: the same settings give the same
# fingerprint, whatever the order of their keys.
CONFIG_FINGERPRINT = hashlib.sha256(
    json.dumps(config, sort_keys=True, default=str).encode("utf-8")
).hexdigest()[:16]


def release_seeds(method):
    """The seeds a method's bundle holds: `private_selection.seeds` for a private-selection method (the
    only corpora it writes), else `seeds`."""
    if registry.method(method).private_selection:
        return PRIVATE_SELECTION["seeds"]
    return SEEDS


def release_runs(pattern):
    """`pattern` filled for every seed of a bundle's dataset, setting, identifier set and method."""

    def runs(wildcards):
        return expand(pattern, seed=release_seeds(wildcards.method), **wildcards)

    return runs


def configured_runs():
    """(dataset, setting, identifier set) of every run the config trains and generates for: Table 1's,
    each audited one and each utility run."""
    audited = [
        (d, s, i)
        for d in AUDITED_DATASETS
        for s in AUDIT["settings"]
        for i in AUDIT["identifier_sets"]
    ]
    utility = [
        (r["dataset"], r["setting"], r["idset"]) for r in config["utility"]["runs"]
    ]
    table1 = tuple(METHODS_TABLE_RUN[key] for key in ("dataset", "setting", "idset"))
    return {table1, *audited, *utility}


WARNED_UNCONFIGURED = set()


def release_unconfigured_training(wildcards):
    """What a bundle of a trained method trains that the config does not list (its method not in
    `methods`, or its run none the config names): a line its rules log, warned once when the workflow
    plans it; "" where the config trains it anyway or the method trains nothing."""
    method = wildcards.method
    run = (wildcards.dataset, wildcards.setting, wildcards.idset)
    if not registry.method(method).trained:
        return ""
    missing = [
        *(
            [f"`{method}` is not in `methods`"]
            if method not in config["methods"]
            else []
        ),
        *(
            [
                f"the run {', '.join(run)} is not one the config names (Table 1's, `audit`, `utility.runs`)"
            ]
            if run not in configured_runs()
            else []
        ),
    ]
    if not missing:
        return ""
    seeds = release_seeds(method)
    note = (
        f"the bundle of {method} on {', '.join(run)} trains its own adapters ({len(seeds)}, one per seed "
        f"of `seeds`: {', '.join(map(str, seeds))}) for this bundle alone: {'; '.join(missing)}"
    )
    if (method, run) not in WARNED_UNCONFIGURED:
        WARNED_UNCONFIGURED.add((method, run))
        logger.warning(f"Warning: {note}.")
    return note


def release_guarantees(wildcards):
    """The guarantee records of a bundle's seeds; nothing for a method without one."""
    pattern = guarantee_record_pattern(wildcards.method)
    return release_runs(pattern)(wildcards) if pattern else []


def release_mechanisms(wildcards):
    """(mechanism, record) behind a bundle, one per mechanism and seed it ships
    (resources/privacy_provenance.yaml); none for a method without a formal guarantee.
    """
    return mechanism_records(
        PRIVACY_PROVENANCE,
        wildcards.method,
        release_run(wildcards),
        release_seeds(wildcards.method),
    )


def release_mechanism_records(wildcards):
    return [path for _, path in release_mechanisms(wildcards)]


def release_mechanism_names(wildcards):
    """The mechanism of each of `release_mechanism_records`, in its order."""
    return [mechanism.name for mechanism, _ in release_mechanisms(wildcards)]


def release_seed_guarantee(wildcards):
    """The guarantee record of one seed of a bundle (its filter keeps the guarantee where it bounds the
    release); nothing for a method without one."""
    pattern = guarantee_record_pattern(wildcards.method)
    return [pattern.format(**wildcards)] if pattern else []


def release_scores(wildcards):
    """The membership scores of a bundle's seeds, where the threat model releases the adapter and the
    method trains one."""
    adapter = config["release"]["gate"]["threat_model"] == "released_text_and_adapter"
    if not (adapter and registry.method(wildcards.method).trained):
        return []
    return release_runs(
        "results/{dataset}/{setting}/{idset}/audit/membership/seed{seed}_scores.parquet"
    )(wildcards)


def release_audit_tables(wildcards):
    """The run's privacy audit table, of the corpus before the release filter, which the card shows
    beside the verdict of what the bundle ships: the audit table where the run is audited; for a
    private-selection method on the Table 1 run, the methods table (the same gate on its audit record).
    """
    selected = registry.method(wildcards.method).private_selection
    if selected and release_run(wildcards) == METHODS_TABLE_RUN:
        return [f"{METHODS_TABLE}.csv"]
    return run_audit_table(wildcards)


def release_utility_measures(wildcards):
    """The utility measures of a bundle's run (the utility_measures job: every method of `methods` at
    `utility.seeds`; for a private-selection method, the all-methods measures that add it), whatever
    `utility.runs` lists."""
    name = (
        "all_methods_measures"
        if registry.method(wildcards.method).private_selection
        else "measures"
    )
    return "results/{dataset}/{setting}/{idset}/utility/{name}.parquet".format(
        name=name, **release_run(wildcards)
    )


def release_comments(wildcards):
    """Reviewers' comments on the bundle's run, where its review page has comment files: the
    all-methods page's for a private-selection method (the only page that shows it)."""
    subject = (wildcards.dataset, wildcards.setting, wildcards.idset)
    page = (
        ALL_METHODS_PAGE if registry.method(wildcards.method).private_selection else ""
    )
    if subject not in review_subjects() or not review_comment_files(wildcards, page):
        return []
    folder = "results/review/{dataset}/{setting}/{idset}".format(
        **release_run(wildcards)
    )
    return [str(Path(folder, page, "comments.parquet"))]


# The generation settings a bundle's card states: the decoding settings of the methods that decode
# from prompts, those its method reads (`generation_params`: a trained method has no context documents
# and blocks nothing), or a private-selection method's own block (one level of nesting flattened).
RELEASE_GENERATION_SETTINGS = (
    "generations_per_segment",
    "context_documents",
    "max_new_tokens",
    "temperature",
    "top_p",
    "blocking",
    "max_regenerations",
)


def release_generation_settings(wildcards):
    method = registry.method(wildcards.method)
    if not method.private_selection:
        read = generation_params(method, CONFIG_SETTINGS, "corpus")
        return {key: read[key] for key in RELEASE_GENERATION_SETTINGS if key in read}
    flat = {}
    for key, value in selection_settings(wildcards).items():
        if isinstance(value, dict):
            flat.update({f"{key}.{inner}": v for inner, v in value.items()})
        else:
            flat[key] = value
    return flat
