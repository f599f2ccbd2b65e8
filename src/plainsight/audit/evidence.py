"""Leak rates against their held-out control, and what a sample of this size could detect.

For each leak measure (`plainsight.evaluation.held_out`) a corpus has a member rate (generations, or
distinct values, that leak from what the method saw) and a control rate (the same matcher against what it
did not see). The evidence is their difference, the **excess**, and `excess_of` is its one entry point.
Each design is judged by one test, and everything it reports comes from that test:

- paired design (in-context methods, one matched control per generation): excess = (b - c) / n with b
  generations that hit only the member side and c only the control side. p-value of the zero-learning
  null (excess <= 0): McNemar's exact one-sided test (binomial b of b + c at 1/2). One-sided 95% bounds
  from the **discordant cells**, whose difference the excess is: upper = CP_hi(b of n) - CP_lo(c of n),
  lower = CP_lo(b of n) - CP_hi(c of n), each Clopper-Pearson bound one-sided at 97.5% (Bonferroni
  over the two cells). Generations that hit both sides or neither do not widen it.
- unpaired design (trained methods, distinct values), with per-document counts: values cluster within
  documents (a document that the corpus echoes gives many of its values at once), so the **document**
  is the unit. p-value: a permutation test that swaps whole documents of the same size between the sides
  (`document_permutation_p_value`); bounds: each side's rate bounded by a Clopper-Pearson
  bound at the effective sample size, the items over their design effect at the upper confidence bound
  of the observed within-document correlation (`document_rate_bounds`, which never certifies more than
  the documents can without an assumption on the dependence within one), one-sided at 97.5%, combined
  as above.
- unpaired design without per-document counts (a control record without them, or a measure that does
  not attribute its items to documents): Fisher's exact one-sided test and Clopper-Pearson bounds on
  each side's rate, which take values as independent; where values cluster, both are too narrow.

**Power.** "Could detect >= X" is the smallest excess (on a grid of `DETECTABLE_STEP`) at which the test
that was run rejects with probability at least 80% at one-sided 5%: exactly, by enumerating McNemar's
and Fisher's rejection regions (`mcnemar_power`, `fisher_power`), and by simulating the permutation test
itself for documents (`cluster_power`). The alternatives each assumes are stated with those functions.
For AUCs, significance and the detectable AUC share one level: one-sided 2.5% (`detectable_auc`).

Under (epsilon, delta)-DP a member's hit rate is at most e^epsilon times the control's plus delta
(`dp_null_p_value`); at large epsilon no feasible number of controls can reject that
(`dp_null_controls_needed`). `released_text_epsilon` is the empirical epsilon lower bound that the leak
counts imply when read as a membership attack (hit = "member").
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.stats import beta, binom, binomtest, chi2, fisher_exact, norm

from plainsight.audit.epsilon import clopper_pearson, epsilon_lower_bound
from plainsight.evaluation.intervals import small_sample_factor
from plainsight.evaluation.measures import LeakMeasure

ALPHA = 0.05  # one-sided tests; each one-sided bound is at 95%
POWER = 0.8
# An AUC is significant when its 95% bootstrap interval lies above 0.5: one-sided 2.5%. The detectable
# AUC uses the same level, so that "could detect" describes the interval the table reports.
AUC_ALPHA = ALPHA / 2
CELL_CONFIDENCE = 1 - ALPHA / 2  # each of the two one-sided bounds a difference combines (Bonferroni)
DETECTABLE_STEP = 0.001  # the grid of detectable excesses
PERMUTATIONS = 2000  # random arrangements of the permutation test; every one when there are no more
PERMUTATION_SEED = 0
POWER_SIMULATIONS = 1000  # simulated corpora per effect size when the permutation test's power is found
POWER_PERMUTATIONS = 500  # swaps per simulated corpus: fewer than the test's, which can only lower its power
POWER_SEED = 1
MIN_SPREAD_DOCUMENTS = 5  # documents with a hit (and with a miss) that the between-document variance needs
LEAKS, NO_LEAK, INCONCLUSIVE = "leaks", "no leak detected", "inconclusive"
MCNEMAR, FISHER, DOCUMENT_PERMUTATION = "mcnemar_exact", "fisher_exact", "document_permutation"

DocumentCounts = Sequence[Sequence[int]]  # [held, total] per document


@dataclass(frozen=True)
class Excess:
    member_rate: float
    control_rate: float
    excess: float
    excess_low: float  # one-sided 95% lower bound
    excess_high: float  # one-sided 95% upper bound
    p_value: float  # zero-learning null: the excess is at most 0
    detectable: float  # the smallest excess this test detects with 80% power (inf: none)
    members: int
    controls: int
    design: str  # paired | unpaired
    inference: str  # the test behind p_value and detectable: MCNEMAR, FISHER or DOCUMENT_PERMUTATION


# --- the smallest detectable excess ----------------------------------------------------------------


def _smallest_detectable(power_at: Callable[[float], float], largest: float) -> float:
    """The smallest multiple of DETECTABLE_STEP (or `largest`, the largest excess the rates allow) at
    which `power_at` reaches POWER; inf when even `largest` does not. Power grows with the excess, so a
    bisection over the grid finds it."""
    if largest <= 0 or power_at(largest) < POWER:
        return math.inf
    steps = math.ceil(largest / DETECTABLE_STEP - 1e-9)

    def excess(step: int) -> float:
        return min(round(step * DETECTABLE_STEP, 10), largest)

    low, high = 0, steps  # the power at an excess of 0 is at most ALPHA
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if power_at(excess(middle)) >= POWER else (middle, high)
    return excess(high)


def _smallest_rejected(p_value: Callable[[int], float], low: int, high: int) -> int:
    """The smallest count in [low, high] whose p-value is under ALPHA, where p-values fall as the count
    grows; high + 1 when none is."""
    if p_value(high) >= ALPHA:
        return high + 1
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if p_value(middle) < ALPHA else (middle + 1, high)
    return low


# --- paired design: McNemar's exact test ------------------------------------------------------------


@lru_cache(maxsize=64)
def mcnemar_critical(n: int) -> np.ndarray:
    """For every number d = b + c of discordant pairs up to `n`, the smallest member-only count b that
    McNemar's exact one-sided test rejects (binomtest(b, d, 1/2, "greater") < ALPHA); d + 1 where none."""
    return np.array(
        [_smallest_rejected(lambda b, d=d: float(binom.sf(b - 1, d, 0.5)), 0, d) for d in range(n + 1)]
    )


