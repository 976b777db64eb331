"""Where a captioner looks: attention correctness against known boxes, and per-word pictures.

Attention correctness (after Liu et al. 2017, "Attention Correctness in Neural Image
Captioning"): for each emitted noun, the share of the attention map that falls inside the box
of the object the noun names, with each grid cell's weight spread evenly over its pixels; and
pointing accuracy, whether the most attended cell's centre lies inside that box. Both are
measured on the map of the noun's own step and, as Liu et al. do for noun phrases, on the mean
map over the steps of its phrase ("a red circle"): a decoder with memory (the LSTM of Xu et al.)
may look at an object while saying "a" and name it from memory two steps later.

The pictures follow Xu et al. 2015, Figs. 2-3: the image, then one panel per emitted word with
the attention map upsampled to the image and laid over it (bright = attended).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnkit.apps.captioning.scenes import COLOURS, SHAPES, Scene


def cell_overlap(box: Sequence[int], grid: int, canvas: int) -> np.ndarray:
    """``(grid * grid,)`` fraction of each cell's area (row-major) inside ``box``
    ``(x0, y0, x1, y1)`` in pixels, ``x1``/``y1`` exclusive."""
    x0, y0, x1, y1 = box
    cell = canvas / grid
    edges = np.arange(grid + 1) * cell
    ox = np.clip(np.minimum(edges[1:], x1) - np.maximum(edges[:-1], x0), 0, None) / cell
    oy = np.clip(np.minimum(edges[1:], y1) - np.maximum(edges[:-1], y0), 0, None) / cell
    return np.outer(oy, ox).reshape(-1)  # (G*G,)


def mass_in_box(alpha: np.ndarray, box: Sequence[int], grid: int, canvas: int) -> float:
    """Share of the attention ``alpha (grid * grid,)`` inside ``box``."""
    return float(np.dot(np.asarray(alpha, float), cell_overlap(box, grid, canvas)))


def points_into(alpha: np.ndarray, box: Sequence[int], grid: int, canvas: int) -> bool:
    """Whether the centre of the most attended cell lies inside ``box``."""
    index = int(np.argmax(alpha))
    cell = canvas / grid
    cy, cx = (index // grid + 0.5) * cell, (index % grid + 0.5) * cell
    x0, y0, x1, y1 = box
    return bool(x0 <= cx < x1 and y0 <= cy < y1)


def named_object(words: Sequence[str], position: int, scene: Scene) -> int | None:
    """The index in ``scene.objects`` of the object the noun ``words[position]`` names: the one
    of that shape and of the colour said just before it; failing that, the only object of that
    shape; else ``None`` (the noun names nothing in the scene, or is ambiguous)."""
    shape = words[position]
    colour = words[position - 1] if position > 0 and words[position - 1] in COLOURS else None
    same = [k for k, o in enumerate(scene.objects) if o.shape == shape]
    exact = [k for k in same if scene.objects[k].colour == colour]
    if len(exact) == 1:
        return exact[0]
    return same[0] if len(same) == 1 else None


@dataclass
class Correctness:
    """Attention correctness over many captions' nouns (fractions in ``[0, 1]``).

    ``nouns``: emitted nouns; ``matched``: those naming an object of the scene (the others
    count as misses in every measure); ``mass``: mean share of attention inside the named
    object's box at the noun's step; ``pointing``: share of nouns whose most attended cell is
    inside that box; ``phrase_mass`` / ``phrase_pointing``: the same for the mean map over the
    noun phrase's steps (from its article to the noun).
    """

    nouns: int
    matched: int
    mass: float
    pointing: float
    phrase_mass: float = 0.0
    phrase_pointing: float = 0.0

    def as_dict(self) -> dict:
        return {
            "nouns": self.nouns,
            "matched": self.matched,
            "mass_in_box": self.mass,
            "pointing": self.pointing,
            "phrase_mass_in_box": self.phrase_mass,
            "phrase_pointing": self.phrase_pointing,
        }


def attention_correctness(
    captions: Sequence[Sequence[str]],
    alphas: Sequence[np.ndarray],
    scenes: Sequence[Scene],
    grid: int,
) -> Correctness:
    """Score ``alphas[n] (T_n, grid * grid)``, the map used for each word of ``captions[n]``
    (emitted words, EOS excluded), against the boxes of ``scenes[n]``."""
    nouns = matched = 0
    totals = np.zeros(4)  # mass, pointing, phrase mass, phrase pointing
    for words, alpha, scene in zip(captions, alphas, scenes, strict=True):
        canvas = scene.image.shape[0]
        for j, word in enumerate(words):
            if word not in SHAPES:
                continue
            nouns += 1
            k = named_object(words, j, scene)
            if k is None:
                continue
            matched += 1
            box = scene.objects[k].box
            phrase = alpha[phrase_start(words, j) : j + 1].mean(axis=0)  # (L,)
            totals += [
                mass_in_box(alpha[j], box, grid, canvas),
                points_into(alpha[j], box, grid, canvas),
                mass_in_box(phrase, box, grid, canvas),
                points_into(phrase, box, grid, canvas),
            ]
    if nouns == 0:
        return Correctness(0, 0, 0.0, 0.0)
    return Correctness(nouns, matched, *(totals / nouns).tolist())


def phrase_start(words: Sequence[str], position: int) -> int:
    """The step where the noun phrase ending at ``position`` starts: its article ``a`` at most
    two words back, else the noun itself."""
    for back in (2, 1):
        if position - back >= 0 and words[position - back] == "a":
            return position - back
    return position


def score_captions(captions, scenes, grid: int) -> dict:
    """sacreBLEU BLEU-4, exact match and attention correctness against the scenes' truth."""
    correct = attention_correctness(
        [c.words for c in captions], [c.alpha for c in captions], scenes, grid
    )
    return {**text_scores(captions, [s.caption for s in scenes]), **correct.as_dict()}


