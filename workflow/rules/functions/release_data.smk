# The rows a bundle's data file ships (release_data.smk).


def release_data_rows(wildcards):
    """Every seed's corpus as written where the method's guarantee bounds its release and nothing filters
    it; else every seed's kept rows (rule release_filter's)."""
    guaranteed = PRIVACY_PROVENANCE.guaranteed_methods([wildcards.method])
    if guaranteed and config["release"]["drop_guaranteed"] == "none":
        return release_runs(CORPUS)(wildcards)
    return release_runs(RELEASE_KEPT)(wildcards)
