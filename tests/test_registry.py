"""The method registry: each method's family and behaviour, model variants, and the rules' wildcard
patterns."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from plainsight.methods import registry
from plainsight.methods.registry import (
    base_method,
    method,
    model_config_key,
    names,
    wildcard_pattern,
    with_variant,
)

REPO_CONFIG = Path(__file__).resolve().parents[1] / "config/config.yaml"


def test_the_paper_methods_and_their_families():
    assert names("in_context") == ("baseline", "icl", "icl_pe")
    assert names("trained") == ("ft", "ft_mask", "dpsgd")
    assert [m.name for m in registry.METHODS.values() if m.blocks_context_values] == ["icl_pe"]
    without_codes = [m.name for m in registry.METHODS.values() if not m.shows_codes]
    assert without_codes == ["baseline", "rpsg", "aug_pe", "dp_topics"]
    assert method("ft_mask").masked_objective and not method("ft").masked_objective
    assert method("dpsgd").differentially_private and method("dpsgd").trained
    assert all(m.training is None for m in registry.METHODS.values() if m.in_context)


def test_the_training_free_private_generators():
    assert names("private_selection") == ("rpsg", "aug_pe", "dp_topics")
    rpsg, aug_pe, topics = method("rpsg"), method("aug_pe"), method("dp_topics")
    assert rpsg.private_selection and aug_pe.private_selection and topics.private_selection
    assert topics.selection == "topic_histogram"
    # each generator is exactly one of the three kinds of selection
    assert [(m.rewrites_seeds, m.evolves, m.writes_from_topics) for m in (rpsg, aug_pe, topics)] == [
        (True, False, False),
        (False, True, False),
        (False, False, True),
    ]
    assert not any(m.trained or m.in_context or m.differentially_private for m in (rpsg, aug_pe, topics))
    assert all(m.selection is None for m in registry.METHODS.values() if not m.private_selection)
    pattern = re.compile(wildcard_pattern("private_selection"))
    assert all(pattern.fullmatch(n) for n in ("rpsg", "aug_pe", "aug_pe.large"))
    assert not any(pattern.fullmatch(n) for n in ("icl", "ft", "rpsgx"))
    registry.check_family(["aug_pe", "rpsg.large"], "private_selection", "private_selection.methods")
    with pytest.raises(
        ValueError, match=r"^private_selection.methods: 'icl' is not a private_selection method"
    ):
        registry.check_family(["rpsg", "icl"], "private_selection", "private_selection.methods")


def test_each_guarantee_declares_what_it_protects():
    """DP-SGD samples and clips whole privacy units, Aug-PE scales each unit's votes to norm 1, RPSG's
    selection reads one seed (a training segment); in-context and plain fine-tuning have no guarantee."""
    protects = {name: m.protects for name, m in registry.METHODS.items()}
    assert protects == {
        "baseline": None,
        "icl": None,
        "icl_pe": None,
        "ft": None,
        "ft_mask": None,
        "dpsgd": "unit",
        "rpsg": "segment",
        "aug_pe": "unit",
        "dp_topics": "unit",
    }
    assert method("aug_pe.large").protects == "unit"
    assert registry.PROTECTED["unit"].startswith("privacy unit (the docs' `unit_id`")
    assert registry.PROTECTED["segment"] == "training segment"


def test_a_model_variant_is_its_method_run_with_another_model():
    assert method("icl_pe.large") is method("icl_pe")
    assert base_method("icl_pe.large") == "icl_pe" and base_method("ft") == "ft"
    assert model_config_key("icl.large") == "model_large" and model_config_key("icl") == "model"
    assert with_variant("icl", "large") == "icl.large" and with_variant("icl", None) == "icl"


@pytest.mark.parametrize("name", ["icl-pe", "ICL", "icl.huge", "", "ft_mask.large.large"])
def test_an_unknown_method_is_one_error_listing_the_known_ones(name):
    with pytest.raises(
        ValueError, match=r"unknown method .*icl, icl_pe, ft, ft_mask, dpsgd, rpsg, aug_pe, dp_topics"
    ):
        method(name)


def test_wildcard_patterns_take_exactly_the_family():
    in_context = re.compile(wildcard_pattern("in_context"))
    trained = re.compile(wildcard_pattern("trained", variants=False))
    assert all(in_context.fullmatch(n) for n in ("baseline", "icl", "icl_pe", "icl.large", "icl_pe.large"))
    assert not any(in_context.fullmatch(n) for n in ("ft", "icl_pe.small", "icl_pex", "xicl"))
    assert all(trained.fullmatch(n) for n in ("ft", "ft_mask", "dpsgd"))
    assert not any(trained.fullmatch(n) for n in ("ft.large", "icl", "ft_maskx"))


def test_the_default_config_names_registered_methods():
    config = yaml.safe_load(REPO_CONFIG.read_text(encoding="utf-8"))
    assert [method(name).name for name in config["methods"]] == list(config["methods"])


def test_only_a_method_that_blocks_values_regenerates():
    from plainsight.methods.registry import method

    assert method("icl_pe").regenerations(3) == 3
    assert method("icl_pe.large").regenerations(3) == 3
    assert [
        method(name).regenerations(3)
        for name in ("baseline", "icl", "ft", "ft_mask", "dpsgd", "rpsg", "aug_pe", "dp_topics")
    ] == [0] * 8


def test_the_audit_adds_the_private_selection_methods_outside_methods():
    from plainsight.settings import Settings

    config = yaml.safe_load((Path(__file__).parents[1] / "config/config.yaml").read_text(encoding="utf-8"))
    config["private_selection"]["methods"] = ["rpsg", "aug_pe"]
    settings = Settings.from_config({**config, "methods": ["icl", "rpsg"]})
    assert registry.audited_private_selection(settings) == ["aug_pe"]
    assert (
        registry.audited_private_selection(Settings.from_config({**config, "methods": ["rpsg", "aug_pe"]}))
        == []
    )
