"""The config's typed settings: the schema's defaults, the delta rule, and one clear error per bad key."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest
import yaml

from plainsight.errors import InputError
from plainsight.settings import (
    LARGEST_DEFAULT_DELTA,
    CanariesConfig,
    DownstreamConfig,
    PrefixConfig,
    Settings,
    config_block,
    dp_delta,
)

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text(encoding="utf-8"))


def default_config() -> dict:
    return yaml.safe_load((REPO / "config/config.yaml").read_text(encoding="utf-8"))


def schema_defaults(node: dict, kind: type, key: str = "") -> list[tuple[str, object, object]]:
    """(key, the schema's default, the settings' default) of every property with a default in the
    schema, walking the settings' blocks along the schema's."""
    pairs = []
    hints = typing.get_type_hints(kind)
    fields = {f.name: f for f in dataclasses.fields(kind)}
    for name, prop in node.get("properties", {}).items():
        spec, path = fields[name], f"{key}.{name}".lstrip(".")
        if "default" in prop:
            default = spec.default if spec.default_factory is dataclasses.MISSING else spec.default_factory()
            pairs.append((path, prop["default"], default))
        inner = [t for t in (hints[name], *typing.get_args(hints[name])) if dataclasses.is_dataclass(t)]
        if inner and "properties" in prop:
            pairs += schema_defaults(prop, inner[0], path)
    return pairs


def test_every_default_is_the_schemas():
    pairs = schema_defaults(SCHEMA, Settings)
    assert [key for key, *_ in pairs] == [
        "metrics.linkage_quasi_min",
        "metrics.code_runs",
        "utility.mauve.resamples",
        "release.drop_guaranteed",
        "release.in_all",
        "release.sign_off",
        "release.gate",  # as written: its keys' defaults stay with the gate's own parsing
        "audit.canaries.persons",
        "audit.canaries.persons.count",
        "audit.canaries.persons.documents",
        "audit.canaries.in_verdict",
        "review",
        "review.seeds",
        "review.release_summaries",
        "review.comments_dir",
        "review.frontier",
        "prefix_tuning.init_from",
        "prefix_tuning.projection_hidden",
        "prefix_tuning.warmup_steps",
        "prefix_tuning.lr_schedule",
        "prefix_tuning.objective",
        "prefix_tuning.checkpoint_every_steps",
        "dpsgd.privacy_unit",
        "dpsgd.delta",
    ]
    for key, schema_default, default in pairs:
        if dataclasses.is_dataclass(default):  # a block's default: the schema's mapping, its defaults filled
            assert default == config_block(type(default), schema_default, key), key
        else:
            assert (list(default) if isinstance(default, tuple) else default) == schema_default, key
    assert Settings.from_config(default_config()).review.seeds == (1,)


def test_the_demo_config_resolves_to_its_values():
    settings = Settings.from_config(default_config())
    assert settings.generation.generations_per_segment == 6
    assert settings.dpsgd.delta is None and settings.dpsgd.privacy_unit == "document"
    assert settings.datasets["tab"].segments == ((1, 6), (6, 12))
    assert settings.in_context_generations("tab") == 12  # 6 per range, 2 ranges
    assert settings.block("rpsg") is settings.rpsg
    with pytest.raises(KeyError, match="no config block 'resources_x'"):
        settings.block("resources_x")


def test_a_default_applies_where_the_key_is_left_out():
    config = default_config()
    del config["prefix_tuning"]["warmup_steps"], config["dpsgd"]["delta"]
    settings = Settings.from_config(config)
    assert settings.prefix_tuning.warmup_steps == 3 and settings.dpsgd.delta is None
    assert settings.prefix_tuning.sequence_tokens() == 20 + 128  # 20 virtual tokens and max_length 128


def test_the_delta_rule_at_10_and_at_20000_units():
    assert dp_delta(None, 10) == 1e-5 == LARGEST_DEFAULT_DELTA  # min(1e-5, 1 / 100)
    assert dp_delta(None, 10_000) == 1e-5  # 1 / 100,000: the two rules meet
    assert dp_delta(None, 20_000) == pytest.approx(5e-6, rel=1e-12)  # 1 / 200,000
    assert dp_delta(1e-3, 20_000) == 1e-3  # a configured delta is kept, whatever N


@pytest.mark.parametrize(
    "change, key, problem",
    [
        ({"generation": {"max_new_tokens": "many"}}, "generation.max_new_tokens", "'many' is not an int"),
        ({"generation": {"max_new_tokens": True}}, "generation.max_new_tokens", "True is not an int"),
        ({"generation": {"batch_size": "some"}}, "generation.batch_size", "'some' is not an int"),
        (
            {"dpsgd": {"privacy_unit": "patient"}},
            "dpsgd.privacy_unit",
            "'patient' is not one of document, sequence",
        ),
        ({"dpsgd": {"delta": "small"}}, "dpsgd.delta", "'small' is not a float"),
        ({"audit": {"canaries": {"repeats": [1, "x"]}}}, "audit.canaries.repeats[1]", "'x' is not an int"),
        ({"resources": {"gpu_memoryy_gb": 80}}, "resources.gpu_memoryy_gb", "unknown key"),
        ({"datasets": {"tab": {"segments": [[1, 6, 9]]}}}, "datasets.tab.segments[0]", "is not a list of 2"),
        ({"metrics": {"code_runs": {"min_digits": 0}}}, "metrics.code_runs", "min_digits must be at least 1"),
        ({"datasets": {"tab": {"split": "coin"}}}, "datasets.tab", "give them"),
        ({"datasets": {"tab": {"split": "random"}}}, "datasets.tab.split", "is not one of given, coin"),
        (
            {"metrics": {"code_runs": {"entity_types": ["SERIAL"]}}},
            "metrics.code_runs",
            "unknown entity types",
        ),
        (
            {"metrics": {"code_runs": {"entity_types": "CODE"}}},
            "metrics.code_runs.entity_types",
            "not a list",
        ),
    ],
)
def test_a_wrong_type_or_an_unknown_value_or_key_stops_naming_the_key(change, key, problem):
    config = default_config()
    for block, values in change.items():
        for name, value in values.items():
            if isinstance(value, dict):
                config[block][name].update(value)
            else:
                config[block][name] = value
    with pytest.raises(InputError, match="^config: " + key.replace("[", r"\[").replace("]", r"\]")) as error:
        Settings.from_config(config)
    assert problem in error.value.problem


def test_a_missing_required_key_is_named():
    config = default_config()
    del config["generation"]["shards"]
    with pytest.raises(InputError, match="^config: generation.shards: missing$"):
        Settings.from_config(config)


def test_a_job_builds_its_block_from_its_param_as_written():
    downstream = default_config()["utility"]["downstream"]
    block = config_block(DownstreamConfig, downstream, "utility.downstream")
    assert block.encoder.max_length == downstream["encoder"]["max_length"]
    with pytest.raises(InputError, match="^config: utility.downstream.classifier: 'svm' is not one of"):
        config_block(DownstreamConfig, {**downstream, "classifier": "svm"}, "utility.downstream")


def test_the_canary_count_and_the_settings_are_frozen():
    canaries = Settings.from_config(default_config()).audit.canaries
    assert isinstance(canaries, CanariesConfig)
    assert canaries.count() == canaries.single + canaries.per_repeat * len(canaries.repeats)
    with pytest.raises(dataclasses.FrozenInstanceError):
        canaries.single = 3  # type: ignore[misc]
    assert PrefixConfig.__dataclass_params__.frozen


def test_a_dp_sgd_runs_units_give_the_delta_its_canaries_and_released_text_are_stated_at():
    import pandas as pd

    from plainsight.methods.trained import privacy_units

    docs = pd.DataFrame({"doc_id": ["a", "b", "c", "d"], "unit_id": ["p1", "p1", "p2", "p3"]})
    codes = pd.DataFrame(
        {
            "doc_id": ["a", "a", "b", "b", "c", "c", "d"],
            "segment": [0, 1, 0, 1, 0, 1, 0],
            "split": ["train"] * 6 + ["test"],
        }
    )
    # documents a, b (patient p1) and c (p2) train: 2 units; 6 training sequences
    assert privacy_units(docs, codes, "document") == 2
    assert privacy_units(docs, codes, "sequence") == 6
    assert dp_delta(None, privacy_units(docs, codes, "document")) == 1e-5
