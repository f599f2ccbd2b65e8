"""The prefix-tuning objectives and the private-token mask, against hand computations."""

from __future__ import annotations

import math

import pytest
import torch
from tokenizers import ByteLevelBPETokenizer, Tokenizer
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from plainsight.training.objectives import (
    Lambdas,
    lm_loss,
    masked_objective,
    private_char_spans,
    private_token_mask,
)


def log_softmax(row: list[float]) -> list[float]:
    """Log-probabilities of one row of logits, in plain Python floats."""
    top = max(row)
    log_z = top + math.log(sum(math.exp(x - top) for x in row))
    return [x - log_z for x in row]


def manual_terms(logits, base_logits, labels, private) -> dict[str, float]:
    """The three normalised terms by a per-token loop over shifted positions."""
    nll, contrastive, kl = [], [], []
    batch, length = len(labels), len(labels[0])
    for b in range(batch):
        for t in range(length - 1):
            target = labels[b][t + 1]
            if target == -100:
                continue
            lp = log_softmax(logits[b][t])
            lq = log_softmax(base_logits[b][t])
            nll.append(-lp[target])
            if private[b][t + 1]:
                p, q = math.exp(lp[target]), math.exp(lq[target])
                contrastive.append(-math.log(p / (p + q)))
            else:
                kl.append(sum(math.exp(lq[v]) * (lq[v] - lp[v]) for v in range(len(lp))))

    def mean(xs):
        return sum(xs) / len(xs) if xs else 0.0

    return {"lm": mean(nll), "contrastive": mean(contrastive), "kl": mean(kl)}


# --- small explicit tensors --------------------------------------------------------------------


def test_lm_loss_matches_hand_computation():
    logits = torch.tensor([[[1.0, 2.0, 0.5], [0.0, -1.0, 3.0], [2.0, 2.0, 2.0]]])
    labels = torch.tensor([[-100, 1, 2]])  # the prompt token is not trained on
    # position 0 predicts token 1, position 1 predicts token 2; position 2 predicts nothing
    p1 = math.exp(2.0) / (math.exp(1.0) + math.exp(2.0) + math.exp(0.5))
    p2 = math.exp(3.0) / (math.exp(0.0) + math.exp(-1.0) + math.exp(3.0))
    expected = -(math.log(p1) + math.log(p2)) / 2
    assert lm_loss(logits, labels).item() == pytest.approx(expected, abs=1e-6)


# B=2, T=4, V=3: a prompt token, one private token, and padding in the second row.
LOGITS = [
    [[0.2, 1.0, -0.5], [1.5, 0.1, 0.3], [-1.0, 0.4, 2.0], [0.0, 0.0, 0.0]],
    [[0.7, -0.3, 0.9], [2.0, 1.0, 0.0], [0.5, 0.5, 0.5], [0.1, 0.2, 0.3]],
]
BASE_LOGITS = [
    [[1.0, 0.0, 0.0], [0.3, 0.9, -0.2], [0.0, 1.2, 0.4], [1.0, 1.0, 1.0]],
    [[-0.4, 0.8, 0.1], [0.6, 0.6, 1.5], [0.0, 0.0, 0.0], [0.3, 0.2, 0.1]],
]
LABELS = [[-100, 1, 0, 2], [-100, 2, 0, -100]]
PRIVATE = [[False, False, True, False], [False, False, False, False]]


def explicit_batch():
    return (
        torch.tensor(LOGITS, requires_grad=True),
        torch.tensor(BASE_LOGITS),
        torch.tensor(LABELS),
        torch.tensor(PRIVATE),
    )


