# The corpora and formal guarantees of an audited run (released_text_audit.smk); where a method's
# seeds state their guarantee, which the methods table and the release bundles read too.


def run_corpora(pattern):
    """An input function: `pattern` (with {method}) for every configured method of one run and seed."""

    def files(wildcards):
        return expand(pattern, method=config["methods"], **wildcards)

    return files


def audited_guarantees(wildcards):
    """The adapters of one run's DP methods: their training.json holds the claim."""
    return expand(
        "results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}",
        method=AUDITED_GUARANTEED,
        **wildcards,
    )


def guarantee_record_pattern(method):
    """Where a method's seeds state their formal guarantee: a DP-SGD adapter (its training.json holds
    it) or a private-selection corpus's guarantee record; None for a method without one.
    """
    spec = registry.method(method)
    if spec.differentially_private:
        return "results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}"
    if spec.private_selection:
        return "results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}_privacy.json"
    return None
