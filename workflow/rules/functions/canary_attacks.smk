# The canary adapter an attack scores with, and the DP-SGD claim of a canary run (canary_attacks.smk).


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
