"""Shared helpers: paths into the repository and tiny TAB documents built in code."""

from __future__ import annotations

import json
import os
import random as _random
import shutil
from pathlib import Path

import pytest

# pytest-xdist's workers share the machine's cores: each worker's OpenMP pool (torch's) takes its share of
# them, set before torch starts, so that the workers' threads do not spin against each other. Under two
# busy processes on the 2-core machine the embedded model's generation tests took 171 s with two threads
# and 93 s with one.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    os.environ.setdefault(
        "OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    )

REPO_ROOT = Path(__file__).resolve().parents[1]
RESOURCES = REPO_ROOT / "resources"
PLACEHOLDER_TYPES = RESOURCES / "mimic_placeholder_types.yaml"
FICTIONAL_POOLS = RESOURCES / "fictional_pools.yaml"
PRESIDIO_ENTITY_MAP = RESOURCES / "presidio_entity_map.yaml"
TAB_SAMPLE = Path(__file__).resolve().parents[2] / "shared/data/tab/echr_dev_sample.json"

SEGMENTS = [(1, 6), (6, 12)]


def headless_chromium(implicit_wait: float, downloads: Path | None = None):
    """Debian's Chromium under Selenium, headless, downloading into `downloads` without asking; the
    calling test skips where selenium, chromium or chromedriver is missing."""
    import pytest

    webdriver = pytest.importorskip("selenium.webdriver")
    binary, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not binary or not driver_path:
        pytest.skip("Debian's chromium and chromium-driver are needed (make browser installs them as root)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1400,1000",
    ):
        options.add_argument(argument)
    if downloads is not None:
        options.add_experimental_option(
            "prefs", {"download.default_directory": str(downloads), "download.prompt_for_download": False}
        )
    browser = webdriver.Chrome(service=webdriver.ChromeService(driver_path), options=options)
    browser.implicitly_wait(implicit_wait)
    return browser


def paragraphs_text(paragraphs: list[str]) -> str:
    return "\n\n".join(paragraphs)


def make_mention(
    doc_id: str,
    text: str,
    span_text: str,
    entity_type: str = "PERSON",
    identifier_type: str = "DIRECT",
    number: int = 1,
    occurrence: int = 0,
    tag: str = "a1",
) -> dict:
    """A TAB entity mention for the `occurrence`-th appearance of `span_text` in `text`."""
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(span_text, start + 1)
    return {
        "entity_type": entity_type,
        "entity_mention_id": f"{doc_id}_{tag}_em{number}",
        "start_offset": start,
        "end_offset": start + len(span_text),
        "span_text": span_text,
        "edit_type": "check",
        "identifier_type": identifier_type,
        "entity_id": f"{doc_id}_{tag}_e{number}",
        "confidential_status": "NOT_CONFIDENTIAL",
    }


def make_tab_document(
    doc_id: str,
    paragraphs: list[str],
    mentions: list[tuple],
    split: str = "train",
    annotators: tuple[str, ...] = ("annotator1",),
    quality_checked: list[str] | None = None,
) -> dict:
    """A TAB-format document; `mentions` are (span_text, entity_type, identifier_type) triples.

    Every annotator gets the same mentions; use `annotations` directly for different ones.
    """
    text = paragraphs_text(paragraphs)
    entity_mentions = [
        make_mention(doc_id, text, span, etype, itype, number)
        for number, (span, etype, itype) in enumerate(mentions, start=1)
    ]
    return {
        "doc_id": doc_id,
        "dataset_type": split,
        "text": text,
        "meta": {"year": 2007, "applicant": "Test Person"},
        "task": "Task: Annotate the document to anonymise the following person: Test Person",
        "quality_checked": list(quality_checked) if quality_checked is not None else [annotators[0]],
        "annotations": {name: {"entity_mentions": [dict(m) for m in entity_mentions]} for name in annotators},
    }


def numbered_paragraphs(doc_id: str, count: int) -> list[str]:
    return [f"Paragraph {n} of {doc_id}." for n in range(1, count + 1)]


def write_json(obj, path: Path) -> Path:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


# --- language-model fixtures (tiny tokenizer and model built in code; the embedded model) ----------

