"""What a notebook view embeds and how: the layers and heads it selects, its colour scale, the
first key's attention sink, and the compact encoding of the weights.

- **Selection** (``layers=``, ``heads=``): true layer and head numbers, negative ones counted
  from the end; only the selected ones travel in the page, and the page labels them by their
  true numbers (``layerIds``, ``headIds``).
- **Scale** (:data:`SCALES`), applied when drawing (``static/viz_data.js``), so tooltips keep
  the raw weight: ``"linear"`` (weight 0 white, 1 dark), ``"row"`` (each query row divided by
  its largest weight, so weak rows show), ``"log"`` (``log10`` of the weight, clipped at
  :data:`LOG_FLOOR` = 1e-4, the resolution of the embedded weights).
- **Sink** (:data:`SINKS`): ``"show"`` draws key 0 like any key; ``"drop"`` leaves key 0 out
  and renormalises each row over the other keys; ``"separate"`` draws key 0's raw weight as a
  column apart and renormalises the rest. A first-token sink (Xiao et al. 2024, "Efficient
  Streaming Language Models with Attention Sinks", sec. 3.1; GPT-2 puts most of many rows'
  mass on token 0) then no longer washes out the picture. The renormalisation is done here in
  float64, before rounding, so that rows whose rest is tiny keep their detail.
- **Encoding**: each weight is sent as ``round(w * 10**DECIMALS)``, a little-endian uint16, all
  of them base64-encoded: 2.67 characters a weight instead of about 7 as JSON numbers. In the
  sink modes, column 0 holds key 0's raw weight, columns 1.. the renormalised weights, and
  ``rest`` (``(L, H, Tq)``) each row's mass over keys 1..: the raw weight of key ``j >= 1`` is
  ``weights[..., j] * rest``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

DECIMALS = 4  # weights are embedded rounded to this many decimals
UNIT = 10**DECIMALS  # a weight is sent as the integer round(w * UNIT)
TOP = 65535 / UNIT  # the largest weight a uint16 holds: 6.5535
SCALES = ("linear", "row", "log")
SINKS = ("show", "drop", "separate")
LOG_FLOOR = 1e-4  # the "log" scale clips weights below this (drawn white)
ARRAYS = ("weights", "rest")  # the payload's arrays that travel encoded


def choose(value: str, allowed: tuple[str, ...], what: str) -> str:
    """``value`` if it is one of ``allowed``, else a ValueError that names them."""
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{what}={value!r}: choose one of {', '.join(map(repr, allowed))}")
    return value


def index(value: int, size: int, what: str, plural: str) -> int:
    """A true index in ``range(size)``; negative values count from the end."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"a {what} is an int, got {type(value).__name__}")
    if not -size <= value < size:
        raise IndexError(f"{what} {value!r} out of range: the attention has {size} {plural}")
    return int(value) % size


def pick(value, size: int, what: str, plural: str, empty: bool = False) -> list[int]:
    """``layers=`` / ``heads=``: None (all), an int or a sequence of ints -> sorted true indices
    (an empty selection is an error unless ``empty``)."""
    if value is None:
        return list(range(size))
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        value = [value]
    if isinstance(value, str) or not isinstance(value, Sequence | np.ndarray | Tensor):
        raise TypeError(f"{plural}= takes an int or a sequence of ints, got {value!r}")
    items = [v.item() if isinstance(v, Tensor) else v for v in value]
    chosen = sorted({index(v, size, what, plural) for v in items})
    if not chosen and not empty:
        raise ValueError(f"{plural}= selects no {what}: give at least one")
    return chosen


def among(value, chosen: list[int], size: int, what: str, plural: str) -> int:
    """A true index that must be one of the embedded ones (``chosen``)."""
    value = index(value, size, what, plural)
    if value not in chosen:
        raise ValueError(
            f"{what} {value} is not embedded (the view embeds {plural} {chosen}): add it to "
            f"{plural}= or pick one of those"
        )
    return value


