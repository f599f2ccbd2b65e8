# The settings, paths and input functions of the released control codes (released_codes.smk).

from plainsight.codes.released_codes import ReleasedCodeSettings

RELEASED_CODES = ReleasedCodeSettings.from_config(config["codes"]["released"])
RELEASED_PATTERNS = (
    "results/{dataset}/{setting}/{idset}/released_codes/{method}/patterns"
)
RELEASED_CODES_TABLE = (
    "results/{dataset}/{setting}/{idset}/released_codes/{method}/seed{seed}.parquet"
)
# The DP-SGD block its adapter trains with: its epsilon less the codes' share.
DP_TRAINING = RELEASED_CODES.training_block(config["dpsgd"])


def released_pattern_inputs(wildcards):
    """What the pattern mechanism reads: the real codes and their units for the histogram; nothing for
    the prior."""
    if RELEASED_CODES.source == "prior":
        return {}
    return {
        "docs": DOCS.format(**wildcards),
        "codes": CODES.format(**wildcards),
    }


def trained_code_tables(wildcards):
    """The codes a trained method's corpus is written from: its released codes where the method has a
    formal guarantee, else the real codes and the seed's fictional codes of the real segments.
    """
    if registry.method(wildcards.method).differentially_private:
        released = RELEASED_CODES_TABLE.format(**wildcards)
        return {"codes": released, "fictional": released}
    return {
        "codes": CODES.format(**wildcards),
        "fictional": "results/{dataset}/{setting}/{idset}/fictional/seed{seed}.parquet".format(
            **wildcards
        ),
    }
