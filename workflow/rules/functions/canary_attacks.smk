# The canary adapter an attack scores with and the DP-SGD claim of a canary run (canary_attacks.smk);
# the canary runs whose attacks and claims a release bundle reads (release.smk).


def canary_adapter_input(wildcards):
    """A trained method's canary adapter and the base model, for the likelihood-ratio attack."""
    if not registry.method(wildcards.method).trained:
        return {}
    return {
        "adapter": "{run}/models/{method}".format(
            run=CANARY_RUN.format(**wildcards), method=wildcards.method
        ),
        "model": model_input(config["model"]["name_or_path"]),
    }


def canary_dp_record(run):
    """The training.json of a run's DP-SGD canary adapter (its accountant's claim); '' for other methods."""
    if not registry.method(run["method"]).differentially_private:
        return ""
    return "{run}/models/{method}/training.json".format(
        run=CANARY_RUN.format(**run), method=run["method"]
    )


def release_canary_runs(wildcards):
    """The canaried runs of a bundle's seeds, where the canaries are in the verdict
    (`audit.canaries.in_verdict`) and the method writes a canary corpus (the decoded methods).
    """
    if (
        not AUDIT["canaries"]["in_verdict"]
        or registry.method(wildcards.method).private_selection
    ):
        return []
    return [
        {**release_run(wildcards), "method": wildcards.method, "seed": seed}
        for seed in release_seeds(wildcards.method)
    ]


def release_canaries(wildcards):
    """The canary attacks and designs of a bundle's seeds (rule canary_table's inputs for its runs)."""
    runs = release_canary_runs(wildcards)
    return {
        "canary_attacks": [
            f"{CANARY_RUN}/{{method}}_attacks.parquet".format(**run) for run in runs
        ],
        "canary_designs": [f"{CANARY_RUN}/canaries.json".format(**run) for run in runs],
        "canary_adapters": [
            str(Path(canary_dp_record(run)).parent)
            for run in runs
            if canary_dp_record(run)
        ],
    }


def release_canary_claims(wildcards):
    """The DP-SGD claim of each canary run of a bundle (None for a method without one)."""
    return [canary_dp_record(run) or None for run in release_canary_runs(wildcards)]
