"""The criteria registry: every criterion declared once, the gate and the evidence plan reading it, the
schema and the docs agreeing with it, and a new criterion needing nothing but its entry."""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from plainsight.audit import criteria
from plainsight.audit.criteria import REGISTRY, Criterion, CriterionPlan, Gate, configurable_criteria
from plainsight.audit.evidence_plan import evidence_plan
from plainsight.audit.gate import verdict
from plainsight.audit.outcomes import FAIL, PASS, bounded
from plainsight.settings import Settings

REPO = Path(__file__).resolve().parents[1]
AUDIT = REPO / "src" / "plainsight" / "audit"


def _gate_schema() -> dict:
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    return schema["properties"]["release"]["properties"]["gate"]["properties"]


def test_the_schema_names_the_registrys_criteria_and_every_threshold_key():
    schema = _gate_schema()
    assert sorted(schema["criteria"]["items"]["enum"]) == sorted(configurable_criteria())
    gate_keys = {f.name for f in fields(Gate)}
    for criterion in REGISTRY.values():
        for key in criterion.threshold_keys:
            assert key in gate_keys and key in schema, (criterion.name, key)


def test_the_docs_give_every_criterion_its_line():
    text = (REPO / "docs" / "methods-and-metrics.md").read_text()
    for name in REGISTRY:
        assert f"| `{name}`" in text, name


def test_filters_leave_only_the_criteria_their_detectors_do_not_judge():
    independent = {name for name, c in REGISTRY.items() if c.filter_independent}
    assert independent == {"text_membership", "verbatim", "adapter_membership"}


def _imports(module: Path) -> set[str]:
    tree = ast.parse(module.read_text())
    return {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}


def test_the_gate_and_the_plan_read_the_registry_not_each_other():
    assert "plainsight.audit.evidence_plan" not in _imports(AUDIT / "gate.py")
    assert "plainsight.audit.gate" not in _imports(AUDIT / "evidence_plan.py")
    assert "plainsight.audit.criteria" in _imports(AUDIT / "gate.py") & _imports(AUDIT / "evidence_plan.py")
    assert "Protocol" not in (AUDIT / "evidence_plan.py").read_text()


@pytest.fixture
def with_a_new_criterion(monkeypatch):
    """A criterion added as one registry entry: the verbatim share itself (not its excess) at most 0.3."""
    entry = Criterion(
        "verbatim_share",
        ("verbatim_excess_max",),
        lambda row, gate: bounded(row.get("share_low"), row.get("share_high"), 0.3, "verbatim share"),
        lambda gate, run: [CriterionPlan("verbatim_share", "all methods", "texts", "-", "any", "any")],
        ("verbatim",),
        filter_independent=True,
    )
    monkeypatch.setitem(REGISTRY, entry.name, entry)
    return entry


def test_a_new_criterion_is_one_entry_the_gate_and_the_plan_both_use(with_a_new_criterion):
    gate = Gate(criteria=("verbatim_share",))
    assert "verbatim_share" in criteria.configurable_criteria()
    assert verdict({"share_low": 0.1, "share_high": 0.2}, gate, trained=False)["verdict"] == PASS
    judged = verdict({"share_low": 0.4, "share_high": 0.5}, gate, trained=False)
    assert (
        judged["verdict"] == FAIL
        and judged["verdict_reasons"] == "verbatim_share: FAIL (verbatim share >= 0.40 (max 0.30))"
    )
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    assert [p.criterion for p in evidence_plan(gate, Settings.from_config(config))] == ["verbatim_share"]


def test_an_unknown_criterion_stops_with_the_known_ones_listed():
    with pytest.raises(ValueError, match=r"unknown \['adapter_membership'\]"):
        Gate(criteria=("adapter_membership",))  # chosen by the threat model, never by the list
