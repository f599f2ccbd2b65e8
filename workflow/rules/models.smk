# The configured language model, as a folder that loads fast.


rule convert_embedded_model:
    """De-quantise an embedded GGUF model once into a plain model folder."""
    output:
        directory("results/models/base/{model}"),
    log:
        "results/logs/convert_embedded_model/{model}.log",
    conda:
        "../envs/generation.yaml"
    resources:
        mem_mb=4000,
    script:
        "../scripts/convert_embedded_model.py"
