# Where the real control codes of a setting come from, for rule control_codes (codes.smk).


def code_sources(wildcards):
    """Where a setting's private values come from: gold spans (known) or Presidio (unknown)."""
    if wildcards.setting == "known":
        return SPANS.format(dataset=wildcards.dataset)
    return f"results/{wildcards.dataset}/unknown/detected.parquet"
