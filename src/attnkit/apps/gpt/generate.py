"""Text from a GPT, a token at a time: temperature, top-k and nucleus (top-p) sampling, or
greedy decoding, with the KV cache (each step projects only the new token) or by recomputing
the whole context each step (as nanoGPT's ``generate``); both give the same tokens.

- **Temperature** divides the logits (0: greedy, the most probable token).
- **Top-k** keeps the ``k`` most probable tokens (Fan et al. 2018), ties with the ``k``-th
  included.
- **Top-p** keeps the smallest set of most probable tokens whose probability reaches ``p``
  (Holtzman et al. 2020, "The Curious Case of Neural Text Degeneration", §3.1, eq. (2)).

On the CPU the output layer, the largest matrix of a model with a large vocabulary, is read in
the layout ``(D, V)`` while generating (:class:`ColumnHead`): a matrix-vector product of one
token reads it about twice as fast as ``nn.Linear``'s ``(V, D)`` (MKL on an AMD EPYC, one
thread: 2.7 against 5.4 ms for ``384 x 50,257``; ``benchmarks/gpt_generate.py``).

A model with learned positions sees at most ``block_size`` tokens: past it, each step
recomputes the last ``block_size`` tokens (the cache cannot shift learned positions). Models
with rotary, ALiBi or no positions keep their cache (a sliding-window model keeps its window,
and ``sinks`` first tokens where asked).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnkit.apps.gpt.model import GPT


@dataclass(frozen=True)
class Sampling:
    """How the next token is chosen: ``temperature`` 0 is greedy."""

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None

    def __post_init__(self) -> None:
        if not self.temperature >= 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.top_k is not None and self.top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {self.top_k}")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")


def filter_logits(logits: Tensor, top_k: int | None, top_p: float | None) -> Tensor:
    """``logits (B, V)`` with the tokens outside the top-k and the top-p set at ``-inf``."""
    if top_k is not None and top_k < logits.size(-1):
        kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]  # (B, 1)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None and top_p < 1:
        ordered, order = torch.sort(logits, dim=-1, descending=True)  # (B, V) each
        before = torch.softmax(ordered, -1).cumsum(-1) - torch.softmax(ordered, -1)  # (B, V)
        drop_sorted = before >= top_p  # mass before this token already reaches p
        drop = drop_sorted.scatter(-1, order, drop_sorted)  # back to vocabulary order
        logits = logits.masked_fill(drop, float("-inf"))
    return logits


def next_token(logits: Tensor, how: Sampling, generator: torch.Generator | None) -> Tensor:
    """The next token ``(B, 1)`` from the last position's ``logits (B, V)``."""
    if how.temperature == 0:
        return logits.argmax(-1, keepdim=True)
    logits = filter_logits(logits.float() / how.temperature, how.top_k, how.top_p)
    probs = torch.softmax(logits, -1)  # (B, V)
    return torch.multinomial(probs.cpu(), 1, generator=generator).to(logits.device)


class ColumnHead(nn.Module):
    """An output layer ``x W^T (+ b)`` with ``W`` copied once into ``(D, V)`` contiguous: the
    same logits, for decoding on the CPU, where this layout reads faster (see above)."""

    def __init__(self, head: nn.Linear) -> None:
        super().__init__()
        self.weight_t = head.weight.detach().t().contiguous()  # (D, V)
        self.bias = head.bias

    def forward(self, x: Tensor) -> Tensor:
        logits = x @ self.weight_t  # (B, T, V)
        return logits if self.bias is None else logits + self.bias


def _column_head(model: GPT) -> bool:
    """Whether generation reads the output layer as :class:`ColumnHead` (float32 on the CPU,
    where it was measured)."""
    head = model.head
    return head.weight.device.type == "cpu" and head.weight.dtype == torch.float32


@torch.no_grad()
def generate(
    model: GPT,
    ids: Tensor,
    max_new: int,
    how: Sampling = Sampling(),
    *,
    seed: int | None = None,
    use_cache: bool = True,
    sinks: int = 0,
) -> Tensor:
    """``ids (B, T)`` followed by ``max_new`` generated tokens ``(B, T + max_new)``;
    ``seed`` makes sampling reproducible (a generator of its own, on the CPU)."""
    if max_new < 1:
        raise ValueError(f"max_new must be >= 1, got {max_new}")
    if ids.size(1) < 1:
        raise ValueError("the prompt is empty: give at least one token")
    generator = None if seed is None else torch.Generator().manual_seed(seed)
    was_training, head = model.training, model.head
    model.eval()
    if _column_head(model):
        model.head = ColumnHead(head)
    try:
        return _decode(model, ids, max_new, how, generator, use_cache, sinks)
    finally:
        model.head = head
        model.train(was_training)


def _decode(model: GPT, ids, max_new, how, generator, use_cache, sinks) -> Tensor:
    """:func:`generate`'s loop, on a model in eval mode."""
    learned = model.positions is not None
    caches, fed = None, ids
    for _ in range(max_new):
        if use_cache and caches is not None and learned and caches[0].seen >= model.block_size:
            caches, fed = None, ids  # the learned table is full: recompute the last block
        if caches is None or not use_cache:
            fed = ids[:, -model.block_size :] if learned else ids
        out = model(fed, caches=caches, use_cache=use_cache, sinks=sinks)
        token = next_token(out.logits[:, -1], how, generator)  # (B, 1)
        ids = torch.cat([ids, token], 1)  # (B, T + 1)
        caches, fed = (out.caches, token) if use_cache else (None, ids)
    return ids