GPU = pytest.mark.gpu  # with `device("cuda")`, which skips the test where no CUDA device is visible


def device(name: str):
    """torch.device(name); a CUDA device skips the test where none is visible."""
    import torch

    if name.startswith("cuda") and not torch.cuda.is_available():
        pytest.skip("no CUDA device visible")
    return torch.device(name)


_FIRST_NAMES = ["Cengiz", "Henrik", "Nina", "Polat", "Maria", "Ahmet", "Olga", "Jan", "Elena", "Tomas"]
_LAST_NAMES = ["Polat", "Hasslund", "Holst", "Yilmaz", "Kowalski", "Novak", "Petrov", "Larsen", "Demir"]
_CITIES = ["Ankara", "Copenhagen", "Warsaw", "Istanbul", "Prague", "Polatli", "Izmir", "Oslo"]
_TEMPLATES = [
    "The applicant, Mr {first} {last}, was born in {year} and lives in {city}.",
    "The applicant was represented by Ms {first} {last}, a lawyer practising in {city}.",
    "On {day} March {year} the Court declared the application admissible.",
    "The Government argued that the applicant had not exhausted domestic remedies.",
    "The {city} Assize Court sentenced Mr {last} to {n} years' imprisonment.",
    "The applicant complained under Article {n} of the Convention about the length of the proceedings.",
    "In a judgment of {day} June {year}, the Court of Cassation upheld the decision.",
    "Mr {first} {last} lodged an appeal with the Supreme Court in {city}.",
    "The application (no. {n}{year}/{n}) was lodged against the Republic on {day} May {year}.",
    "THE COURT UNANIMOUSLY HOLDS that there has been a violation of Article {n}.",
    "The applicant's father, {first} {last}, attended the hearing at the attention of the court.",
    "PERSON: Mr {first} {last}\nLOC: {city}\nDATETIME: {day} April {year}",
]


def _tokenizer_training_lines() -> list[str]:
    rng = _random.Random(0)
    lines = []
    for _ in range(400):
        template = rng.choice(_TEMPLATES)
        lines.append(
            template.format(
                first=rng.choice(_FIRST_NAMES),
                last=rng.choice(_LAST_NAMES),
                city=rng.choice(_CITIES),
                year=rng.randint(1950, 2010),
                day=rng.randint(1, 28),
                n=rng.randint(2, 14),
            )
        )
    lines += ["### Private details", "### Document", "at atli Polatli attack attention", "(none)"] * 20
    return lines


@pytest.fixture(scope="session")
def tiny_tokenizer():
    """A byte-level BPE (vocabulary 600) trained on court-like English, left padding."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        _tokenizer_training_lines(),
        vocab_size=600,
        min_frequency=2,
        special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>", pad_token="<|endoftext|>"
    )
    tokenizer.padding_side = "left"
    return tokenizer


def _save_tiny_llama(tokenizer, out: Path, **config) -> Path:
    """A randomly initialised two-layer Llama (seed 0) saved with `tokenizer` into `out`."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    llama = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=1024,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
        **config,
    )
    LlamaForCausalLM(llama).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def tiny_model_dir(tiny_tokenizer, tmp_path_factory):
    """A randomly initialised two-layer Llama saved with the tiny tokenizer (plainsight.models.load_model)."""
    return _save_tiny_llama(tiny_tokenizer, tmp_path_factory.mktemp("tiny_model"))


@pytest.fixture(scope="session")
def learning_model_dir(tiny_tokenizer, tmp_path_factory):
    """A two-layer random Llama whose weights are large enough (initializer range 0.2, not 0.02) that a
    prefix moves its predictions: the shared tiny model's near-uniform output barely responds to one."""
    return _save_tiny_llama(tiny_tokenizer, tmp_path_factory.mktemp("learning_model"), initializer_range=0.2)


@pytest.fixture(scope="session")
def embedded_model_dir(tmp_path_factory):
    """The embedded SmolLM2 as a plain folder, converted now: never the workflow's copy under results/,
    which may predate the code under test."""
    from plainsight.models import convert_embedded

    out = tmp_path_factory.mktemp("smollm2-135m")
    convert_embedded("smollm2-135m", out)
    return out
