"""The workflow's rules whose jobs load a model, grouped by the kind of work they do."""

from __future__ import annotations

GENERATION_RULES = ("generate_icl", "generate_trained", "mauve_texts", "generate_private_selection")
TRAINING_RULES = ("train_adapter", "perplexity", "base_perplexity")
# featurizer, classifier and scoring jobs: MAUVE's, the downstream task's (a fine-tuned encoder, or seconds of
# TF-IDF), and the membership-inference scores (forward passes of the base model and each adapter)
SCORING_RULES = ("mauve", "utility_measures", "membership_scores")
# the canary audit's jobs: three run another rule's script on the canaried set, as costly as that rule's
CANARY_TWINS = {
    "canary_adapter": "train_adapter",
    "canary_generations": "generate_trained",
    "canary_generations_in_context": "generate_icl",
}
# the audit's negative control: a trained method's corpus job without the adapter, as costly
NEGATIVE_CONTROL_TWINS = {"generate_zero_learning": "generate_trained"}
# and two pass the canaries through the base model (and a trained method's adapter)
CANARY_SCORING_RULES = ("canary_docs", "canary_attacks")
# the released-text audits: the sentence embedder and the text attacks over the real segments and the
# corpora they audit (every method's and the two controls', or one bundle's kept rows and its control)
EMBEDDING_RULES = ("released_text_audit", "release_audit")
# the sentence embedder they load: the shipped MiniLM (plainsight.sentence_embedder.EMBEDDED), whose shape is
# in resources/model_shapes.yaml
AUDIT_EMBEDDER = "minilm"
# the all-methods utility measures: rule utility_measures (`use rule ... with:`) on the private-selection
# corpora too
ALL_METHODS_TWINS = {"utility_measures_all_methods": "utility_measures"}
MODEL_RULES = (
    *GENERATION_RULES,
    *TRAINING_RULES,
    *SCORING_RULES,
    *CANARY_TWINS,
    *NEGATIVE_CONTROL_TWINS,
    *ALL_METHODS_TWINS,
    *CANARY_SCORING_RULES,
    *EMBEDDING_RULES,
)


def twin_of(rule: str) -> str:
    """The rule whose work a job does: itself, or the rule a canary, negative-control or all-methods twin
    runs."""
    twins = {**CANARY_TWINS, **NEGATIVE_CONTROL_TWINS, **ALL_METHODS_TWINS}
    return twins.get(rule, rule)