def mcnemar_power(member_only_rate: float, control_only_rate: float, n: int) -> float:
    """The exact probability that McNemar's one-sided test rejects on `n` pairs whose cells are member
    only, control only and concordant with probabilities (member_only_rate, control_only_rate, rest):
    the trinomial summed over the rejection region, as the number of discordant pairs and the member-only
    share of them."""
    discordant = member_only_rate + control_only_rate
    if discordant <= 0:
        return 0.0
    d = np.arange(n + 1)
    member_share = member_only_rate / discordant
    rejected = binom.sf(mcnemar_critical(n) - 1, d, member_share)
    return float(np.sum(binom.pmf(d, n, min(discordant, 1.0)) * rejected))


def detectable_paired_excess(control_only_rate: float, n: int) -> float:
    """The smallest excess McNemar's test finds with 80% power on `n` pairs, assuming the control-only
    rate stays what was observed (`control_only_rate`, c / n) and the member-only rate is that plus the
    excess: the leak adds generations that hit the member side alone."""
    control_only_rate = min(max(control_only_rate, 0.0), 1.0)
    return _smallest_detectable(
        lambda x: mcnemar_power(control_only_rate + x, control_only_rate, n), 1 - 2 * control_only_rate
    )


# --- unpaired design without documents: Fisher's exact test -----------------------------------------


def _fisher_p(k1: int, n1: int, k2: int, n2: int) -> float:
    return float(fisher_exact([[k1, n1 - k1], [k2, n2 - k2]], alternative="greater").pvalue)


@lru_cache(maxsize=64)
def fisher_critical(n1: int, n2: int, k2_low: int = 0, k2_high: int | None = None) -> np.ndarray:
    """For every control count k2 in [k2_low, k2_high] (default all of 0..n2), the smallest member count
    k1 that Fisher's exact one-sided test rejects; n1 + 1 where none. The region is monotone (a rejected
    table stays rejected with one member hit more or one control hit fewer), so each k2's boundary is
    searched from the previous one's."""
    k2_high = n2 if k2_high is None else k2_high
    critical, low = [], 0
    for k2 in range(k2_low, k2_high + 1):
        low = _smallest_rejected(lambda k1, k2=k2: _fisher_p(k1, n1, k2, n2), low, n1)
        critical.append(low)
    return np.array(critical)


