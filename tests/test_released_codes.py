"""The control codes of a guaranteed method: the pattern histogram over privacy units, its Gaussian
mechanism and accountant, the prior, and the draws with values from the pools as they are."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from plainsight import accounting
from plainsight.codes.fictional import FictionalPools
from plainsight.codes.released_codes import (
    PATTERN_TYPES,
    RELEASED_ID,
    PatternDomain,
    ReleasedCodeSettings,
    codes_to_draw,
    noised_count,
    noised_histogram,
    pattern_weights,
    release_patterns,
    released_codes_table,
    total_variation,
    training_units,
    unit_histogram,
)

DOMAIN = PatternDomain(ranges=2, max_count=1)
DPSGD = {"epsilon": 8.0, "delta": 1e-5, "privacy_unit": "document"}
HISTOGRAM = ReleasedCodeSettings("histogram", 0.25, 1, 3.0)


def code_row(doc_id: str, segment: int, types: list[str], split: str = "train") -> dict:
    return {
        "doc_id": doc_id,
        "segment": segment,
        "split": split,
        "entities": [{"type": t, "value": f"{t.lower()}{n}"} for n, t in enumerate(types)],
    }


def corpus(rows: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    codes = pd.DataFrame(rows)
    docs = codes[["doc_id", "split"]].drop_duplicates().assign(unit_id=lambda f: "unit-" + f["doc_id"])
    return codes, docs


def cell(segment: int, types: list[str]) -> int:
    return DOMAIN.index((segment, tuple(int(t in types) for t in PATTERN_TYPES)))


def test_the_domain_is_fixed_by_ranges_and_max_count_and_indexes_every_pattern_once():
    assert DOMAIN.size == 2 * 2**7 == 256
    assert [DOMAIN.index(p) for p in DOMAIN.patterns()] == list(range(256))
    # two PERSONs clip at one; MISC is no pattern type
    assert DOMAIN.pattern_of(1, [("PERSON", "a"), ("PERSON", "b"), ("MISC", "c")]) == (
        1,
        (1, 0, 0, 0, 0, 0, 0),
    )
    with pytest.raises(ValueError, match="outside the 2 paragraph ranges"):
        DOMAIN.pattern_of(2, [])


def test_each_unit_adds_weight_one_whatever_its_number_of_segments():
    rows = [code_row("a", 0, ["PERSON"]), code_row("a", 1, ["PERSON"]), code_row("a", 1, ["CODE"])]
    rows += [code_row("a", 0, ["PERSON", "CODE"]), code_row("b", 0, ["PERSON"])]
    rows += [code_row("c", 0, ["PERSON"], split="test")]  # held out: never counted
    codes, docs = corpus(rows)
    with_a = unit_histogram(codes, training_units(codes, docs, "document"), DOMAIN)
    assert with_a.sum() == pytest.approx(2.0)
    assert with_a[cell(0, ["PERSON"])] == pytest.approx(0.25 + 1.0)
    assert (
        with_a[cell(1, ["PERSON"])]
        == with_a[cell(1, ["CODE"])]
        == with_a[cell(0, ["PERSON", "CODE"])]
        == 0.25
    )
    without_a = codes[codes["doc_id"] != "a"]
    less = unit_histogram(without_a, training_units(without_a, docs, "document"), DOMAIN)
    # sensitivity 1 in L1 (and so in L2) for a unit of four segments
    assert np.abs(with_a - less).sum() == pytest.approx(1.0)
    assert np.linalg.norm(with_a - less) == pytest.approx(math.sqrt(4 * 0.25**2))


def test_per_sequence_units_count_every_segment_once():
    codes, docs = corpus([code_row("a", 0, ["PERSON"]), code_row("a", 1, ["PERSON"])])
    histogram = unit_histogram(codes, training_units(codes, docs, "sequence"), DOMAIN)
    assert histogram[cell(0, ["PERSON"])] == histogram[cell(1, ["PERSON"])] == 1.0
    with pytest.raises(ValueError, match="privacy unit"):
        training_units(codes, docs, "patient")


def test_the_noised_histogram_is_seeded_and_has_the_noise_it_claims():
    zeros = np.zeros(100_000)
    first = noised_histogram(zeros, 2.0, "tab", "dpsgd")
    assert np.array_equal(first, noised_histogram(zeros, 2.0, "tab", "dpsgd"))
    assert not np.array_equal(first, noised_histogram(zeros, 2.0, "tab", "other"))
    assert 1.97 < first.std() < 2.03 and abs(first.mean()) < 0.03


def test_draws_follow_the_cells_above_the_threshold_else_the_prior():
    weights = pattern_weights(np.array([5.0, 1.0, -2.0, 7.0]), 2.0, PatternDomain(1, 1))
    assert weights[:4].tolist() == pytest.approx([5 / 12, 0, 0, 7 / 12])
    assert weights[4:].sum() == 0
    uniform = pattern_weights(np.array([1.0, -1.0] + [0.0] * 126), 2.0, PatternDomain(1, 1))
    assert uniform.tolist() == pytest.approx([1 / 128] * 128)


def test_total_variation_known_answers():
    assert total_variation(np.array([1.0, 0.0]), np.array([0.5, 0.5])) == pytest.approx(0.5)
    assert total_variation(np.array([2.0, 0.0]), np.array([0.0, 3.0])) == pytest.approx(1.0)


def gdp_epsilon(mu: float, delta: float) -> float:
    """The exact epsilon at `delta` of a mu-GDP mechanism (Dong, Roth and Su 2022, Corollary 2.13)."""

    def excess(epsilon: float) -> float:
        return norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2) - delta

    return brentq(excess, 0.0, 100.0)


def test_the_accountant_composes_two_gaussians_as_their_exact_gdp():
    # a Gaussian of noise sigma at sensitivity 1 is (1 / sigma)-GDP; two compose to sqrt(2) / sigma
    sigma, delta = 2.0, 1e-5
    exact = gdp_epsilon(math.sqrt(2) / sigma, delta)
    composed = accounting.composed_epsilon([(sigma, 1.0, 1), (sigma, 1.0, 1)], delta)
    assert exact == pytest.approx(2.94, abs=0.01)
    assert gdp_epsilon(1 / sigma, delta) == pytest.approx(1.99, abs=0.01)  # one of them: epsilon 2
    assert composed == pytest.approx(exact, rel=0.01)
    assert composed < 2 * gdp_epsilon(1 / sigma, delta)  # tighter than adding them
    with pytest.raises(ValueError, match="not a Gaussian mechanism"):
        accounting.composed_epsilon([(0.0, 1.0, 1)], delta)


def test_the_histogram_spends_its_share_at_the_methods_delta():
    codes, docs = corpus([code_row(f"d{n}", n % 2, ["PERSON"]) for n in range(40)])
    weights, record = release_patterns(codes, docs, HISTOGRAM, DPSGD, 2, ("tab", "dpsgd"))
    assert record["epsilon"] == 2.0 and record["delta"] == 1e-5
    assert record["noise_multiplier"] == pytest.approx(accounting.gaussian_noise_multiplier(2.0, 1e-5))
    assert accounting.composed_epsilon([(record["noise_multiplier"], 1.0, 1)], 1e-5) == pytest.approx(
        2.0, rel=0.01
    )
    assert len(weights) == DOMAIN.size and weights["weight"].sum() == pytest.approx(1.0)
    # 20 units in each of the two true cells, far above 3 noise deviations (about 6): only they are kept
    assert set(np.flatnonzero(weights["weight"])) == {cell(0, ["PERSON"]), cell(1, ["PERSON"])}
    # 40 units counted on the two kept cells, give or take their noise (6 deviations of about 2)
    assert 28 <= codes_to_draw(record, None) <= 52
    assert noised_count(np.array([5.0, 1.0, -2.0, 7.0]), 2.0) == 12.0
    assert noised_count(np.array([1.0, -3.0]), 2.0) == -2.0
    assert HISTOGRAM.training_block(DPSGD)["epsilon"] == 6.0


def test_the_prior_reads_nothing_and_spends_nothing():
    prior = ReleasedCodeSettings("prior", 0.25, 1, 3.0)
    weights, record = release_patterns(None, None, prior, DPSGD, 2, ("tab", "dpsgd"))
    assert record["epsilon"] == 0.0 and "noise_multiplier" not in record
    assert weights["weight"].tolist() == pytest.approx([1 / 256] * 256)
    assert prior.training_block(DPSGD)["epsilon"] == 8.0
    assert codes_to_draw(record, 24) == 24
    with pytest.raises(ValueError, match="prefix_tuning.generations"):
        codes_to_draw(record, None)


@pytest.mark.parametrize(
    "settings, message",
    [
        (("counts", 0.25, 1, 3.0), "source"),
        (("histogram", 1.0, 1, 3.0), "budget_share"),
        (("histogram", 0.0, 1, 3.0), "budget_share"),
    ],
)
def test_bad_settings_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        ReleasedCodeSettings(*settings)


def test_released_codes_have_their_patterns_and_pool_values_deterministically():
    pools = FictionalPools.from_yaml("resources/fictional_pools.yaml")
    weights = np.zeros(DOMAIN.size)
    weights[cell(1, ["PERSON", "CODE"])] = 1.0
    table = released_codes_table(weights, DOMAIN, pools, 3, seed=1)
    assert table["doc_id"].tolist() == [RELEASED_ID.format(n) for n in range(3)]
    assert (table["segment"] == 1).all() and (table["split"] == "train").all()
    for entities in table["entities"]:
        assert [e["type"] for e in entities] == ["PERSON", "CODE"]
        assert all(e["value"] for e in entities)
    assert table.equals(released_codes_table(weights, DOMAIN, pools, 3, seed=1))
    assert not table["code"].equals(released_codes_table(weights, DOMAIN, pools, 3, seed=2)["code"])
    with pytest.raises(ValueError, match="at least one code"):
        released_codes_table(weights, DOMAIN, pools, 0, seed=1)