def test_each_term_matches_hand_computation():
    logits, base, labels, private = explicit_batch()
    out = masked_objective(logits, base, labels, private, Lambdas(lm=0.5, contrastive=2.0, kl=3.0))

    # the only private document token: row 0, predicted at position 1, token 0
    lp, lq = log_softmax(LOGITS[0][1]), log_softmax(BASE_LOGITS[0][1])
    p, q = math.exp(lp[0]), math.exp(lq[0])
    contrastive = -(math.log(p) - math.log(p + q))

    # non-private document tokens: (row 0, pos 0), (row 0, pos 2), (row 1, pos 0), (row 1, pos 1)
    kls = []
    for b, t in [(0, 0), (0, 2), (1, 0), (1, 1)]:
        lp, lq = log_softmax(LOGITS[b][t]), log_softmax(BASE_LOGITS[b][t])
        kls.append(sum(math.exp(lq[v]) * (lq[v] - lp[v]) for v in range(3)))
    kl = sum(kls) / 4

    nll = [-log_softmax(LOGITS[b][t])[LABELS[b][t + 1]] for b, t in [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]]
    lm = sum(nll) / 5

    assert out["lm"].item() == pytest.approx(lm, abs=1e-6)
    assert out["contrastive"].item() == pytest.approx(contrastive, abs=1e-6)
    assert out["kl"].item() == pytest.approx(kl, abs=1e-6)
    assert out["loss"].item() == pytest.approx(0.5 * lm + 2.0 * contrastive + 3.0 * kl, abs=1e-5)
    assert out["lm"].item() == pytest.approx(lm_loss(logits, labels).item(), abs=1e-7)


def test_no_private_token_gives_exact_zero_contrastive_with_finite_grads():
    logits, base, labels, _ = explicit_batch()
    out = masked_objective(logits, base, labels, torch.zeros_like(labels, dtype=torch.bool), Lambdas())
    assert out["contrastive"].item() == 0.0
    out["loss"].backward()
    assert logits.grad is not None and torch.isfinite(logits.grad).all()
    assert logits.grad.abs().sum() > 0


def test_all_private_gives_zero_kl():
    logits, base, labels, _ = explicit_batch()
    out = masked_objective(logits, base, labels, labels != -100, Lambdas())
    assert out["kl"].item() == 0.0
    assert out["contrastive"].item() > 0
    out["loss"].backward()
    assert torch.isfinite(logits.grad).all()


def test_no_document_token_gives_zero_losses_that_backpropagate():
    logits, base, labels, private = explicit_batch()
    labels = torch.full_like(labels, -100)
    out = masked_objective(logits, base, labels, private, Lambdas())
    assert all(out[k].item() == 0.0 for k in ("loss", "lm", "contrastive", "kl"))
    out["loss"].backward()
    assert torch.isfinite(logits.grad).all()


def test_identical_base_gives_zero_kl_and_log2_contrastive():
    logits, _, labels, private = explicit_batch()
    out = masked_objective(logits, logits.detach().clone(), labels, private, Lambdas())
    assert out["kl"].item() == pytest.approx(0.0, abs=1e-7)
    assert out["contrastive"].item() == pytest.approx(math.log(2), abs=1e-6)


def test_lm_and_kl_at_equal_weights_settle_halfway_between_the_data_and_the_base():
    """On a public token, minimising L_LM + L_KL over a free distribution p gives p = (data + P_base) / 2:
    -sum_v (d_v + q_v) log p_v is smallest there. At the paper's lambdas the masked prefix can at best
    write half like the corpus and half like the base model."""
    torch.manual_seed(0)
    base = torch.tensor([[[2.0, 0.5, -1.0, 0.0, 1.0]] * 2])
    labels = torch.tensor([[-100, 3]])
    logits = torch.zeros(1, 2, 5, requires_grad=True)
    optimizer = torch.optim.Adam([logits], lr=0.05)
    for _ in range(3000):
        optimizer.zero_grad()
        masked_objective(logits, base, labels, torch.zeros(1, 2, dtype=torch.bool), Lambdas())[
            "loss"
        ].backward()
        optimizer.step()
    expected = (torch.nn.functional.one_hot(torch.tensor(3), 5) + base[0, 0].softmax(-1)) / 2
    assert torch.allclose(logits[0, 0].softmax(-1), expected, atol=2e-3)


def test_mismatched_shapes_are_rejected():
    logits, base, labels, private = explicit_batch()
    with pytest.raises(ValueError):
        masked_objective(logits, base[:, :3], labels, private, Lambdas())
    with pytest.raises(ValueError):
        masked_objective(logits, base, labels, private[:, :3], Lambdas())


# --- a tiny real model -------------------------------------------------------------------------


def tiny_llama(seed: int) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=50,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
    )
    return LlamaForCausalLM(config)