def fisher_power(member_rate: float, control_rate: float, n1: int, n2: int) -> float:
    """The exact probability that Fisher's one-sided test rejects when n1 member items hit independently
    at `member_rate` and n2 control items at `control_rate`: the two binomials summed over the rejection
    region (control counts with probability under 1e-12 left out)."""
    k2_low, k2_high = (int(binom.ppf(1e-12, n2, control_rate)), int(binom.isf(1e-12, n2, control_rate)))
    k2_low, k2_high = max(0, min(k2_low, n2)), max(0, min(k2_high, n2))
    k2 = np.arange(k2_low, k2_high + 1)
    rejected = binom.sf(fisher_critical(n1, n2, k2_low, k2_high) - 1, n1, min(member_rate, 1.0))
    return float(np.sum(binom.pmf(k2, n2, control_rate) * rejected))


def detectable_unpaired_excess(control_rate: float, n_members: int, n_controls: int) -> float:
    """The smallest excess Fisher's test finds with 80% power, for independent items at the observed
    control rate and the member rate that plus the excess, with the actual sizes."""
    control_rate = min(max(control_rate, 0.0), 1.0)
    return _smallest_detectable(
        lambda x: fisher_power(control_rate + x, control_rate, n_members, n_controls), 1 - control_rate
    )


# --- unpaired design with documents: permutation over documents, design-effect bounds ---------------


def document_arrays(documents: DocumentCounts) -> tuple[np.ndarray, np.ndarray]:
    """(held, total) per document, documents without items left out (they weigh nothing)."""
    counts = np.array([[int(held), int(total)] for held, total in documents], dtype=np.int64).reshape(-1, 2)
    if (counts < 0).any() or (counts[:, 0] > counts[:, 1]).any():
        raise ValueError("per-document counts need 0 <= held <= total")
    counts = counts[counts[:, 1] > 0]
    return counts[:, 0], counts[:, 1]


@lru_cache(maxsize=64)
def document_assignments(
    member_sizes: tuple[int, ...], control_sizes: tuple[int, ...], permutations: int = PERMUTATIONS
) -> np.ndarray:
    """Which documents go to the member side, one arrangement per row, the observed one (the member
    documents first) first. Documents trade places only with documents of as many items: the sides keep
    their sizes, so a test of rates cannot mistake one side's smaller documents for a leak. Every such
    arrangement where there are at most PERMUTATIONS, else `permutations` drawn with PERMUTATION_SEED
    after the observed one."""
    sizes = np.array([*member_sizes, *control_sizes])
    observed = np.arange(len(sizes)) < len(member_sizes)
    strata = [np.flatnonzero(sizes == size) for size in sorted(set(sizes.tolist()))]
    arrangements = math.prod(math.comb(len(stratum), int(observed[stratum].sum())) for stratum in strata)
    if arrangements <= permutations:
        choices = [
            itertools.combinations(stratum.tolist(), int(observed[stratum].sum())) for stratum in strata
        ]
        rows = []
        for chosen in itertools.product(*choices):
            row = np.zeros(len(sizes), dtype=bool)
            row[[index for part in chosen for index in part]] = True
            rows.append(row)
        # the observed arrangement first, as the Monte Carlo rows have it
        rows.sort(key=lambda row: not np.array_equal(row, observed))
        return np.array(rows)
    rng = np.random.default_rng(PERMUTATION_SEED)
    drawn = np.tile(observed, (permutations, 1))
    for stratum in strata:
        drawn[:, stratum] = rng.permuted(drawn[:, stratum], axis=1)
    return np.vstack([observed, drawn])


