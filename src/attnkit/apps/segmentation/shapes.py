"""Generated scenes where only one kind of object is the target: test data and the default demo.

Each image holds 2 to 5 objects of the *same* brightness distribution: discs and ellipses are
the target class; squares, triangles and thin bars are distractors. Intensity alone cannot tell
them apart (a threshold finds every object), so a model has to use shape and context, which is
where attention gates on the skip connections should help (Oktay et al. 2018). Beneath them lie
a smoothly varying background (a tilted plane plus a low-frequency wave), clutter (small blobs
and thin lines, as bright as the objects, drawn first so objects cover it) and Gaussian noise.

- :func:`generate_shapes`: images ``(n, 1, S, S)`` float32 in [0, 1] and masks ``(n, 1, S, S)``
  uint8 in {0, 1}, where 1 marks target pixels only.
- :func:`generate_scenes`: the same images and masks with a label map saying which pixels are
  target, distractor or clutter (for tests and pictures).

Pure NumPy and deterministic in ``seed``: image ``i`` depends on ``(seed, i, size, noise,
clutter)`` only, so the first ``k`` images of a set of ``n`` are the set of ``k``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "BACKGROUND",
    "CLUTTER",
    "DISTRACTOR",
    "TARGET",
    "Scenes",
    "generate_scenes",
    "generate_shapes",
]

# the label map's values
BACKGROUND, TARGET, DISTRACTOR, CLUTTER = 0, 1, 2, 3
TARGET_KINDS = ("disc", "ellipse")
DISTRACTOR_KINDS = ("square", "triangle", "bar")
OBJECT_LEVEL = (0.6, 0.85)  # every object's brightness, before noise, whatever its kind
MIN_SIZE = 16


@dataclass(frozen=True, eq=False)
class Scenes:
    """``images (n, 1, S, S)`` float32 in [0, 1]; ``masks (n, 1, S, S)`` uint8, 1 = target;
    ``labels (n, 1, S, S)`` uint8: :data:`BACKGROUND`, :data:`TARGET`, :data:`DISTRACTOR` or
    :data:`CLUTTER` for each pixel (``masks == (labels == TARGET)``)."""

    images: np.ndarray
    masks: np.ndarray
    labels: np.ndarray


def generate_shapes(
    n: int, size: int = 64, seed: int = 0, *, noise: float = 0.1, clutter: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` generated images and their target masks.

    Args:
        n: number of images (0 gives empty arrays).
        size: side ``S`` of the square images, at least 16; object sizes scale with it.
        seed: the whole set is a function of ``(n, size, seed, noise, clutter)``.
        noise: standard deviation of the Gaussian noise added to every pixel (before clipping
            to [0, 1]); 0 gives clean images.
        clutter: number of small blobs and thin lines per image, as bright as the objects and
            never part of the mask.

    Returns:
        ``(images, masks)``: ``(n, 1, S, S)`` float32 in [0, 1] and ``(n, 1, S, S)`` uint8 in
        {0, 1}, 1 marking the discs and ellipses (every image has at least one target and one
        distractor).
    """
    scenes = generate_scenes(n, size, seed, noise=noise, clutter=clutter)
    return scenes.images, scenes.masks


def generate_scenes(
    n: int, size: int = 64, seed: int = 0, *, noise: float = 0.1, clutter: int = 3
) -> Scenes:
    """:func:`generate_shapes` with the label map of every pixel (same arguments)."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if size < MIN_SIZE:
        raise ValueError(f"size must be at least {MIN_SIZE} pixels, got {size}")
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    if clutter < 0:
        raise ValueError(f"clutter must be >= 0, got {clutter}")
    images = np.zeros((n, 1, size, size), dtype=np.float32)
    labels = np.zeros((n, 1, size, size), dtype=np.uint8)
    for i, child in enumerate(np.random.SeedSequence(seed).spawn(n)):
        images[i, 0], labels[i, 0] = _scene(np.random.default_rng(child), size, noise, clutter)
    return Scenes(images, (labels == TARGET).astype(np.uint8), labels)


def _scene(
    rng: np.random.Generator, size: int, noise: float, clutter: int
) -> tuple[np.ndarray, np.ndarray]:
    """One image ``(S, S)`` and its label map ``(S, S)``."""
    y, x = np.mgrid[0:size, 0:size].astype(np.float64) + 0.5  # pixel centres
    image = _background(rng, x / size, y / size)
    labels = np.zeros((size, size), dtype=np.uint8)
    for _ in range(clutter):
        region = _clutter(rng, x, y, size)
        image[region] = rng.uniform(*OBJECT_LEVEL)
        labels[region] = CLUTTER
    for kind, centre, extent in _layout(rng, size):
        region = _shape(rng, kind, x - centre[0], y - centre[1], extent)
        image[region] = rng.uniform(*OBJECT_LEVEL)
        labels[region] = TARGET if kind in TARGET_KINDS else DISTRACTOR
    if noise > 0:
        image = image + rng.normal(0.0, noise, image.shape)
    return np.clip(image, 0.0, 1.0).astype(np.float32), labels


def _background(rng: np.random.Generator, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A smooth background in about [0.1, 0.45]: a tilted plane plus one low-frequency wave
    (``u, v`` in [0, 1])."""
    slope = rng.uniform(-0.12, 0.12, size=2)
    angle, phase = rng.uniform(0.0, 2 * np.pi, size=2)
    frequency = rng.uniform(0.5, 1.5)
    wave = np.sin(2 * np.pi * frequency * (u * np.cos(angle) + v * np.sin(angle)) + phase)
    return rng.uniform(0.2, 0.3) + slope[0] * (u - 0.5) + slope[1] * (v - 0.5) + 0.05 * wave