def test_masked_objective_on_a_real_model_matches_a_token_loop():
    theta, base = tiny_llama(0), tiny_llama(1)
    torch.manual_seed(2)
    input_ids = torch.randint(0, 50, (2, 9))
    attention_mask = torch.ones_like(input_ids)
    attention_mask[1, 7:] = 0  # right padding
    labels = input_ids.clone()
    labels[:, :3] = -100  # the control-code prompt
    labels[attention_mask == 0] = -100
    private = torch.zeros_like(input_ids, dtype=torch.bool)
    private[0, 4:6] = True
    private[1, 5] = True

    logits = theta(input_ids=input_ids, attention_mask=attention_mask).logits
    with torch.no_grad():
        base_logits = base(input_ids=input_ids, attention_mask=attention_mask).logits
    assert not base_logits.requires_grad

    out = masked_objective(logits, base_logits, labels, private, Lambdas(lm=1.0, contrastive=0.5, kl=2.0))
    expected = manual_terms(logits.tolist(), base_logits.tolist(), labels.tolist(), private.tolist())
    for key in ("lm", "contrastive", "kl"):
        assert out[key].item() == pytest.approx(expected[key], abs=1e-5), key
    total = expected["lm"] + 0.5 * expected["contrastive"] + 2.0 * expected["kl"]
    assert out["loss"].item() == pytest.approx(total, abs=1e-5)

    out["loss"].backward()
    grads = [p.grad for p in theta.parameters()]
    assert all(g is not None and torch.isfinite(g).all() for g in grads)
    assert theta.model.embed_tokens.weight.grad.abs().sum() > 0
    assert all(p.grad is None for p in base.parameters())


# --- private-token mask ------------------------------------------------------------------------


def test_private_char_spans_matches_whole_words_case_insensitively():
    text = "SMITH met smith (Smith), not Smithson. Cengiz\nPolat, then cengiz   polat."
    spans = private_char_spans(text, ["Smith", "Cengiz Polat", "Polat", "Smith", "  "])
    found = [text[s:e] for s, e in spans]
    assert found == ["SMITH", "smith", "Smith", "Cengiz\nPolat", "Polat", "cengiz   polat", "polat"]
    assert spans == sorted(spans)
    assert private_char_spans(text, []) == []


def test_private_token_mask_with_hand_made_offsets():
    # text "Mr Smith came" with span (3, 8); a special token first and last
    offsets = [(0, 0), (0, 2), (2, 5), (5, 8), (8, 13), (0, 0)]
    assert private_token_mask(offsets, [(3, 8)]) == [False, False, True, True, False, False]
    # a token touching a span's edge does not overlap it
    assert private_token_mask([(0, 3), (8, 9)], [(3, 8)]) == [False, False]
    # overlapping, unsorted and touching spans; an empty span marks nothing
    assert private_token_mask(
        [(0, 2), (2, 4), (4, 6), (6, 8), (9, 10)], [(5, 7), (3, 6), (0, 1), (9, 9)]
    ) == [True, True, True, True, False]
    assert private_token_mask([(0, 5)], []) == [False]


def test_private_token_mask_is_fast_on_long_documents():
    offsets = [(i, i + 1) for i in range(20_000)]
    spans = [(i, i + 3) for i in range(0, 20_000, 10)]
    mask = private_token_mask(offsets, spans)
    assert sum(mask) == 6_000
    assert mask[:11] == [True] * 3 + [False] * 7 + [True]


@pytest.fixture(scope="module")
def tiny_tokenizer() -> PreTrainedTokenizerFast:
    sentences = [
        "The court met the applicant in Ankara.",
        "Mr Cengiz was heard by the judge.",
        "The applicant lodged a complaint.",
        "The judge met the court.",
    ] * 5
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(sentences, vocab_size=300, min_frequency=1, show_progress=False)
    return PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(bpe.to_str()))


def private_runs(tokenizer, text: str, values: list[str]) -> list[str]:
    """The decoded runs of consecutive private tokens."""
    encoding = tokenizer(text, return_offsets_mapping=True)
    mask = private_token_mask(encoding["offset_mapping"], private_char_spans(text, values))
    runs, current = [], []
    for token_id, is_private in zip(encoding["input_ids"], mask):
        if is_private:
            current.append(token_id)
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return [tokenizer.decode(run) for run in runs]