def document_permutation_p_values(
    member_hits: np.ndarray,
    member_totals: np.ndarray,
    control_hits: np.ndarray,
    control_totals: np.ndarray,
    permutations: int = PERMUTATIONS,
) -> np.ndarray:
    """The permutation test of "the member rate is at most the control rate" for each row of hits (one
    row per corpus; totals per document shared): the share of arrangements of whole documents between
    the sides, each document trading places with documents of its own size, whose rate difference is at
    least the observed one. Exact over every arrangement when there are at most PERMUTATIONS, else Monte
    Carlo with the observed arrangement counted, which keeps it valid."""
    hits = np.hstack([np.atleast_2d(member_hits), np.atleast_2d(control_hits)]).astype(float)
    totals = np.concatenate([member_totals, control_totals]).astype(float)
    member = document_assignments(
        tuple(int(t) for t in member_totals), tuple(int(t) for t in control_totals), permutations
    ).astype(float)
    member_sum, member_size = hits @ member.T, member @ totals
    difference = member_sum / member_size - (hits.sum(axis=1, keepdims=True) - member_sum) / (
        totals.sum() - member_size
    )
    observed = difference[:, :1]
    return np.mean(difference >= observed - 1e-9, axis=1)


def document_permutation_p_value(member: DocumentCounts, control: DocumentCounts) -> float:
    """The permutation p-value over documents of one corpus's per-document counts."""
    (member_hits, member_totals), (control_hits, control_totals) = (
        document_arrays(member),
        document_arrays(control),
    )
    return float(document_permutation_p_values(member_hits, member_totals, control_hits, control_totals)[0])


