"""The paper profile's downstream classifier: an encoder fine-tuned with Hugging Face's Trainer.

`AutoModelForSequenceClassification` with a fresh head (`multi_label_classification`: a sigmoid
per label, a label predicted above 0.5; else a softmax and the arg-max). It runs on `model.device`
in float32 weights (mixed precision bfloat16 on a GPU that has it), seeded; the Trainer's steps go
to the rule's log through `plainsight.progress.Progress`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence

import numpy as np
import torch

from plainsight.evaluation.encoder_settings import EncoderSettings
from plainsight.models import resolve_placement
from plainsight.progress import Progress


class _TextDataset(torch.utils.data.Dataset):
    def __init__(self, encodings: Mapping[str, list], targets: np.ndarray | None, multi_label: bool):
        self.encodings, self.targets, self.multi_label = encodings, targets, multi_label

    def __len__(self) -> int:
        return len(self.encodings["input_ids"])

    def __getitem__(self, index: int) -> dict:
        item = {key: torch.tensor(values[index]) for key, values in self.encodings.items()}
        if self.targets is not None:
            row = self.targets[index]
            item["labels"] = (
                torch.tensor(row, dtype=torch.float32)
                if self.multi_label
                else torch.tensor(int(row.argmax()))
            )
        return item


def _progress_callback(total_steps: int):
    from transformers import TrainerCallback

    class ProgressCallback(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            self.progress = Progress(total_steps, "fine-tune downstream encoder", "steps")

        def on_step_end(self, args, state, control, **kwargs):
            self.progress.update(1)

        def on_train_end(self, args, state, control, **kwargs):
            self.progress.close()

    return ProgressCallback()


class EncoderClassifier:
    """fit on texts and 0/1 label matrices, scores per text and label, as `TfidfLogisticRegression`."""

    def __init__(
        self,
        multi_label: bool,
        settings: EncoderSettings,
        seed: int = 0,
        placement: Mapping[str, str] | None = None,
    ):
        self.multi_label, self.settings, self.seed = multi_label, settings, seed
        self.device, _ = resolve_placement(placement or {"device": "cpu", "dtype": "float32"})

    def _encode(self, texts: Sequence[str]) -> dict:
        return self.tokenizer(
            list(texts), truncation=True, max_length=self.settings.max_length, padding="max_length"
        )

    def fit(self, texts: Sequence[str], targets: np.ndarray) -> EncoderClassifier:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments

        torch.manual_seed(self.seed)
        self.tokenizer = AutoTokenizer.from_pretrained(self.settings.model)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        problem = "multi_label_classification" if self.multi_label else "single_label_classification"
        self.model = AutoModelForSequenceClassification.from_pretrained(
            self.settings.model, num_labels=targets.shape[1], problem_type=problem
        )
        self.model.config.pad_token_id = self.tokenizer.pad_token_id
        dataset = _TextDataset(self._encode(texts), targets, self.multi_label)
        on_gpu = self.device.type == "cuda"
        steps = int(np.ceil(len(dataset) / self.settings.batch_size) * self.settings.epochs)
        with tempfile.TemporaryDirectory() as scratch:
            arguments = TrainingArguments(
                output_dir=scratch,
                num_train_epochs=self.settings.epochs,
                learning_rate=self.settings.learning_rate,
                per_device_train_batch_size=self.settings.batch_size,
                seed=self.seed,
                data_seed=self.seed,
                save_strategy="no",
                report_to=[],
                logging_strategy="no",
                disable_tqdm=True,
                use_cpu=not on_gpu,
                bf16=on_gpu and torch.cuda.is_bf16_supported(),
            )
            Trainer(
                model=self.model, args=arguments, train_dataset=dataset, callbacks=[_progress_callback(steps)]
            ).train()
        self.model.eval()
        return self

    @torch.inference_mode()
    def scores(self, texts: Sequence[str]) -> np.ndarray:
        """The head's logits: positive where a sigmoid label is above 0.5."""
        encodings = self._encode(texts)
        logits = []
        for start in range(0, len(texts), self.settings.batch_size):
            batch = {
                key: torch.tensor(values[start : start + self.settings.batch_size], device=self.model.device)
                for key, values in encodings.items()
            }
            logits.append(self.model(**batch).logits.float().cpu().numpy())
        return np.concatenate(logits) if logits else np.zeros((0, self.model.config.num_labels))
