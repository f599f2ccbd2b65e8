"""Stage 7, audit: what an adversary could learn from a released corpus or its adapter, and the
release verdict it supports.

- `released_text_job`: rule `released_text_audit`, every corpus of a run and its positive and negative
  controls in one job; `text_evidence`: the text attacks' AUC as the gate judges it;
- `guarantee`: the formal claim that bounds a released corpus and its test against the corpus's leaks;
- `evidence`: each leak's excess over its held-out control, its bounds, p-values, detectable effects
  and conclusions; `gate`: the verdict per corpus under `release.gate`;
- `nearest`: the real training segments nearest to each generation (MiniLM cosine, shared n-grams);
- `membership`: membership-inference scores of members and held-out segments under each adapter;
  `roc`: the attacks' scores and ROC summaries (torch-free, for the table jobs);
- `shared_runs`: the longest run of words two texts share;
- `released`: what the synthetic corpus alone gives away (nearest-document membership, distance to
  the closest record, verbatim copying, leaks of any identifier); `reidentification`: which real
  privacy units each generation points to, by the rare evidence it shares with them;
- `canaries`: canaries for released text (a corpus sentence and a suffix at a target perplexity),
  inserted into a method's training set; `canary_attacks`: the attacks on them (`ngram`: the
  attacker's n-gram model of the corpus); `epsilon`: the empirical epsilon lower bound;
- `privacy_audit_table`, `canary_table`: the privacy-audit and canary tables' rows (`plainsight.report`
  renders them).
"""

# The method key of the audit's positive control (plainsight.audit.released_text_job): its outputs sit
# beside the methods' under audit/{method}/. Here, so that the workflow can name it without loading the audit.
POSITIVE_CONTROL = "positive_control"
# The method key of the negative control: a corpus the base model writes from fictional codes alone, with
# no adapter and no real text (rule generate_zero_learning), which the text attacks are judged against.
NEGATIVE_CONTROL = "negative_control"


def control_corpora(in_context: bool) -> list[str]:
    """The controls a run's audit writes beside its methods' corpora: the positive control, a corpus made
    to copy the run's first in-context corpus, where the run has one (`in_context`), and the negative
    control."""
    return [POSITIVE_CONTROL, NEGATIVE_CONTROL] if in_context else [NEGATIVE_CONTROL]
