"""Text classification as an engine task: length-bucketed shuffled batches of sentences,
cross-entropy over every sentence, dev loss and accuracy; the best epoch is the one with the
highest dev accuracy.

The loop (AdamW, the constant or linear warm-up/decay schedule, clipping, checkpoints, exact
resume, early stopping, ``max_minutes``) is the engine's
(:class:`~attnkit.engine.trainer.Trainer`)::

    from attnkit.apps.classification.training import ClassificationTask
    result = fit(ClassificationTask(load_classifier_config("configs/rationales-bigru.yaml")),
                 "runs/rationales-bigru")
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from attnkit.apps.classification.classifier import (
    build_classifier,
    load_tokenizer,
    new_model,
    new_tokenizer,
    save_tokenizer,
)
from attnkit.apps.classification.config import TextClassificationConfig
from attnkit.apps.classification.data import LabelledText, load_split
from attnkit.apps.classification.tokens import Encoded, pad_batch
from attnkit.engine.results import TrainResult
from attnkit.engine.rundir import RunDir
from attnkit.engine.task import Loss, Task
from attnkit.modules.bert import BertConfig


def length_batches(lengths: Sequence[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches of similar lengths: shuffle, sort within chunks of 50 batches, cut,
    then shuffle the batches (so padding stays small and the order stays random)."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    batches = []
    chunk = batch_size * 50
    for start in range(0, len(order), chunk):
        part = sorted(order[start : start + chunk], key=lambda i: lengths[i])
        batches += [part[i : i + batch_size] for i in range(0, len(part), batch_size)]
    rng.shuffle(batches)
    return batches


@torch.no_grad()
def dev_scores(
    model: nn.Module,
    items: Sequence[Encoded],
    labels: torch.Tensor,
    pad_id: int,
    batch_size: int = 128,
) -> dict[str, float]:
    """Mean cross-entropy and accuracy of ``model`` (in eval mode) on encoded texts, in
    batches sorted by length."""
    device = next(model.parameters()).device
    order = sorted(range(len(items)), key=lambda i: len(items[i].ids))
    loss, correct = 0.0, 0
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        ids, keep = pad_batch([items[i] for i in chunk], pad_id, device)
        logits = model(ids, keep).logits.float()  # (B, C)
        gold = labels[chunk].to(device)
        loss += float(F.cross_entropy(logits, gold, reduction="sum"))
        correct += int((logits.argmax(-1) == gold).sum())
    n = max(len(items), 1)
    return {"valid_loss": loss / n, "valid_accuracy": correct / n}


class ClassificationTask(Task):
    """The :class:`~attnkit.engine.task.Task` of a text-classification experiment."""

    monitor, mode = "valid_accuracy", "max"

    def __init__(self, cfg: TextClassificationConfig) -> None:
        self.config = cfg
        self.tokenizer: Any = None
        self.bert_config: BertConfig | None = None  # MiniLM: the encoder's config
        self.fresh = True  # build the model from scratch (MiniLM: from the pretrained weights)
        self.train_items: list[Encoded] = []
        self.dev_items: list[Encoded] = []
        self.train_labels = self.dev_labels = torch.zeros(0, dtype=torch.long)
        self._order: tuple[int, list[list[int]], Any] | None = None  # (epoch, batches, rng)

    @property
    def model_width(self) -> int:
        """For the ``noam`` schedule: the Transformer's width, or the encoder's."""
        if self.bert_config is not None:
            return self.bert_config.hidden_size
        return self.config.model.embed_dim

    def prepare(self, run: RunDir, *, resume: bool) -> None:
        """Read the train and dev splits; build the tokenizer and write its files into the run
        directory (or, resuming, read them back)."""
        train, dev = load_split(self.config, "train"), load_split(self.config, "dev")
        if not train:
            raise ValueError("data: the training split is empty")
        self.fresh = not resume
        if resume:
            self.tokenizer, self.bert_config = load_tokenizer(run.root, self.config)
        else:
            self.tokenizer, bert_file = new_tokenizer(self.config, [e.text for e in train])
            save_tokenizer(run.root, self.tokenizer, bert_file)
            if bert_file is not None:
                hf = json.loads(bert_file.read_text(encoding="utf-8"))
                self.bert_config = BertConfig.from_hf_config_dict(hf)
        self.train_items, self.train_labels = self._encode(train)
        self.dev_items, self.dev_labels = self._encode(dev)

    def _encode(self, examples: list[LabelledText]) -> tuple[list[Encoded], torch.Tensor]:
        items = self.tokenizer.encode([e.text for e in examples])
        return items, torch.tensor([e.label for e in examples], dtype=torch.long)

    def build_model(self) -> nn.Module:
        if self.fresh:
            return new_model(self.config, self.tokenizer)
        return build_classifier(self.config, self.tokenizer, self.bert_config)

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        """Epoch ``epoch``'s batches: epoch after epoch from one ``random.Random(train.seed)``,
        so a pure function of (seed, epoch); the last epoch's stream is kept to continue."""
        t = self.config.train
        if self._order is None or self._order[0] > epoch:
            self._order = (0, [], random.Random(t.seed))
        done, batches, rng = self._order
        lengths = [len(item.ids) for item in self.train_items]
        for _ in range(done, epoch):
            batches = length_batches(lengths, t.batch_size, rng)
        self._order = (epoch, batches, rng)
        return batches

    def units(self, batch: list[int]) -> int:
        """Sentences: the loss is the mean over the sentences of an update."""
        return len(batch)

    def loss(self, model: nn.Module, batch: list[int]) -> Loss:
        device = next(model.parameters()).device
        items = [self.train_items[i] for i in batch]
        ids, keep = pad_batch(items, self.tokenizer.pad_id, device)  # (B, T)
        logits = model(ids, keep).logits.float()  # (B, C)
        gold = self.train_labels[batch].to(device)
        total = F.cross_entropy(logits, gold, reduction="sum")
        accuracy = float((logits.detach().argmax(-1) == gold).float().mean())
        return Loss(total, len(batch), {"train_accuracy": accuracy})

    def validate(self, model: nn.Module) -> dict[str, float]:
        """Dev loss and accuracy (``{}`` without dev examples: the last epoch is kept)."""
        if not self.dev_items:
            return {}
        model.eval()
        return dev_scores(model, self.dev_items, self.dev_labels, self.tokenizer.pad_id)

    def finish(self, run: RunDir, model: nn.Module, result: TrainResult) -> dict[str, Any]:
        """The best dev accuracy and, where the data has a labelled test split, the best
        model's test accuracy (the engine has loaded the best weights into ``model``)."""
        final: dict[str, Any] = {"best_valid_accuracy": result.best.get("valid_accuracy")}
        test = self._test_examples()
        if test:
            model.eval()
            items, labels = self._encode(test)
            scores = dev_scores(model, items, labels, self.tokenizer.pad_id)
            final["test_accuracy"] = scores["valid_accuracy"]
        return final

    def _test_examples(self) -> list[LabelledText]:
        d = self.config.data
        has_test = d.source == "rationales" and d.generated_sizes[2] > 0
        return (
            load_split(self.config, "test")
            if has_test or (d.source == "tsv" and d.test_file)
            else []
        )