def test_private_tokens_of_a_real_tokenizer_decode_to_the_values(tiny_tokenizer):
    text = "Mr Cengiz Polat met Polat."
    runs = private_runs(tiny_tokenizer, text, ["Polat"])
    # byte-level offsets include the leading space of " Polat"; the full stop stays public
    assert [run.strip() for run in runs] == ["Polat", "Polat"]
    assert tiny_tokenizer.decode(tiny_tokenizer(" Polat")["input_ids"]) == " Polat"
    assert len(tiny_tokenizer.tokenize(" Polat")) > 1  # an unseen name: subword pieces are all marked

    text = "The judge met Cengiz\npolat and CENGIZ POLAT."
    runs = private_runs(tiny_tokenizer, text, ["Cengiz Polat"])
    assert [" ".join(run.split()) for run in runs] == ["Cengiz polat", "CENGIZ POLAT"]


# --- the reference implementation's variant -------------------------------------------------------


def two_objectives_case():
    """Vocabulary of 2. Row 0: two prompt tokens, then a public and a private document token; row 1:
    padding only. The adapted model is uniform everywhere (p = 1/2); the base model puts 3/4 on token 1
    at the public token's position and at every position of the padding row, 1/2 elsewhere."""
    skewed, flat = [0.0, math.log(3.0)], [0.0, 0.0]
    logits = torch.zeros(2, 4, 2, requires_grad=True)
    base = torch.tensor([[flat, skewed, flat, flat], [skewed, skewed, skewed, skewed]])
    labels = torch.tensor([[-100, -100, 1, 0], [-100, -100, -100, -100]])
    private = torch.tensor([[False, False, False, True], [False] * 4])
    return logits, base, labels, private


def test_reference_code_objective_differs_from_the_paper_in_the_kl_term_and_the_weights_only():
    logits, base, labels, private = two_objectives_case()
    kl_skewed = 0.25 * math.log(0.25 / 0.5) + 0.75 * math.log(0.75 / 0.5)  # KL(base || uniform) = 0.1308
    paper = masked_objective(logits, base, labels, private, Lambdas())
    reference = masked_objective(logits, base, labels, private, Lambdas(1.0, 4.0, 1.6), "reference_code")
    # LM over the two document tokens, contrastive on the private one (p = q = 1/2): both log 2, in both.
    for terms in (paper, reference):
        assert terms["lm"].item() == pytest.approx(math.log(2))
        assert terms["contrastive"].item() == pytest.approx(math.log(2))
    # The paper: KL on the one public document token. The reference code: over all 2 x 3 shifted
    # positions, the prompt's, the private token's and the padding row's included (4 of them skewed).
    assert paper["kl"].item() == pytest.approx(kl_skewed)
    assert reference["kl"].item() == pytest.approx(4 * kl_skewed / 6)
    assert paper["loss"].item() == pytest.approx(2 * math.log(2) + kl_skewed)
    assert reference["loss"].item() == pytest.approx(math.log(2) + 4 * math.log(2) + 1.6 * 4 * kl_skewed / 6)
    reference["loss"].backward()
    assert logits.grad[1].abs().sum() > 0  # the padding row takes a gradient: its KL counts
    with pytest.raises(ValueError, match="objective"):
        masked_objective(logits, base, labels, private, Lambdas(), "sum")


def test_reference_code_objective_takes_its_fixed_weights_and_retrains_only_ft_mask():
    from plainsight.methods.registry import method
    from plainsight.training.loop import TrainingSettings
    from plainsight.training.params import training_params

    block = {
        "epochs": 1,
        "learning_rate": 1e-3,
        "batch_size": 2,
        "max_length": 32,
        "warmup_steps": 0,
        "lr_schedule": "constant",
        "lambda_lm": 1.0,
        "lambda_contrastive": 0.5,
        "lambda_kl": 2.0,
    }
    reference = {**block, "objective": "reference_code"}
    assert TrainingSettings.from_params(reference, masked=True).lambdas == Lambdas(1.0, 4.0, 1.6)
    assert TrainingSettings.from_params(reference, masked=True).objective == "reference_code"
    assert TrainingSettings.from_params({**block, "objective": "paper"}, masked=True).lambdas == Lambdas(
        1.0, 0.5, 2.0
    )
    assert TrainingSettings.from_params(reference, masked=False).objective == "paper"
    # Under the fixed weights the lambdas decide nothing; the objective decides nothing for ft.
    assert training_params(method("ft_mask"), reference, {}) == {
        **{k: v for k, v in block.items() if not k.startswith("lambda_")},
        "objective": "reference_code",
    }
    assert "objective" not in training_params(method("ft"), reference, {})
    with pytest.raises(ValueError, match="objective"):
        TrainingSettings(1, 1e-3, 2, 32, objective="sum")