def text_scores(captions, references: Sequence[str]) -> dict:
    """sacreBLEU BLEU-4 and exact match (words and the spaces between them) of ``captions``
    against their reference texts, with the count and BLEU's signature."""
    from attnkit.metrics.bleu import score_corpus

    hyps = [c.text for c in captions]
    scores = score_corpus(hyps, list(references))
    exact = float(np.mean([h.split() == r.split() for h, r in zip(hyps, references, strict=True)]))
    return {
        "n": len(hyps),
        "bleu": scores.bleu,
        "bleu_signature": scores.bleu_signature,
        "exact_match": exact,
    }


def upsample(alpha: np.ndarray, canvas: int) -> np.ndarray:
    """``(grid * grid,)`` -> ``(canvas, canvas)`` by bilinear interpolation between cell
    centres, normalised to a maximum of 1 (an all-zero map stays zero)."""
    grid = int(round(np.sqrt(alpha.size)))
    a = np.asarray(alpha, float).reshape(grid, grid)  # (G, G)
    centres = (np.arange(grid) + 0.5) * canvas / grid
    pixels = np.arange(canvas) + 0.5
    rows = np.stack([np.interp(pixels, centres, a[:, j]) for j in range(grid)], 1)  # (S, G)
    full = np.stack([np.interp(pixels, centres, rows[i]) for i in range(canvas)])  # (S, S)
    top = full.max()
    return full / top if top > 0 else full


def plot_caption(
    image: np.ndarray,
    words: Sequence[str],
    alphas: np.ndarray,
    path: str | Path,
    *,
    boxes: Sequence[Sequence[int]] | None = None,
    title: str | None = None,
) -> Path:
    """Write the image and one panel per word with its attention laid over it.

    ``image (S, S, 3)`` in ``[0, 1]``; ``alphas (T, grid * grid)`` (rows of zeros for the
    no-attention model draw the plain image); ``boxes`` are drawn as thin outlines.
    """
    from attnkit.runtime import files_backend

    files_backend()
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    path = Path(path)
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise ValueError(f"{path}: unknown picture format {path.suffix!r}; use .png, .svg or .pdf")
    canvas = image.shape[0]
    panels = len(words) + 1
    cols = min(panels, 6)
    rows = -(-panels // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(1.6 * cols, 1.75 * rows), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    axes.flat[0].imshow(image, interpolation="nearest")
    axes.flat[0].set_title(title or "image", fontsize=8)
    for j, word in enumerate(words):
        ax = axes.flat[j + 1]
        heat = upsample(alphas[j], canvas) if np.any(alphas[j]) else np.ones((canvas, canvas))
        ax.imshow(image * (0.2 + 0.8 * heat[..., None]), interpolation="nearest")
        ax.imshow(heat, cmap="gray", alpha=0.35, vmin=0, vmax=1, interpolation="bilinear")
        for x0, y0, x1, y1 in () if boxes is None else boxes:  # a list or an (N, 4) array
            ax.add_patch(
                Rectangle((x0 - 0.5, y0 - 0.5), x1 - x0, y1 - y0, fill=False, lw=0.5, ec="w")
            )
        ax.set_title(word, fontsize=9)
    fig.subplots_adjust(left=0.02, right=0.98, bottom=0.02, top=0.9, wspace=0.08, hspace=0.25)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