def gather(layers: list[Tensor], layer_ids: list[int], head_ids: list[int]) -> Tensor:
    """The selected layers and heads as one float64 tensor ``(L', H', Tq, Tk)`` on the CPU,
    checked to be finite and to fit the encoding (0 <= w <= :data:`TOP`)."""
    heads = torch.tensor(head_ids)
    w = torch.stack([layers[i].detach()[heads.to(layers[i].device)].cpu() for i in layer_ids])
    w = w.to(torch.float64)  # (L', H', Tq, Tk)
    if not torch.isfinite(w).all():
        raise ValueError("the attention weights contain NaN or infinity")
    low, high = float(w.min()), float(w.max())
    if low < -0.5 / UNIT or high >= TOP + 0.5 / UNIT:
        raise ValueError(
            f"attention weights must lie in [0, {TOP}] to be drawn (they are embedded as "
            f"multiples of {1 / UNIT:g}); these go from {low:.6g} to {high:.6g}"
        )
    return w


def split_sink(w: Tensor) -> tuple[Tensor, Tensor]:
    """``(L, H, Tq, Tk)`` -> (``shown``: column 0 the raw weight of key 0, columns 1.. each row
    renormalised over keys 1..; ``rest``: ``(L, H, Tq)``, each row's raw mass over keys 1..).
    A row with nothing left after key 0 is 0 over keys 1.., never NaN."""
    rest = w[..., 1:].sum(-1)  # (L, H, Tq)
    safe = torch.where(rest > 0, rest, torch.ones_like(rest))
    shown = torch.cat([w[..., :1], w[..., 1:] / safe[..., None]], dim=-1)  # (L, H, Tq, Tk)
    return shown, rest


def payload(shell: dict, w: Tensor) -> dict:
    """The view's data: ``shell`` (labels and options) plus ``weights`` (and ``rest`` in the
    sink modes) as nested lists rounded to :data:`DECIMALS`."""
    rest = None
    if shell["sink"] != "show":
        w, rest = split_sink(w)
    weights = w.round(decimals=DECIMALS).tolist()
    rest = None if rest is None else rest.round(decimals=DECIMALS).tolist()
    return shell | {"weights": weights, "rest": rest}


def encode(values) -> str:
    """Weights -> base64 of little-endian uint16 ``round(w * UNIT)`` (C order)."""
    ints = np.rint(np.asarray(values, dtype=np.float64) * UNIT)
    if ints.size and (ints.min() < 0 or ints.max() > 65535):
        raise ValueError(f"weights must lie in [0, {TOP}] to be encoded")
    return base64.b64encode(ints.astype("<u2").tobytes()).decode("ascii")


def decode(text: str, shape: Sequence[int]) -> np.ndarray:
    """The inverse of :func:`encode`: an array of ``shape`` (what viz_data.js does)."""
    ints = np.frombuffer(base64.b64decode(text), dtype="<u2")
    return (ints.astype(np.float64) / UNIT).reshape(shape)


def encoded_chars(count: int) -> int:
    """Characters that :func:`encode` writes for ``count`` weights."""
    return 4 * -(-2 * count // 3)


def dump(page: dict) -> str:
    """JSON that cannot end its ``<script>``: ``</`` and ``<!--`` are escaped."""
    data = json.dumps(page, allow_nan=False, separators=(",", ":"))
    return data.replace("</", "<\\/").replace("<!--", "\\u003c!--")


def page_json(payload: dict) -> str:
    """The JSON embedded in the page: ``payload`` with its arrays encoded."""
    page = dict(payload, decimals=DECIMALS)
    for key in ARRAYS:
        if page.get(key) is not None and not isinstance(page[key], str):
            page[key] = encode(page[key])
    return dump(page)


def shell_json(shell: dict) -> tuple[str, int]:
    """The page JSON of a payload still without its arrays (placeholders), and the
    characters the arrays will add: together exactly the size of :func:`page_json`."""
    layers, heads, tq, tk = shell["shape"]
    count = layers * heads * tq
    sink = shell["sink"] != "show"
    page = shell | {"weights": "", "rest": "" if sink else None}
    return page_json(page), encoded_chars(count * tk) + (encoded_chars(count) if sink else 0)
