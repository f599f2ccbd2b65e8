# The corpora and formal guarantees of an audited run (released_text_audit.smk); where a method's
# seeds state their guarantee, which the methods table and the release bundles read too.


def run_corpora(pattern):
    """An input function: `pattern` (with {method}) for every configured method of one run and seed."""

    def files(wildcards):
        return expand(pattern, method=config["methods"], **wildcards)

    return files


def audited_mechanisms(wildcards):
    """(method, record) of every mechanism on the paths from private data to one run's and seed's corpora
    of its DP methods (resources/privacy_provenance.yaml): the adapter's training and the released code
    patterns, which the audit composes into the corpus's claim."""
    run = {key: wildcards[key] for key in ("dataset", "setting", "idset")}
    return [
        (method, path)
        for method in AUDITED_GUARANTEED
        for _, path in mechanism_records(
            PRIVACY_PROVENANCE, method, run, [int(wildcards.seed)]
        )
    ]


def audited_guarantees(wildcards):
    return [path for _, path in audited_mechanisms(wildcards)]


def audited_guarantee_methods(wildcards):
    """The method of each of `audited_guarantees`, in its order."""
    return [method for method, _ in audited_mechanisms(wildcards)]


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
