# The seeds, verdict, guarantees, utility table, comments and generation settings of a release
# bundle (release.smk).

import hashlib
import json
from pathlib import Path

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


def release_guarantees(wildcards):
    """The guarantee records of a bundle's seeds; nothing for a method without one."""
    pattern = guarantee_record_pattern(wildcards.method)
    return release_runs(pattern)(wildcards) if pattern else []


def release_audit_tables(wildcards):
    """Where a bundle's verdict comes from: the privacy audit table; for a private-selection method on
    the Table 1 run, the methods table (the same gate on its audit record)."""
    selected = registry.method(wildcards.method).private_selection
    if selected and release_run(wildcards) == METHODS_TABLE_RUN:
        return ["results/tables/methods.csv"]
    return run_audit_table(wildcards)


def release_utility_table(wildcards):
    """The utility table, where the bundle's run is measured (`utility.runs`); the all-methods one for
    a private-selection method."""
    if registry.method(wildcards.method).private_selection:
        return [f"{ALL_METHODS_UTILITY}.csv"]
    return (
        ["results/tables/utility.csv"]
        if release_run(wildcards) in config["utility"]["runs"]
        else []
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
# from prompts, or a private-selection method's own block (one level of nesting flattened).
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
    if not registry.method(wildcards.method).private_selection:
        return {key: config["generation"][key] for key in RELEASE_GENERATION_SETTINGS}
    flat = {}
    for key, value in selection_settings(wildcards).items():
        if isinstance(value, dict):
            flat.update({f"{key}.{inner}": v for inner, v in value.items()})
        else:
            flat[key] = value
    return flat
