"""Stage 7, audit: what an adversary could learn from a released corpus or its adapter.

- `nearest`: the real training segments nearest to each generation (MiniLM cosine, shared n-grams);
- `membership`: membership-inference scores of members and held-out segments under each adapter;
- `released`: what the synthetic corpus alone gives away (nearest-document membership, distance to
  the closest record, verbatim copying, leaks of any identifier);
- `canaries`: secrets inserted into a method's training set, and their exposure;
- `table`, `canary_table`: the privacy-audit and canary tables and their plots.
"""

# The method key of the audit's positive control (plainsight.audit.corpora): its outputs sit beside the
# methods' under audit/{method}/. Here, so that the workflow can name it without loading the audit.
POSITIVE_CONTROL = "positive_control"
