"""How many attention weights a translation records and returns, and the checks that keep both
under :class:`~.limits.ExplorerLimits` (``max_search_weights`` before decoding, ``max_weights``
after).

A hypothesis of ``T_out`` steps over ``S`` source pieces records, per attention name, ``H``
heads of ``T_out x S`` (cross-attention) or ``T_out x T_out`` (decoder self-attention)
weights. The search keeps ``beam`` such histories, of up to ``T_max = ratio * S + offset``
steps (:func:`attnkit.decoding.hypothesis.max_lengths`), so its size is known before it runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch

from attnkit.apps.translation.explorer.limits import ExplorerLimits, RequestError
from attnkit.decoding.hypothesis import max_lengths

LAYER = re.compile(r"^layer(\d+)\.")  # "layer{l}.self" / "layer{l}.cross" (Transformer)
PROBE = "a"  # the text translated once at start-up to learn the model's attention names


@dataclass(frozen=True)
class AttentionShape:
    """The attention a model records: ``views = {name: (heads, kind, layer)}`` (``kind`` is
    ``"self"`` or ``"cross"``; ``layer`` None for a recurrent model's single ``"cross"``) and
    the number of learned positions, if the model has a table of them (None: unbounded)."""

    views: dict[str, tuple[int, str, int | None]]
    max_positions: int | None = None

    @property
    def layers(self) -> int:
        """How many layers ``"layers"`` may pick from (0: the model has none)."""
        found = [layer for _, _, layer in self.views.values() if layer is not None]
        return max(found) + 1 if found else 0

    @property
    def heads(self) -> int:
        """How many heads ``"heads"`` may pick from (the most any attention name has)."""
        return max((heads for heads, _, _ in self.views.values()), default=0)


def on_page(name: str) -> bool:
    """Whether the page shows attention ``name``: the decoder's steps, not the encoder's
    self-attention (``encoder.layer{l}``), which ``translate`` records too."""
    return not name.startswith("encoder.")


def probe(model, tokenizer, decode) -> AttentionShape:
    """Translate :data:`PROBE` greedily once and read the attention names and heads from it."""
    from attnkit.apps.translation.decode.translate import translate_texts
    from attnkit.modules.positional import LearnedPositionalEmbedding

    (result,) = translate_texts(
        model, tokenizer, [PROBE], replace(decode, n_best=1), beam_size=1, need_weights=True
    )
    attention = result.attention[0] if result.attention else {}
    views = {}
    for name, weights in attention.items():  # (H, T_out, K)
        if not on_page(name):
            continue
        layer = LAYER.match(name)
        kind = "self" if name.endswith("self") else "cross"
        views[name] = (int(weights.shape[0]), kind, int(layer.group(1)) if layer else None)
    tables = [m.max_len for m in model.modules() if isinstance(m, LearnedPositionalEmbedding)]
    return AttentionShape(views, min(tables) if tables else None)


def weights_of(
    shape: AttentionShape,
    src_len: int,
    out_len: int,
    layers: Sequence[int] | None = None,
    heads: Sequence[int] | None = None,
) -> int:
    """Attention weights of one hypothesis of ``out_len`` steps over ``src_len`` pieces,
    counting only ``layers`` and ``heads`` when given (None: all)."""
    total = 0
    for name_heads, kind, layer in shape.views.values():
        if layers is not None and layer not in layers:
            continue
        kept = name_heads if heads is None else sum(1 for h in heads if h < name_heads)
        total += kept * out_len * (out_len if kind == "self" else src_len)
    return total


def search_steps(decode, src_len: int) -> int:
    """``T_max``: the most steps the search may take for ``src_len`` source pieces."""
    src_mask = torch.ones(1, max(src_len, 1), dtype=torch.bool)  # (1, S)
    return int(max_lengths(src_mask, None, decode.max_len_ratio, decode.max_len_offset)[0])


def check_search(
    shape: AttentionShape, limits: ExplorerLimits, src_len: int, steps: int, beam: int
):
    """Refuse, before decoding, a search that would record more than
    ``limits.max_search_weights`` weights or run past the model's learned positions."""
    if shape.max_positions is not None and max(src_len, steps) > shape.max_positions:
        raise RequestError(
            f"text: {src_len} pieces, whose translation may run to {steps}; this model has "
            f"{shape.max_positions} learned positions: shorten it"
        )
    each = weights_of(shape, src_len, steps)
    largest = limits.max_search_weights // max(each, 1)
    if largest < 1:
        raise RequestError(
            f"text: too long for this model's attention ({src_len} pieces; one hypothesis "
            f"records up to {each:,} weights, the limit is {limits.max_search_weights:,}): "
            "shorten it"
        )
    if beam > largest:
        raise RequestError(
            f"beam: at most {largest} for this text, got {beam} ({src_len} pieces: each "
            f"hypothesis records up to {each:,} attention weights in the search; the limit is "
            f"{limits.max_search_weights:,} in all)"
        )


def fit_answer(sizes: Sequence[int], limits: ExplorerLimits, n_best: int | None) -> int:
    """How many of the hypotheses (best first, ``sizes`` weights each) the answer holds.

    The best one's attention is in the answer twice (at the top level and as
    ``hypotheses[0]``), so it counts twice. All that fit ``limits.max_weights`` together;
    refused when even the best one does not fit, or when an explicit ``n_best`` does not.
    """
    total = count = 0
    for k, size in enumerate(sizes):
        cost = 2 * size if k == 0 else size
        if total + cost > limits.max_weights:
            break
        total, count = total + cost, count + 1
    if count == 0:
        raise RequestError(
            f"text: the translation's attention holds {sizes[0]:,} weights (with the layers "
            f"and heads asked for), twice in the answer; an answer holds at most "
            f'{limits.max_weights:,}: shorten it, or ask for fewer "layers" or "heads"'
        )
    if n_best is not None and count < len(sizes):
        raise RequestError(
            f"n_best: at most {count} for this text, got {n_best} ({len(sizes)} hypotheses "
            f"hold {sum(sizes) + sizes[0]:,} attention weights in the answer; it holds at most "
            f"{limits.max_weights:,})"
        )
    return count
