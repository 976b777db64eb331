"""Speech recognition as an engine task: batches of utterances of similar length and the joint
CTC-attention loss (Watanabe et al. 2017, eq. (5): ``lambda L_ctc + (1 - lambda) L_att``, with
``L_att`` the teacher-forced cross-entropy of Listen, Attend and Spell, Chan et al. 2016, eq.
(11), and ``L_ctc`` Graves et al. 2006's loss by ``torch.nn.functional.ctc_loss`` over the
listener's annotations); ``ctc_weight`` 0 trains LAS alone, 1 a CTC model alone.

An epoch visits every training utterance once in batches of similar length; the order is a
pure function of ``(seed, epoch)``, and so are the SpecAugment masks (seeded by seed, epoch
and utterance), so a resumed run continues exactly. Validation decodes the validation split
greedily (CTC-only: best path); the best epoch has the lowest WER (for digit strings, whose
tokens are the digits, the WER is the digit error rate). ::

    from attnkit.apps.speech.config import load_config
    from attnkit.apps.speech.training import SpeechTask
    from attnkit.engine.trainer import fit
    result = fit(SpeechTask(load_config("configs/fsdd-las.yaml")), "runs/fsdd-las")
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from attnkit.apps.speech.config import SpeechConfig
from attnkit.apps.speech.data import EOS, PAD, SpeechSet, Vocabulary, load_split
from attnkit.apps.speech.model import SpeechModel, joint_loss
from attnkit.apps.speech.recognise import collate_features, transcribe_features
from attnkit.engine.batching import length_batches
from attnkit.engine.rundir import RunDir
from attnkit.engine.task import Loss, Task
from attnkit.metrics.speech import cer, wer

log = logging.getLogger(__name__)


@dataclass
class Ready:
    """One training batch collated."""

    src: torch.Tensor  # (B, T, F) features padded with zeros
    mask: torch.Tensor  # (B, T // 2^p) True at real annotations
    ids: torch.Tensor  # (B, U+1) BOS ... EOS, padded with PAD
    units: int  # target tokens (EOS included)


class SpeechTask(Task):
    """The :class:`~attnkit.engine.task.Task` of a speech run."""

    monitor = "valid_wer"
    mode = "min"

    def __init__(self, cfg: SpeechConfig) -> None:
        self.config = cfg
        self.train_set = self.valid_set = SpeechSet()
        self.vocab: Vocabulary | None = None
        self.tokens: list[torch.Tensor] = []  # per training utterance: BOS ... EOS ids
        self.model_width = cfg.model.d_decoder

    def prepare(self, run: RunDir, *, resume: bool) -> None:
        """Read or make the utterances and their features, build (or reload) the vocabulary."""
        data = self.config.data
        self.train_set = load_split(data, "train")
        path = run.root / "vocab.json"
        self.vocab = (
            Vocabulary.load(path) if resume else Vocabulary.build(data, self.train_set.texts)
        )
        if not resume:
            self.vocab.save(path)
        self.tokens = [torch.tensor(self.vocab.encode(t)) for t in self.train_set.texts]
        self.valid_set = load_split(data, "valid")
        log.info(
            "%d training and %d validation utterances, %d output tokens",
            len(self.train_set), len(self.valid_set), len(self.vocab),
        )  # fmt: skip

    def build_model(self) -> torch.nn.Module:
        return SpeechModel(self.config.model, len(self.vocab), pad_id=PAD)

    def epoch_batches(self, epoch: int) -> list[list[tuple[int, int]]]:
        """Batches of ``(utterance, epoch)`` of similar length (the epoch seeds SpecAugment)."""
        t = self.config.train
        lengths = [len(f) for f in self.train_set.features]
        cut = length_batches(lengths, seed=t.seed, epoch=epoch, size=t.batch_size)
        return [[(i, epoch) for i in b] for b in cut]

    def units(self, items: list[tuple[int, int]]) -> int:
        """Target tokens (EOS included): the loss is summed over them."""
        return sum(len(self.tokens[i]) - 1 for i, _ in items)

    def _features(self, i: int, epoch: int) -> np.ndarray:
        features = self.train_set.features[i]
        if not self.config.data.spec_augment:
            return features
        from attnkit.apps.speech.specaugment import SpecAugment, spec_augment

        seed = np.random.default_rng((self.config.train.seed, epoch, i))
        return spec_augment(features, SpecAugment(), seed)[0]

    def collate(self, items: list[tuple[int, int]]) -> Ready:
        """Features padded with their annotation mask, and the token ids."""
        src, mask = collate_features(
            [self._features(i, e) for i, e in items], self.config.model.pyramid
        )
        tokens = [self.tokens[i] for i, _ in items]
        ids = torch.nn.utils.rnn.pad_sequence(tokens, batch_first=True, padding_value=PAD)
        return Ready(src, mask, ids, sum(len(t) - 1 for t in tokens))  # ids (B, U+1)

    def loss(self, model, ready: Ready | list) -> Loss:
        if not isinstance(ready, Ready):
            ready = self.collate(ready)
        device = next(model.parameters()).device
        src, mask = ready.src.to(device), ready.mask.to(device)
        ids = ready.ids.to(device)  # (B, U+1)
        weight = self.config.model.ctc_weight
        memory = model.encode(src, mask)
        ctc = attention = None
        stats = {}
        if weight > 0:
            log_probs, lengths = model.ctc_log_probs(memory)  # (B, T', V), (B,)
            labels = ids[:, 1:-1] if ids.size(1) > 2 else ids[:, 1:1]  # (B, U-1) no BOS/EOS
            labels = labels.masked_fill(labels == EOS, PAD)  # EOS of shorter ones -> padding
            ctc = F.ctc_loss(
                log_probs.transpose(0, 1).float(), labels, lengths, (labels != PAD).sum(1),
                blank=model.blank, reduction="sum", zero_infinity=True,
            )  # fmt: skip
            stats["ctc"] = float(ctc.detach()) / max(ready.units, 1)
        if weight < 1:
            logits, _ = model.speller.teacher_forced(memory, ids[:, :-1])  # (B, U, V)
            attention = F.cross_entropy(
                logits.flatten(0, 1).float(), ids[:, 1:].flatten(), ignore_index=PAD,
                reduction="sum", label_smoothing=self.config.train.label_smoothing,
            )  # fmt: skip
            stats["attention"] = float(attention.detach()) / max(ready.units, 1)
        return Loss(joint_loss(ctc, attention, weight), ready.units, stats)

    @torch.no_grad()
    def validate(self, model) -> dict[str, float]:
        """Greedy transcripts of the validation split: WER and CER."""
        if not len(self.valid_set):
            return {}
        found = transcribe_features(
            model, self.vocab, self.valid_set.features, max_len=self.config.train.max_len
        )
        hyps = [t.text for t in found]
        return {
            "valid_wer": wer(self.valid_set.texts, hyps),
            "valid_cer": cer(self.valid_set.texts, hyps),
        }
