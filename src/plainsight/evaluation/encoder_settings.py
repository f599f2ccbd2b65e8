"""The downstream encoder's settings (`utility.downstream.encoder`), apart from the classifier so that
the task (`plainsight.evaluation.downstream`) reads them without torch and the classifier
(`plainsight.evaluation.encoder_classifier`) without the task."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EncoderSettings:
    model: str = "prajjwal1/bert-tiny"
    epochs: float = 3.0
    batch_size: int = 16
    learning_rate: float = 5e-5
    max_length: int = 256
