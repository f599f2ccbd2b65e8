"""The prompts of the training-free private generators, from YAML
(`resources/private_selection_prompts.yaml`): RPSG's abstraction, variant and restatement prompts,
Aug-PE's initial and variation prompts, the CTCL-style generator's topic prompt, the description of each
dataset format, the tones drawn per prompt. A text placed in a prompt is shortened (its beginning kept)
to fit a token budget."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import yaml

from plainsight.errors import InputError
from plainsight.io import read_text_utf8

TEMPLATES = ("abstraction", "variant", "rephrase", "initial", "variation", "topic")


@dataclass(frozen=True)
class SelectionPrompts:
    domain: str  # what the corpus's texts are, for {domain}
    templates: dict[str, str]
    tones: tuple[str, ...]
    blank: str

    @classmethod
    def load(cls, path: str | Path, dataset_format: str) -> SelectionPrompts:
        """The prompts of a YAML file for a dataset of `dataset_format`; a missing key stops naming it."""
        data = yaml.safe_load(read_text_utf8(path)) or {}
        missing = [key for key in (*TEMPLATES, "domains", "tones", "blank") if key not in data]
        if missing:
            raise InputError(path, None, f"missing {', '.join(missing)}")
        if dataset_format not in data["domains"]:
            raise InputError(path, "domains", f"no description of the dataset format {dataset_format!r}")
        if not data["tones"]:
            raise InputError(path, "tones", "needs at least one tone")
        templates = {name: str(data[name]).rstrip("\n") + "\n" for name in TEMPLATES}
        return cls(str(data["domains"][dataset_format]), templates, tuple(data["tones"]), str(data["blank"]))

    def render(self, template: str, text: str = "", tone: str = "") -> str:
        return self.templates[template].format(domain=self.domain, text=text.strip(), tone=tone)

    def fitted(self, template: str, text: str, tokenizer, budget: int, tone: str = "") -> tuple[str, int]:
        """The prompt with `text`, its tokens cut from the end until the prompt fits `budget` tokens; and
        the number cut."""
        room = budget - len(tokenizer(self.render(template, "", tone), add_special_tokens=False).input_ids)
        if room < 1:
            raise ValueError(f"the {template} prompt alone exceeds the prompt budget of {budget} tokens")
        ids = tokenizer(text.strip(), add_special_tokens=False).input_ids
        while True:  # a cut text may tokenise a little longer once decoded: cut again until it fits
            prompt = self.render(template, tokenizer.decode(ids[:room]) if room < len(ids) else text, tone)
            excess = len(tokenizer(prompt, add_special_tokens=False).input_ids) - budget
            if excess <= 0:
                return prompt, max(0, len(ids) - room)
            room = max(0, room - excess)

    def tone(self, rng: random.Random) -> str:
        return rng.choice(self.tones)

    def blanked(self, text: str, share: float, rng: random.Random) -> str:
        """`text` with round(share x words) of its words, drawn with `rng`, each replaced by the blank."""
        words = text.split()
        chosen = set(rng.sample(range(len(words)), round(share * len(words))))
        return " ".join(self.blank if i in chosen else word for i, word in enumerate(words))
