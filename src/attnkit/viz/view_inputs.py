"""The inputs of the notebook views: any accepted form of attention -> a list of ``L``
tensors ``(H, Tq, Tk)`` (as given: :func:`attnkit.viz.view_options.gather` converts only
the selected ones), and the query (row) and key (column) labels."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from attnkit.interpret import structure as _structure
from attnkit.interpret.structure import HF_STACKS, AttentionRecord, from_hf, from_hf_output


def layers_of(attention, stack: str | None, batch_index: int, prefer: Sequence[str]):
    """Any accepted input -> (list of ``(H, Tq, Tk)`` tensors, labels or None)."""
    # an application's result (or a list of one) or {name: (H, Tq, Tk)} -> AttentionRecord
    attention = _structure.as_record(attention)
    plain = (AttentionRecord, Tensor, np.ndarray, list, tuple)
    if not isinstance(attention, plain) and any(hasattr(attention, a) for a in HF_STACKS):
        attention = from_hf_output(attention, batch_index)  # a Hugging Face model output
    labels = None
    if isinstance(attention, AttentionRecord):
        name = stack or next((n for n in prefer if n in attention.stacks), attention.names[0])
        layers, labels = list(attention[name]), attention.labels.get(name)
    elif stack is not None:
        raise ValueError("stack= picks a stack of an AttentionRecord or a Hugging Face output")
    elif isinstance(attention, Tensor | np.ndarray):
        w = torch.as_tensor(attention)
        if w.dim() not in (2, 3, 4):
            raise ValueError(
                "a single tensor must be (Tq, Tk), (H, Tq, Tk) or (L, H, Tq, Tk); "
                f"got shape {tuple(w.shape)}"
            )
        layers = list(w[(None,) * (4 - w.dim())])  # L x (H, Tq, Tk)
    elif isinstance(attention, list | tuple):
        if not attention:
            raise ValueError("no attention given: the list of layers is empty")
        items = [torch.as_tensor(a) if isinstance(a, np.ndarray) else a for a in attention]
        if not all(isinstance(a, Tensor) for a in items):
            raise TypeError("a list of layers must hold tensors or arrays")
        dims = {a.dim() for a in items}
        if dims == {4}:
            layers = from_hf(items, batch_index)  # Hugging Face: L x (B, H, Tq, Tk)
        elif dims == {3}:
            layers = items
        else:
            raise ValueError(
                "expected one (H, Tq, Tk) tensor per layer, or a Hugging Face tuple of "
                f"(B, H, Tq, Tk) tensors; got shapes {[tuple(a.shape) for a in items]}"
            )
    else:
        raise TypeError(
            f"cannot show attention of type {type(attention).__name__}: give an "
            "AttentionRecord, a Hugging Face output_attentions tuple, or a list of "
            "(H, Tq, Tk) tensors"
        )
    shapes = sorted({tuple(w.shape) for w in layers})
    if len(shapes) > 1:
        raise ValueError(f"all layers must have one shape (H, Tq, Tk); got {shapes}")
    if min(shapes[0]) < 1:
        raise ValueError(f"empty attention: (H, Tq, Tk) = {shapes[0]}")
    return layers, labels  # as given: only the selected layers are converted (_view)


def is_pair(tokens) -> bool:
    return (
        isinstance(tokens, list | tuple)
        and len(tokens) == 2
        and all(isinstance(t, Sequence) and not isinstance(t, str) for t in tokens)
    )


def words(tokens, what: str) -> list[str]:
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise TypeError(f"{what} must be a list of strings, got {type(tokens).__name__}")
    return [str(t) for t in tokens]


def check_count(words: list[str], size: int, what: str, axis: str, shape) -> None:
    if len(words) != size:
        raise ValueError(
            f"{len(words)} {what} but the attention has {size} {axis}; "
            f"weights (Tq, Tk) = {tuple(shape)} (rows are queries, columns keys)"
        )


def labels_of(tokens, found, tq: int, tk: int) -> tuple[list[str], list[str]]:
    """Query (row) and key (column) labels: ``tokens`` (one list for self-attention, or a pair
    ``(query tokens, key tokens)``), else the record's labels, else positions."""
    if tokens is None:
        rows, cols = found or (range(tq), range(tk))
    elif is_pair(tokens):
        rows, cols = tokens
    else:
        rows = cols = words(tokens, "tokens")
        if tq != tk and len(rows) in (tq, tk):
            raise ValueError(
                f"the attention is (Tq, Tk) = ({tq}, {tk}), not square: pass "
                "tokens=(query_tokens, key_tokens)"
            )
    rows, cols = words(rows, "query tokens"), words(cols, "key tokens")
    check_count(rows, tq, "query tokens", "queries (Tq)", (tq, tk))
    check_count(cols, tk, "key tokens", "keys (Tk)", (tq, tk))
    return rows, cols
