# The corpora a review page shows, the comment files reviewers placed for it and the utility measures
# its summaries state (review.smk).

from pathlib import Path
from types import SimpleNamespace


def review_runs(wildcards):
    """(method, seed) of the corpora a review page shows: those the privacy tables of its dataset,
    setting and identifier set read, without model variants; else every method and seed.
    """
    runs = set()
    for table, spec in PAPER_TABLES.items():
        subject = (spec["dataset"], spec["setting"], spec["idset"])
        if is_privacy_table(table) and subject == (
            wildcards.dataset,
            wildcards.setting,
            wildcards.idset,
        ):
            methods = [m for m in table_methods(table) if registry.base_method(m) == m]
            runs.update((m, int(s)) for m in methods for s in table_seeds(table))
    if not runs:
        runs = {(m, int(s)) for m in config["methods"] for s in SEEDS}
    if config["review"]["seeds"] is not None:
        runs = {(m, s) for m, s in runs if s in config["review"]["seeds"]}
    order = {m: n for n, m in enumerate(config["methods"])}
    return sorted(runs, key=lambda run: (order.get(run[0], len(order)), run[1]))


def review_runs_all_methods(wildcards):
    """The corpora of the all-methods review page: the review page's, then every private-selection
    corpus of its run (those exist on the Table 1 run only)."""
    runs = review_runs(wildcards)
    if release_run(wildcards) == METHODS_TABLE_RUN:
        runs += [
            (method, int(seed))
            for method, seed in ALL_METHODS_SELECTION_RUNS
            if config["review"]["seeds"] is None or seed in config["review"]["seeds"]
        ]
    return runs


def review_files(pattern, runs=review_runs):
    """An input function: `pattern` (with {method} and {seed}) for every corpus of a review page
    (`runs`: its (method, seed) pairs)."""

    def files(wildcards):
        return [
            pattern.format(
                dataset=wildcards.dataset,
                setting=wildcards.setting,
                idset=wildcards.idset,
                method=method,
                seed=seed,
            )
            for method, seed in runs(wildcards)
        ]

    return files


def review_comment_files(wildcards, page=""):
    """The comment files reviewers placed for one page (`page`: its sub-folder, "" for the main one)."""
    folder = Path(config["review"]["comments_dir"]) / wildcards.dataset
    return sorted(
        str(path)
        for path in (folder / wildcards.setting / wildcards.idset / page).glob("*.json")
    )


def all_methods_comment_files(wildcards):
    return review_comment_files(wildcards, ALL_METHODS_PAGE)


def review_utility(wildcards):
    """The utility measures of a review page's run, where the default target measures it (`utility.runs`):
    each method's summary on the page states its utility, or that none was measured."""
    run = release_run(wildcards)
    return [UTILITY_MEASURES.format(**run)] if run in UTILITY_RUNS else []


def all_methods_utility(wildcards):
    """The all-methods page's utility measures: those of every method of its run."""
    return [
        "results/{dataset}/{setting}/{idset}/utility/all_methods_measures.parquet".format(
            **release_run(wildcards)
        )
    ]


def review_page_comments(wildcards, page=""):
    """The comments table of a page (`page`: its sub-folder), where reviewers placed comment files."""
    if not review_comment_files(wildcards, page):
        return []
    folder = "results/review/{dataset}/{setting}/{idset}".format(
        **release_run(wildcards)
    )
    return [str(Path(folder, page, "comments.parquet"))]


def all_methods_page_comments(wildcards):
    return review_page_comments(wildcards, ALL_METHODS_PAGE)


def review_release_methods(wildcards, runs=review_runs):
    """The methods whose release summary a page shows as their bundle's SUMMARY.md
    (`review.release_summaries`): each method of the page; none where the page shows its run's audit.
    """
    if not config["review"]["release_summaries"]:
        return []
    return list(dict.fromkeys(method for method, _ in runs(wildcards)))


def review_release_runs(wildcards, runs=review_runs):
    """(method, seed) of every seed of those methods' bundles (`release_seeds`), in page order."""
    return [
        (method, seed)
        for method in review_release_methods(wildcards, runs)
        for seed in release_seeds(method)
    ]


def review_release_files(pattern, runs=review_runs):
    """An input function: `pattern` for every (method, seed) of `review_release_runs`; a pattern
    without {seed} once per method."""

    def files(wildcards):
        keys = release_run(wildcards)
        return list(
            dict.fromkeys(
                pattern.format(**keys, method=method, seed=seed)
                for method, seed in review_release_runs(wildcards, runs)
            )
        )

    return files


def review_release_guarantees(wildcards, runs=review_runs):
    """(method, guarantee record) of every seed of a bundle on the page whose method states one: they
    pick the bundle's drop rule (`release.drop_guaranteed`)."""
    keys = release_run(wildcards)
    return [
        (method, pattern.format(**keys, method=method, seed=seed))
        for method, seed in review_release_runs(wildcards, runs)
        if (pattern := guarantee_record_pattern(method))
    ]


def review_release_utility(wildcards, runs=review_runs):
    """The utility measures each bundle on the page reads (`release_utility_measures`), one per method."""
    return [
        release_utility_measures(
            SimpleNamespace(**release_run(wildcards), method=method)
        )
        for method in review_release_methods(wildcards, runs)
    ]


def review_frontier(wildcards):
    """The privacy-utility frontier's table and figure (`review.frontier`), on Table 1's page only."""
    folder = config["review"]["frontier"]
    if (
        folder is None
        or {k: wildcards[k] for k in METHODS_TABLE_RUN} != METHODS_TABLE_RUN
    ):
        return []
    return [f"{folder}/frontier.csv", f"{folder}/frontier.png"]