def _layout(rng: np.random.Generator, size: int) -> list[tuple[str, np.ndarray, float]]:
    """2 to 5 objects ``(kind, centre (x, y), extent)`` whose bounding circles do not overlap
    (2 pixels apart) and lie inside the image; at least one target and one distractor."""
    count = int(rng.integers(2, 6))
    targets = int(rng.integers(1, count))  # 1 .. count - 1
    kinds = [str(rng.choice(TARGET_KINDS)) for _ in range(targets)]
    kinds += [str(rng.choice(DISTRACTOR_KINDS)) for _ in range(count - targets)]
    order = [0, targets] + [i for i in range(count) if i not in (0, targets)]  # one of each first
    placed: list[tuple[str, np.ndarray, float]] = []
    for index in order:
        kind = kinds[index]
        extent = size * (rng.uniform(0.15, 0.22) if kind == "bar" else rng.uniform(0.08, 0.14))
        for _ in range(50):  # a crowded image keeps the objects already placed
            centre = rng.uniform(extent + 1, size - extent - 1, size=2)
            if all(np.hypot(*(centre - c)) > extent + e + 2 for _, c, e in placed):
                placed.append((kind, centre, extent))
                break
    return placed


def _rotated(rng: np.random.Generator, dx: np.ndarray, dy: np.ndarray):
    """``(dx, dy)`` turned by a random angle, and that angle."""
    angle = rng.uniform(0.0, np.pi)
    cos, sin = np.cos(angle), np.sin(angle)
    return cos * dx + sin * dy, -sin * dx + cos * dy, angle


def _shape(
    rng: np.random.Generator, kind: str, dx: np.ndarray, dy: np.ndarray, extent: float
) -> np.ndarray:
    """The pixels (bool ``(S, S)``) of one object of ``kind`` centred at ``dx = dy = 0`` and
    inside the circle of radius ``extent``."""
    u, v, angle = _rotated(rng, dx, dy)
    if kind == "disc":
        return u**2 + v**2 <= extent**2
    if kind == "ellipse":  # axis ratio 1.4 to 2: rounder than a bar, longer than a disc
        minor = extent / rng.uniform(1.4, 2.0)
        return (u / extent) ** 2 + (v / minor) ** 2 <= 1.0
    if kind == "square":  # corners on the circle
        half = extent / np.sqrt(2.0)
        return np.maximum(np.abs(u), np.abs(v)) <= half
    if kind == "triangle":  # equilateral, circumradius extent: three half-planes
        inside = np.ones(dx.shape, dtype=bool)
        for k in range(3):
            normal = angle + 2 * np.pi * k / 3
            inside &= dx * np.cos(normal) + dy * np.sin(normal) <= extent / 2
        return inside
    if kind == "bar":  # 2 to 3 pixels wide
        return (np.abs(u) <= extent) & (np.abs(v) <= rng.uniform(1.0, 1.5))
    raise ValueError(f"unknown shape kind {kind!r}")


def _clutter(rng: np.random.Generator, x: np.ndarray, y: np.ndarray, size: int) -> np.ndarray:
    """One piece of clutter (bool ``(S, S)``): a blob of radius 1 to 2 pixels or a line one
    pixel wide and 10 to 30 % of the image long."""
    centre = rng.uniform(0, size, size=2)
    dx, dy = x - centre[0], y - centre[1]
    if rng.random() < 0.5:
        return dx**2 + dy**2 <= rng.uniform(1.0, 2.0) ** 2
    u, v, _ = _rotated(rng, dx, dy)
    return (np.abs(u) <= size * rng.uniform(0.05, 0.15)) & (np.abs(v) <= 0.5)
