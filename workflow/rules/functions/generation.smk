# The shard a generate job writes, and a private-selection method's settings (generation.smk).


def generation_shard(wildcards):
    """Which shard of its corpus a generate job writes (index 0-based)."""
    return {"index": int(getattr(wildcards, "shard", 0)), "count": GENERATION_SHARDS}


def selection_settings(wildcards):
    """The config block of a private-selection method: the block of its name."""
    return config[registry.base_method(wildcards.method)]


def selection_pii(wildcards):
    """The PII patterns a seed-rewriting method redacts with; nothing for the others."""
    if registry.method(wildcards.method).rewrites_seeds:
        return selection_settings(wildcards)["pii_patterns"]
    return []
