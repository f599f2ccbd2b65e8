# What a MAUVE-text job writes with, and the synthetic corpora of one utility run (evaluation.smk).


def trained_adapter(wildcards):
    """The adapter a trained method writes with; nothing for in-context methods."""
    if registry.method(wildcards.method).trained:
        return "results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}".format(
            **wildcards
        )
    return []


def selection_corpus(wildcards):
    """A private-selection method's corpus, from which its MAUVE texts are taken; nothing for the others."""
    if registry.method(wildcards.method).private_selection:
        return CORPUS.format(**wildcards)
    return []


def utility_corpus_keys(with_private_selection=False):
    """(method, seed) of every corpus a utility run reads, in the config's order, then the
    zero-learning corpus of each seed (the audit's negative control: what the base model writes
    without the private data, which every method's scores are read beside); with the
    private-selection methods at their own seeds (the only corpora they write) when asked.
    """
    keys = [
        {"method": method, "seed": seed}
        for method in [*config["methods"], NEGATIVE_CONTROL]
        for seed in config["utility"]["seeds"]
    ]
    if with_private_selection:
        keys += [
            {"method": method, "seed": seed}
            for method, seed in ALL_METHODS_SELECTION_RUNS
        ]
    return keys


def utility_corpora(wildcards):
    return [CORPUS.format(**wildcards, **key) for key in utility_corpus_keys()]


def all_methods_utility_corpora(wildcards):
    return [
        CORPUS.format(**wildcards, **key)
        for key in utility_corpus_keys(with_private_selection=True)
    ]
