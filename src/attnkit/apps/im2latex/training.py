"""Image to LaTeX as an engine task: batches of similar-sized formula images and the
teacher-forced cross-entropy of their tokens (Deng et al. 2017, §3, eq. (3): the negative
log-likelihood of the markup given the image).

An epoch visits every training image once (the generated ones and ``real_repeat`` copies of
the real ones) in batches of images of similar width, as the paper buckets images by size;
batch order is a pure function of ``(seed, epoch)``, so a resumed run continues exactly.
Validation reads the validation images greedily; the best epoch has the highest BLEU. ::

    from attnkit.apps.im2latex.config import load_config
    from attnkit.apps.im2latex.training import Im2LatexTask
    from attnkit.engine.trainer import fit
    result = fit(Im2LatexTask(load_config("configs/formulas-im2latex.yaml")), "runs/formulas")
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from attnkit.apps.im2latex.config import Im2LatexConfig
from attnkit.apps.im2latex.fresh import Fresh, plan_epoch, render_fresh
from attnkit.apps.im2latex.grammar import VOCABULARY
from attnkit.apps.im2latex.images import batch
from attnkit.apps.im2latex.model import FormulaReader
from attnkit.apps.im2latex.reading import read_formulas
from attnkit.apps.im2latex.scores import formula_scores
from attnkit.apps.im2latex.sets import FormulaSet, training_set, validation_set
from attnkit.apps.im2latex.vocab import PAD, Vocabulary
from attnkit.engine.rundir import RunDir
from attnkit.engine.task import Loss, Task


@dataclass
class Ready:
    """One training batch collated (in a DataLoader worker with ``train.workers`` > 0)."""

    src: torch.Tensor  # (B, 1, H, W) images padded to the batch's largest, 1 = ink
    mask: torch.Tensor  # (B, R * C) True at grid cells over a real pixel
    ids: torch.Tensor  # (B, T+1) BOS ... EOS, padded with PAD
    units: int  # target tokens (EOS included)


log = logging.getLogger(__name__)


def size_batches(widths: list[int], *, seed: int, epoch: int, batch_size: int) -> list[list[int]]:
    """Every index once, in batches of similar width: shuffle, sort windows of 50 batches by
    width, cut into batches, shuffle the batches. A pure function of ``(seed, epoch)``."""
    rng = np.random.default_rng((seed, epoch))
    order = rng.permutation(len(widths))
    window = 50 * batch_size
    batches = []
    for start in range(0, len(order), window):
        chunk = sorted(order[start : start + window].tolist(), key=lambda i: widths[i])
        batches += [chunk[k : k + batch_size] for k in range(0, len(chunk), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


class Im2LatexTask(Task):
    """The :class:`~attnkit.engine.task.Task` of an image-to-LaTeX run."""

    monitor = "valid_bleu"
    mode = "max"

    def __init__(self, cfg: Im2LatexConfig) -> None:
        self.config = cfg
        self.train_set = self.valid_set = FormulaSet()
        self.vocab: Vocabulary | None = None
        self.tokens: list[torch.Tensor] = []  # per training image: BOS ... EOS ids
        self._planned: tuple[int, list[Fresh]] = (0, [])  # the last epoch planned (data.fresh)

    def prepare(self, run: RunDir, *, resume: bool) -> None:
        """Render or read the formulas, drop over-long ones, build (or reload) the vocabulary."""
        data = self.config.data
        full = training_set(data, self.config.train.workers)  # rendered in workers if > 0
        keep = [i for i, f in enumerate(full.formulas) if len(f) <= data.max_target]
        if len(keep) < len(full):
            log.info(
                "left out %d training formulas longer than %d tokens",
                len(full) - len(keep),
                data.max_target,
            )
        self.train_set = FormulaSet(
            *([getattr(full, a)[i] for i in keep] for a in ("images", "formulas", "names"))
        )
        path = run.root / "vocab.json"
        seen = self.train_set.formulas
        if data.fresh:  # the grammar's inventory, ordered by the first epoch's counts
            seen = [*seen, *(f.tokens for f in self._plan(1)), VOCABULARY]
        self.vocab = Vocabulary.load(path) if resume else Vocabulary.build(seen)
        if not resume:
            self.vocab.save(path)
        self.tokens = [torch.tensor(self.vocab.encode(f)) for f in self.train_set.formulas]
        self.valid_set = validation_set(data, self.config.train.workers)
        fresh = f" + {data.generated[0]} fresh generated each epoch" if data.fresh else ""
        log.info(
            "%d training%s and %d validation formulas, %d tokens in the vocabulary",
            len(self.train_set),
            fresh,
            len(self.valid_set),
            len(self.vocab),
        )

    def build_model(self) -> torch.nn.Module:
        return FormulaReader(self.config.model, len(self.vocab), pad_id=PAD)

    def epoch_batches(self, epoch: int) -> list[list[int | Fresh]]:
        """Batches of similar width: indices of ``train_set`` and, with ``data.fresh``, the
        epoch's new formulas (:class:`~attnkit.apps.im2latex.fresh.Fresh`, rendered in
        :meth:`collate`)."""
        t, data = self.config.train, self.config.data
        items: list[int | Fresh] = list(range(len(self.train_set)))
        widths = [float(im.shape[1]) for im in self.train_set.images]
        if data.fresh and data.generated[0]:
            plan = self._plan(epoch)
            items += plan
            widths += [f.width for f in plan]
        cut = size_batches(widths, seed=t.seed, epoch=epoch, batch_size=t.batch_size)
        return [[items[i] for i in b] for b in cut]

    def _plan(self, epoch: int) -> list[Fresh]:
        """The epoch's fresh formulas, planned once (the vocabulary, the trainer's count of
        batches and epoch 1 all ask for epoch 1)."""
        if self._planned[0] != epoch:
            self._planned = (epoch, plan_epoch(self.config.data, epoch))
        return self._planned[1]

    def units(self, items: list[int | Fresh]) -> int:
        """Target tokens (EOS included): the loss is summed over them."""
        return sum(
            len(self.tokens[i]) - 1 if isinstance(i, int) else len(i.tokens) + 1 for i in items
        )

    def collate(self, items: list[int | Fresh]) -> Ready:
        """The batch's images padded into one tensor with its mask, and its token ids (fresh
        formulas rendered here)."""
        images, tokens = [], []
        for i in items:
            if isinstance(i, int):
                images.append(self.train_set.images[i])
                tokens.append(self.tokens[i])
            else:
                image, drawn = render_fresh(i, self.config.data)
                images.append(image)
                tokens.append(torch.tensor(self.vocab.encode(drawn)))
        src, mask = batch(images, self.config.model.stride)
        ids = torch.nn.utils.rnn.pad_sequence(tokens, batch_first=True, padding_value=PAD)
        return Ready(src, mask, ids, sum(len(t) - 1 for t in tokens))  # ids (B, T+1)

    def loss(self, model, ready: Ready | list[int]) -> Loss:
        if not isinstance(ready, Ready):  # a batch of indices, not yet collated
            ready = self.collate(ready)
        device = next(model.parameters()).device
        ids = ready.ids.to(device, non_blocking=True)  # (B, T+1)
        src, mask = ready.src.to(device, non_blocking=True), ready.mask.to(device)
        out = model(src, mask, ids[:, :-1])  # logits (B, T, V)
        total = F.cross_entropy(
            out.logits.flatten(0, 1).float(),
            ids[:, 1:].flatten(),
            ignore_index=PAD,
            reduction="sum",
            label_smoothing=self.config.train.label_smoothing,
        )
        return Loss(total, ready.units)

    @torch.no_grad()
    def validate(self, model) -> dict[str, float]:
        """Greedy readings of the validation images: BLEU and exact match."""
        if not len(self.valid_set):
            return {}
        readings = read_formulas(
            model, self.vocab, self.valid_set.images, max_len=self.config.train.max_len
        )
        scores = formula_scores([r.tokens for r in readings], self.valid_set.formulas, images=False)
        return {f"valid_{k}": float(v) for k, v in scores.items()}
