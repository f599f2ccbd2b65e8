# The configured language model, as a folder that loads fast.


def model_source(name_or_path):
    """What a job loads: the converted folder of an embedded model, else the id or path itself."""
    from plainsight.models import is_embedded

    if is_embedded(name_or_path):
        return f"results/models/base/{name_or_path}"
    return name_or_path


def model_input(name_or_path):
    """The converted folder as a job input, so it is built first; nothing for hub ids."""
    from plainsight.models import is_embedded

    return [model_source(name_or_path)] if is_embedded(name_or_path) else []


def variant_model(wildcards):
    """The model a method runs with: `model`, or `model_large` for a `.large` method variant."""
    from plainsight.methods.registry import model_config_key

    return config[model_config_key(wildcards.method)]["name_or_path"]


rule convert_embedded_model:
    """De-quantise an embedded GGUF model once into a plain model folder."""
    output:
        directory("results/models/base/{model}"),
    log:
        "results/logs/convert_embedded_model/{model}.log",
    resources:
        mem_mb=4000,
    conda:
        "../../envs/generation.yaml"
    script:
        "../../scripts/convert_embedded_model.py"
