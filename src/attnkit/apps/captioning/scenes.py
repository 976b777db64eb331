"""Generated scenes for image captioning: coloured shapes, their boxes and a caption.

A scene is a small RGB canvas (``size x size``, values in ``[0, 1]``) holding two or three
shapes (circle, square, triangle) in distinct colours, and a caption that names each shape's
colour and the spatial relation between consecutive shapes, in the spirit of the
Show, Attend and Tell task (Xu et al. 2015) with the truth known::

    a red circle left of a blue square
    a green triangle above a red square left of a blue circle

Grammar (deterministic given the scene, so exact match is meaningful): the objects are listed
left to right by their centres; between consecutive objects ``A`` and ``B`` the relation is
``above`` / ``below`` when the vertical distance of their centres exceeds the horizontal one,
else ``left of``. Scenes whose relation would be ambiguous (the two distances within
``margin`` pixels, or two centres at the same x) are redrawn, as are overlapping shapes.

Every object's box ``(x0, y0, x1, y1)`` (pixels, ``x1``/``y1`` exclusive) is the bounding box
of its painted pixels, and ``noun_objects`` gives, for each noun of the caption, the object it
names. NumPy only; a split is a pure function of ``(seed, split, n)``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SHAPES = ("circle", "square", "triangle")
COLOURS: dict[str, tuple[float, float, float]] = {
    "red": (0.95, 0.15, 0.1),
    "green": (0.1, 0.85, 0.2),
    "blue": (0.15, 0.3, 1.0),
    "yellow": (0.95, 0.9, 0.1),
    "magenta": (0.9, 0.2, 0.9),
}
RELATIONS = ("left of", "above", "below")
SPLIT_OFFSETS = {"train": 0, "valid": 1, "test": 2}
SPECIALS = ("<pad>", "<bos>", "<eos>")
PAD, BOS, EOS = 0, 1, 2


@dataclass
class SceneObject:
    """One painted shape: its names and its pixel bounding box ``(x0, y0, x1, y1)``."""

    shape: str
    colour: str
    box: tuple[int, int, int, int]

    @property
    def centre(self) -> tuple[float, float]:
        """``(x, y)`` centre of the box in pixels."""
        x0, y0, x1, y1 = self.box
        return (x0 + x1) / 2, (y0 + y1) / 2


@dataclass
class Scene:
    """A generated image ``(size, size, 3)`` float32, its objects (in caption order) and caption.

    ``masks[k]`` is the bool pixel mask of ``objects[k]``; ``noun_objects[j]`` is the index in
    ``objects`` of the object named by the ``j``-th noun (shape word) of the caption.
    """

    image: np.ndarray
    objects: list[SceneObject]
    masks: np.ndarray
    caption: str
    noun_objects: list[int] = field(default_factory=list)

    @property
    def boxes(self) -> np.ndarray:
        """``(K, 4)`` int boxes ``(x0, y0, x1, y1)`` in caption order."""
        return np.array([o.box for o in self.objects], dtype=np.int64)


def shape_mask(shape: str, size: int, canvas: int, x0: int, y0: int) -> np.ndarray:
    """Bool ``(canvas, canvas)`` mask of ``shape`` drawn in the square ``[x0, x0+size)^2``."""
    yy, xx = np.ogrid[0:canvas, 0:canvas]
    u = (xx - x0 + 0.5) / size  # in [0, 1] across the square
    v = (yy - y0 + 0.5) / size
    inside = (u >= 0) & (u <= 1) & (v >= 0) & (v <= 1)
    if shape == "square":
        return inside
    if shape == "circle":
        return inside & ((u - 0.5) ** 2 + (v - 0.5) ** 2 <= 0.25)
    if shape == "triangle":  # apex at the top centre, base along the bottom
        return inside & (np.abs(u - 0.5) <= v / 2)
    raise ValueError(f"unknown shape {shape!r}; choose one of {SHAPES}")


def describe(objects: list[SceneObject], margin: float = 0.0) -> tuple[str, list[int]] | None:
    """The caption of objects already in left-to-right order, and each noun's object index.

    Returns ``None`` when a relation is ambiguous within ``margin`` pixels (see module doc).
    """
    words: list[str] = []
    for k, obj in enumerate(objects):
        if k > 0:
            (ax, ay), (bx, by) = objects[k - 1].centre, obj.centre
            dx, dy = bx - ax, by - ay
            if dx <= margin / 2 or abs(abs(dy) - dx) <= margin:
                return None
            words.append("left of" if dx > abs(dy) else ("above" if dy > 0 else "below"))
        words += ["a", obj.colour, obj.shape]
    return " ".join(words), list(range(len(objects)))


def make_scene(
    rng: np.random.Generator,
    canvas: int = 32,
    n_objects: int | None = None,
    max_objects: int = 3,
    min_size: int = 8,
    max_size: int = 11,
    margin: float = 2.0,
    noise: float = 0.03,
) -> Scene:
    """Draw one scene with ``n_objects`` shapes (default: 2 to ``max_objects``, equally likely)
    of ``min_size`` to ``max_size`` pixels."""
    if min_size > max_size or max_size * 2 > canvas:
        raise ValueError(f"shape sizes {min_size}..{max_size} do not fit a {canvas}px canvas")
    k = int(rng.integers(2, max_objects + 1)) if n_objects is None else n_objects
    if k not in (2, 3) or max_objects not in (2, 3):
        raise ValueError(f"a scene holds 2 or 3 objects, not {k} (max_objects {max_objects})")
    for _ in range(1000):
        pairs = rng.choice(len(SHAPES) * len(COLOURS), size=k, replace=False)
        squares = []  # (x0, y0, size): the square each shape is drawn in
        for _p in pairs:
            size = int(rng.integers(min_size, max_size + 1))
            x0, y0 = (int(v) for v in rng.integers(0, canvas - size + 1, size=2))
            squares.append((x0, y0, size))
        if any(_close(a, b) for i, a in enumerate(squares) for b in squares[:i]):
            continue  # overlapping, or touching without a 1-pixel gap
        objects, masks = [], []
        for p, (x0, y0, size) in zip(pairs, squares, strict=True):
            shape, colour = SHAPES[p % len(SHAPES)], list(COLOURS)[p // len(SHAPES)]
            mask = shape_mask(shape, size, canvas, x0, y0)
            ys, xs = np.nonzero(mask)
            box = (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)
            objects.append(SceneObject(shape, colour, box))
            masks.append(mask)
        order = sorted(range(k), key=lambda i: objects[i].centre[0])
        objects = [objects[i] for i in order]
        masks = [masks[i] for i in order]
        described = describe(objects, margin)
        if described is None:
            continue
        caption, nouns = described
        image = (
            rng.normal(0.0, noise, (canvas, canvas, 3)) if noise else np.zeros((canvas,) * 2 + (3,))
        )
        for obj, mask in zip(objects, masks, strict=True):
            image[mask] = COLOURS[obj.colour]
        image = np.clip(image, 0.0, 1.0).astype(np.float32)
        return Scene(image, objects, np.stack(masks), caption, nouns)
    raise RuntimeError(f"could not place {k} shapes on a {canvas}px canvas in 1000 tries")


def _close(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
    """Whether two squares ``(x0, y0, size)`` overlap or lie less than one pixel apart."""
    (ax, ay, asz), (bx, by, bsz) = a, b
    return ax < bx + bsz + 1 and bx < ax + asz + 1 and ay < by + bsz + 1 and by < ay + asz + 1


def make_split(split: str, n: int, seed: int = 0, canvas: int = 32, **options) -> list[Scene]:
    """``n`` scenes of ``split`` (``train``, ``valid`` or ``test``), a pure function of the
    arguments; the splits draw from independent streams of the same seed."""
    if split not in SPLIT_OFFSETS:
        raise ValueError(f"unknown split {split!r}; choose one of {tuple(SPLIT_OFFSETS)}")
    if n < 1:
        raise ValueError(f"a split needs at least one scene, got n={n}")
    rng = np.random.default_rng([seed, SPLIT_OFFSETS[split]])
    return [make_scene(rng, canvas, **options) for _ in range(n)]


def vocabulary() -> list[str]:
    """Every word the grammar can emit (without special tokens), sorted."""
    words = {"a", "left", "of", "above", "below", *SHAPES, *COLOURS}
    return sorted(words)


def as_arrays(scenes: list[Scene]) -> np.ndarray:
    """Images as a float32 ``(N, 3, H, W)`` batch (channels first, for a CNN)."""
    return np.stack([s.image for s in scenes]).transpose(0, 3, 1, 2).copy()  # (N, 3, H, W)


class Vocabulary:
    """Word <-> id for the scene grammar: PAD 0, BOS 1, EOS 2, then the words, sorted."""

    def __init__(self, words: list[str]):
        self.words = list(words)
        self.index = {w: i for i, w in enumerate(self.words)}

    @classmethod
    def for_scenes(cls) -> Vocabulary:
        return cls([*SPECIALS, *vocabulary()])

    def encode(self, caption: str) -> list[int]:
        """BOS, the words' ids, EOS; an unknown word is a ``KeyError`` naming it."""
        try:
            return [BOS, *(self.index[w] for w in caption.split()), EOS]
        except KeyError as err:
            raise KeyError(f"word {err.args[0]!r} is not in the vocabulary") from None

    def decode(self, ids) -> list[str]:
        """Words up to (without) the first EOS, specials dropped."""
        words = []
        for i in ids:
            if int(i) == EOS:
                break
            if int(i) >= len(SPECIALS):
                words.append(self.words[int(i)])
        return words

    def save(self, path: Path) -> None:
        path.write_text(json.dumps({"words": self.words}, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Vocabulary:
        if not path.is_file():
            raise FileNotFoundError(f"{path}: missing vocabulary")
        return cls(json.loads(path.read_text(encoding="utf-8"))["words"])