def _beta_bounds(
    successes: np.ndarray, trials: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson bounds for (possibly fractional) successes of trials, vectorised."""
    with np.errstate(invalid="ignore"):
        low = np.where(
            successes > 0,
            beta.ppf(1 - confidence, np.maximum(successes, 1e-300), trials - successes + 1),
            0.0,
        )
        high = np.where(
            successes < trials,
            beta.ppf(confidence, successes + 1, np.maximum(trials - successes, 1e-300)),
            1.0,
        )
    return low, high


def intraclass_correlations(hits: np.ndarray, totals: np.ndarray, sides: np.ndarray) -> np.ndarray:
    """The ANOVA estimate of the intraclass correlation of hits within documents for each row of
    per-document `hits` (documents drawn independently, `totals` items each), every document centred on
    the rate of its side (`sides`: a label per document, so that an excess does not read as
    correlation), at least 0; 0 where the documents cannot tell (no item beside another, no spread)."""
    hits, totals = np.atleast_2d(hits).astype(float), np.asarray(totals, dtype=float)
    labels = np.unique(sides)
    documents, items = len(totals), totals.sum()
    if documents - len(labels) < 1 or items - documents < 1:
        return np.zeros(len(hits))
    centred = np.zeros_like(hits)
    for label in labels:
        on_side = sides == label
        rate = hits[:, on_side].sum(axis=1, keepdims=True) / totals[on_side].sum()
        centred[:, on_side] = hits[:, on_side] - rate * totals[on_side]
    between = np.sum(centred**2 / totals, axis=1) / (documents - len(labels))
    within = np.sum(hits * (totals - hits) / totals, axis=1) / (items - documents)
    size = (items - np.sum(totals**2) / items) / (documents - 1)
    denominator = between + (size - 1) * within
    with np.errstate(divide="ignore", invalid="ignore"):
        correlation = np.where(denominator > 0, (between - within) / denominator, 0.0)
    return np.clip(correlation, 0.0, 1.0)


def design_effects(hits: np.ndarray, totals: np.ndarray, confidence: float) -> np.ndarray:
    """How many times the binomial variance the rate of each row of per-document hits has, at the
    one-sided `confidence` upper bound of the clustering: 1 + (m - 1) rho (Kish), m the item-weighted
    mean document size (sum t^2 / sum t) and rho the intraclass correlation
    (`intraclass_correlations`) scaled by (D - 1) / chi2_{1 - confidence}(D - 1) for the D documents
    that estimate it, as the between-document variance's upper bound would be. With the estimate itself
    the bound under-covers where hits cluster in a few documents (a low rate is seen with a low spread);
    `benchmarks/clustered_coverage.py` measures the coverage. 1 where the documents show no clustering
    and wherever each document holds one item."""
    totals = np.asarray(totals, dtype=float)
    documents, items = len(totals), totals.sum()
    correlation = intraclass_correlations(hits, totals, np.zeros(documents, dtype=int))
    upper = np.minimum(1.0, correlation * (documents - 1) / chi2.ppf(1 - confidence, documents - 1))
    return 1 + (np.sum(totals**2) / items - 1) * upper


def _design_effect_bounds(
    hits: np.ndarray, totals: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson bounds at the effective sample size, the items over their design effect."""
    items = totals.sum()
    effective = items / design_effects(hits, totals, confidence)
    return _beta_bounds(hits.sum(axis=1) / items * effective, effective, confidence)


def _document_count_bounds(
    hits: np.ndarray, totals: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds from the number of documents with a hit, whatever the dependence within a document: a
    document of t items at rate p holds a hit with probability pi, p <= pi <= t p, so that count
    dominates Binomial(documents, p) and is dominated by Binomial(documents, t_max p)."""
    documents = len(totals)
    low, high = _beta_bounds((hits > 0).sum(axis=1).astype(float), np.full(len(hits), documents), confidence)
    return low / totals.max(), high


def document_rate_bounds(
    hits: np.ndarray, totals: np.ndarray, confidence: float = CELL_CONFIDENCE
) -> tuple[np.ndarray, np.ndarray]:
    """One-sided bounds (lower, upper), each at `confidence`, on a rate whose items cluster in documents,
    for each row of per-document hits (documents drawn independently, every item at the same rate).

    The Clopper-Pearson bound at the effective sample size (as Korn and Graubard 1998): the number of
    items divided by their design effect (`design_effects`: the observed within-document correlation at
    its upper confidence bound, so that the bound covers where values cluster); with no clustering seen
    it is Clopper-Pearson over the items. The between-document variance
    cannot be estimated from hits (or misses) in fewer than MIN_SPREAD_DOCUMENTS documents (a rare value
    that clusters shows as no hit at all), so there the bound counts documents with a hit instead and
    assumes nothing about the dependence within a document. Nor is any bound tighter than what the
    documents certify without that assumption when none holds a hit, 1 - (1 - confidence)^(1/documents):
    with 64 documents no rate under 0.056 is certified, whatever their number of items, so a sample
    with no hit is never read as stronger evidence than one with a few. A single document bounds
    nothing."""
    hits = np.atleast_2d(hits).astype(float)
    totals = np.asarray(totals, dtype=float)
    if len(totals) < 2:
        return np.zeros(len(hits)), np.ones(len(hits))
    low, high = _design_effect_bounds(hits, totals, confidence)
    floor = 1 - (1 - confidence) ** (1 / len(totals))
    low, high = np.minimum(low, 1 - floor), np.maximum(high, floor)
    few_hits = (hits > 0).sum(axis=1) < MIN_SPREAD_DOCUMENTS
    few_misses = (hits < totals).sum(axis=1) < MIN_SPREAD_DOCUMENTS
    by_hits_low, by_hits_high = _document_count_bounds(hits, totals, confidence)
    by_misses_low, by_misses_high = _document_count_bounds(totals - hits, totals, confidence)
    low = np.where(few_hits, by_hits_low, np.where(few_misses, 1 - by_misses_high, low))
    high = np.where(few_hits, by_hits_high, np.where(few_misses, 1 - by_misses_low, high))
    return low, high


def within_document_correlation(sides: Sequence[tuple[np.ndarray, np.ndarray]]) -> float:
    """The ANOVA estimate of the intraclass correlation of hits within documents, each side's documents
    centred on that side's own rate (so that an excess does not read as correlation), at least 0."""
    hits = np.concatenate([h for h, _ in sides])
    totals = np.concatenate([n for _, n in sides])
    labels = np.concatenate([np.full(len(n), number) for number, (_, n) in enumerate(sides)])
    return float(intraclass_correlations(hits, totals, labels)[0])


def _document_hits(
    rate: float, correlation: float, totals: np.ndarray, uniforms: tuple[np.ndarray, ...]
) -> np.ndarray:
    """Per-document hits of simulated corpora (rows): each document's items share one document-level
    draw with probability sqrt(correlation) (their intraclass correlation is then `correlation`) and
    are independent otherwise, all at `rate`. The same uniforms at a higher rate give at least as many
    hits, so power found with them grows with the excess."""
    document_draw, shared, independent = uniforms
    shared_hits = (document_draw < rate) * shared
    free = totals[None, :] - shared
    hits = np.zeros_like(free)
    for size in np.unique(free):  # the binomial of the free items by inversion, one table per size
        where = free == size
        cumulative = binom.cdf(np.arange(size + 1), size, rate)
        hits[where] = np.minimum(np.searchsorted(cumulative, independent[where], side="left"), size)
    return shared_hits + hits


def _power_uniforms(
    totals: np.ndarray, correlation: float, simulations: int, seed: int
) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    shape = (simulations, len(totals))
    shared = rng.binomial(np.broadcast_to(totals, shape), math.sqrt(correlation))
    return rng.random(shape), shared, rng.random(shape)


def cluster_power(
    excess: float,
    control_rate: float,
    correlation: float,
    member_totals: np.ndarray,
    control_totals: np.ndarray,
    simulations: int = POWER_SIMULATIONS,
    seed: int = POWER_SEED,
) -> float:
    """The share of simulated corpora on which the document permutation test rejects, with the documents
    of the observed sizes, control items at `control_rate`, member items at `control_rate + excess` and
    the within-document `correlation` (`_document_hits`); POWER_PERMUTATIONS arrangements each."""
    member_totals, control_totals = np.asarray(member_totals), np.asarray(control_totals)
    member = _document_hits(
        control_rate + excess,
        correlation,
        member_totals,
        _power_uniforms(member_totals, correlation, simulations, seed),
    )
    control = _document_hits(
        control_rate,
        correlation,
        control_totals,
        _power_uniforms(control_totals, correlation, simulations, seed + 1),
    )
    p_values = document_permutation_p_values(
        member, member_totals, control, control_totals, POWER_PERMUTATIONS
    )
    return float(np.mean(p_values < ALPHA))


def detectable_cluster_excess(member: DocumentCounts, control: DocumentCounts) -> float:
    """The smallest excess the document permutation test finds with 80% power (simulated, POWER_SEED),
    assuming the documents keep their sizes, the control rate stays what was observed, the member rate
    is that plus the excess, and hits within a document correlate as much as the observed ones do."""
    (member_hits, member_totals), (control_hits, control_totals) = (
        document_arrays(member),
        document_arrays(control),
    )
    control_rate = control_hits.sum() / control_totals.sum()
    correlation = within_document_correlation([(member_hits, member_totals), (control_hits, control_totals)])
    return _smallest_detectable(
        lambda x: cluster_power(x, control_rate, correlation, member_totals, control_totals),
        1 - control_rate,
    )


# --- the excess of each design ----------------------------------------------------------------------


def _difference_bounds(
    member_low: float, member_high: float, control_low: float, control_high: float
) -> tuple[float, float]:
    return member_low - control_high, member_high - control_low


def paired_excess(member_only: int, control_only: int, member_hits: int, control_hits: int, n: int) -> Excess:
    """The excess of a paired design over `n` generations; `member_only`/`control_only` discordant pairs."""
    if n < 1:
        raise ValueError("no generations to compare")
    discordant = member_only + control_only
    p = binomtest(member_only, discordant, 0.5, alternative="greater").pvalue if discordant else 1.0
    low, high = _difference_bounds(
        clopper_pearson(member_only, n, CELL_CONFIDENCE, "lower"),
        clopper_pearson(member_only, n, CELL_CONFIDENCE, "upper"),
        clopper_pearson(control_only, n, CELL_CONFIDENCE, "lower"),
        clopper_pearson(control_only, n, CELL_CONFIDENCE, "upper"),
    )
    return Excess(
        member_hits / n,
        control_hits / n,
        (member_only - control_only) / n,
        low,
        high,
        float(p),
        detectable_paired_excess(control_only / n, n),
        n,
        n,
        "paired",
        MCNEMAR,
    )


def unpaired_excess(member_hits: int, members: int, control_hits: int, controls: int) -> Excess:
    """The excess of member over control rate with items taken as independent (no per-document counts):
    Fisher's exact test and Clopper-Pearson bounds on each side's rate."""
    if members < 1 or controls < 1:
        raise ValueError(f"no values to compare: {members} members, {controls} controls")
    low, high = _difference_bounds(
        clopper_pearson(member_hits, members, CELL_CONFIDENCE, "lower"),
        clopper_pearson(member_hits, members, CELL_CONFIDENCE, "upper"),
        clopper_pearson(control_hits, controls, CELL_CONFIDENCE, "lower"),
        clopper_pearson(control_hits, controls, CELL_CONFIDENCE, "upper"),
    )
    return Excess(
        member_hits / members,
        control_hits / controls,
        member_hits / members - control_hits / controls,
        low,
        high,
        _fisher_p(member_hits, members, control_hits, controls),
        detectable_unpaired_excess(control_hits / controls, members, controls),
        members,
        controls,
        "unpaired",
        FISHER,
    )


def cluster_excess(member: DocumentCounts, control: DocumentCounts) -> Excess:
    """The excess of member over control rate with the document as the unit: [held, total] per document
    of each side. Permutation p-value over documents, design-effect bounds on each side's rate
    (`document_rate_bounds`)."""
    (member_hits, member_totals), (control_hits, control_totals) = (
        document_arrays(member),
        document_arrays(control),
    )
    members, controls = int(member_totals.sum()), int(control_totals.sum())
    if members < 1 or controls < 1:
        raise ValueError(f"no values to compare: {members} members, {controls} controls")
    (member_low,), (member_high,) = document_rate_bounds(member_hits, member_totals)
    (control_low,), (control_high,) = document_rate_bounds(control_hits, control_totals)
    low, high = _difference_bounds(member_low, member_high, control_low, control_high)
    member_rate, control_rate = member_hits.sum() / members, control_hits.sum() / controls
    return Excess(
        float(member_rate),
        float(control_rate),
        float(member_rate - control_rate),
        float(low),
        float(high),
        document_permutation_p_value(member, control),
        detectable_cluster_excess(member, control),
        members,
        controls,
        "unpaired",
        DOCUMENT_PERMUTATION,
    )


def excess_of(counts: Mapping[str, Any], design: str) -> Excess:
    """The excess of one measure from the counts `plainsight.evaluation.held_out` records, by the run's
    design unless the counts name their own (a measure without a paired control is unpaired in every run):
    the document design where the counts keep `member_documents` and `control_documents`, Fisher's where
    they do not."""
    if counts.get("design", design) == "paired":
        return paired_excess(
            counts["member_only"],
            counts["control_only"],
            counts["member_hits"],
            counts["control_hits"],
            counts["members"],
        )
    if "member_documents" in counts and "control_documents" in counts:
        excess = cluster_excess(counts["member_documents"], counts["control_documents"])
        totals = (excess.members, excess.controls)
        if totals != (counts["members"], counts["controls"]):
            raise ValueError(
                f"per-document counts hold {totals} items; the totals say "
                f"{(counts['members'], counts['controls'])}"
            )
        return excess
    return unpaired_excess(
        counts["member_hits"], counts["members"], counts["control_hits"], counts["controls"]
    )


# --- what a rate is a share of ----------------------------------------------------------------------

PAIRED_UNIT = "generations"


def rate_unit(measure: LeakMeasure, design: str) -> str:
    """What a measure's member and control rates (and so its excess) are shares of: generations in the
    paired design, the measure's distinct items in the unpaired one (`LeakMeasure.unit`: distinct values,
    name words, or segments copied), which a share of generations in another table does not equal."""
    return PAIRED_UNIT if design == "paired" else measure.unit


def row_rate_unit(measure: LeakMeasure, row: Mapping[str, Any]) -> str | None:
    """`rate_unit` of an audit row's measure, by the design its `leak_{name}_design` names; None where the
    row names none."""
    design = row.get(f"leak_{measure.name}_design")
    return rate_unit(measure, design) if isinstance(design, str) else None


# --- AUCs, conclusions ------------------------------------------------------------------------------


def detectable_auc(members: int, non_members: int) -> float:
    """The AUC whose 95% bootstrap interval lies above 0.5 with 80% power: one-sided AUC_ALPHA, the level
    at which the tables call an AUC significant, from the Mann-Whitney statistic's null standard error
    sqrt((n1 + n0 + 1) / (12 n1 n0)). Under an effect the AUC's own standard error is smaller than the
    null one, so this errs towards a larger AUC (more power at it than stated). The interval's half-width
    is widened as the audit widens it (`intervals.small_sample_factor` of the smaller side)."""
    se = math.sqrt((members + non_members + 1) / (12 * members * non_members))
    widened = norm.ppf(1 - AUC_ALPHA) * small_sample_factor(min(members, non_members))
    return min(1.0, 0.5 + (widened + norm.ppf(POWER)) * se)


def conclusion(
    significant: bool, detectable: float, threshold: float, unit: str = "", upper: float | None = None
) -> str:
    """`leaks` when the test rejects the zero-learning null; `no leak detected (could detect >= X)` when
    it does not and the sample could detect an effect at the threshold that matters; `no leak detected
    (bounded <= U)` when it could not but the excess's `upper` bound lies at or under the threshold (what
    the gate passes: the bound is tight although the test's power at the threshold is under 80%); else
    `inconclusive`."""
    if significant:
        return LEAKS
    if detectable <= threshold:
        return f"{NO_LEAK} (could detect >= {detectable:.2f}{unit})"
    if upper is not None and upper <= threshold:
        return f"{NO_LEAK} (bounded <= {upper:.2f}{unit})"
    return INCONCLUSIVE


# --- the DP null ------------------------------------------------------------------------------------


def _dp_allowed_rate(control_hits: int, controls: int, epsilon: float, delta: float) -> float:
    control_high = clopper_pearson(control_hits, controls, CELL_CONFIDENCE, "upper")
    return min(1.0, math.exp(min(epsilon, 700.0)) * control_high + delta)


def dp_null_p_value(
    member_hits: int, members: int, control_hits: int, controls: int, epsilon: float, delta: float
):
    """The p-value of "the member rate is at most e^epsilon x the control rate + delta" (what (epsilon,
    delta)-DP allows), with the control rate at its one-sided 97.5% upper bound: a small value from a
    method that claims epsilon points at a bug."""
    allowed = _dp_allowed_rate(control_hits, controls, epsilon, delta)
    if allowed >= 1.0:
        return 1.0
    return float(binomtest(member_hits, members, allowed, alternative="greater").pvalue)


def dp_null_controls_needed(members: int, epsilon: float, delta: float) -> int | None:
    """The fewest controls with which `dp_null_p_value` could reject at `members` members: the most
    favourable counts, every member hit and no control hit, give p = a^members for the allowed rate
    a = e^epsilon CP_hi(0 of n) + delta, under ALPHA once a < ALPHA^(1/members). CP_hi(0 of n) =
    1 - 0.025^(1/n), so n > ln(0.025) / ln(1 - (ALPHA^(1/members) - delta) / e^epsilon). None when no
    number suffices (delta alone is already too large)."""
    if members < 1:
        return None
    largest_rejected = ALPHA ** (1 / members)
    room = (largest_rejected - delta) / math.exp(min(epsilon, 700.0))
    if room <= 0:
        return None
    needed = 1 if room >= 1 else math.floor(math.log(1 - CELL_CONFIDENCE) / math.log1p(-room)) + 1
    while needed > 1 and _dp_allowed_rate(0, needed - 1, epsilon, delta) < largest_rejected:
        needed -= 1  # floating point near the boundary: the formula's answer, checked both ways
    while _dp_allowed_rate(0, needed, epsilon, delta) >= largest_rejected:
        needed += 1
    return needed


def dp_null_testable(members: int, controls: int, epsilon: float, delta: float) -> bool:
    """Whether the DP null can be rejected at all with this many members and controls."""
    needed = dp_null_controls_needed(members, epsilon, delta)
    return needed is not None and controls >= needed


def released_text_epsilon(
    member_hits: int, members: int, control_hits: int, controls: int, delta: float
) -> float:
    """The empirical epsilon lower bound of the leak read as an attack: "member" when the matcher hits."""
    return epsilon_lower_bound(
        member_hits, members - member_hits, control_hits, controls - control_hits, delta, 1 - ALPHA / 2
    )


def excess_record(measure: str, excess: Excess, threshold: float) -> dict[str, Any]:
    """One measure's columns of the audit table, prefixed `leak_{measure}_`."""
    significant = excess.p_value < ALPHA
    return {
        **{f"leak_{measure}_{name}": value for name, value in asdict(excess).items()},
        f"leak_{measure}_conclusion": conclusion(
            significant, excess.detectable, threshold, upper=excess.excess_high
        ),
    }
