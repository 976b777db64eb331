"""Fresh generated formulas every epoch, rendered where the batch is made.

The first causes of the im2latex gap (issue 38) were too few images and always the same ones:
a fixed pool of generated formulas, reused every epoch, while the paper's trainer shows about
a million (Deng et al. 2017, §5). With ``data.fresh: true`` the generated training formulas
are a stream: epoch ``e`` reads examples ``(e - 1) * n .. e * n - 1`` of the training seed
(``n = data.generated[0]``; :mod:`~attnkit.apps.im2latex.examples`), so epoch 1 is the fixed
pool and every later epoch shows formulas never seen before.

The main process only plans an epoch (:func:`plan_epoch`: each formula's tokens and scale,
drawn without rendering, 0.3 ms each); the task's ``collate`` renders them
(:func:`render_fresh`, about 5 ms each), in ``train.workers`` DataLoader processes while the
model trains. A batch groups formulas of similar estimated width, as the paper buckets images
by size: the estimate, scale x visible tokens x 8.9 px, correlates at 0.92 with the rendered
width (300 formulas of seed 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnkit.apps.im2latex.config import FormulaDataConfig
from attnkit.apps.im2latex.examples import example_at, plan_at
from attnkit.apps.im2latex.images import fit
from attnkit.apps.im2latex.sets import drawing

PIXELS_PER_TOKEN = 8.9  # median rendered width per visible token at scale 1 (seed 0, 300 drawn)
SILENT = frozenset("{}^_")  # tokens that draw nothing themselves


@dataclass(frozen=True)
class Fresh:
    """One generated training formula of an epoch, planned but not yet rendered."""

    k: int  # its index in the training stream
    tokens: tuple[str, ...]
    width: float  # estimated width of its image, pixels


def train_seed(data: FormulaDataConfig) -> int:
    """The training stream's seed: split 0 of ``data.seed`` (as :mod:`.sets` seeds splits)."""
    return 10 * data.seed


def plan_epoch(data: FormulaDataConfig, epoch: int) -> list[Fresh]:
    """Epoch ``epoch``'s (from 1) generated training formulas, unrendered."""
    n, how, seed = data.generated[0], drawing(data), train_seed(data)
    plan = []
    for k in range((epoch - 1) * n, epoch * n):
        tokens, scale = plan_at(seed, k, how)
        visible = max(1, sum(t not in SILENT for t in tokens))
        plan.append(Fresh(k, tuple(tokens), scale * visible * PIXELS_PER_TOKEN))
    return plan


def render_fresh(item: Fresh, data: FormulaDataConfig) -> tuple[np.ndarray, list[str]]:
    """The formula's image, fitted to ``data.max_height x data.max_width``, and its tokens
    (the planned ones, unless mathtext could not render them and the example was redrawn)."""
    image, tokens, _ = example_at(train_seed(data), item.k, drawing(data))
    return fit(image, data.max_height, data.max_width), tokens
