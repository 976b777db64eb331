"""Per-head scores of a GPT's attention: what each layer's heads do, from the weights
``(B, H, T, T)`` that ``GPT.forward(ids, need_weights=True)`` returns per layer.

- **Prefix matching** (Olsson et al. 2022, "In-context Learning and Induction Heads", the
  induction head's first property, measured "on a sequence of random tokens repeated"): at a
  query whose token occurred earlier, the attention the head gives to the keys right *after*
  those earlier occurrences (key ``j + 1`` for every ``j < t`` with ``ids[j] == ids[t]``),
  averaged over such queries. On a random sequence repeated once, the queries of the second
  copy, each one target: ``t - half + 1``.
- **Previous token**: the attention to key ``t - 1`` (the other half of the two-layer
  induction circuit, Olsson et al. 2022; Elhage et al. 2021).
- **Copying** (the induction head's second property): Elhage et al. (2021), "A Mathematical
  Framework for Transformer Circuits", read it off the eigenvalues of the head's OV circuit
  ``W_U W_O^h W_V^h W_E`` (V x V): ``sum(lambda) / sum(|lambda|)``, 1 for a head that raises
  the logit of the token it attends to, -1 for one that lowers it. :func:`ov_circuit` builds
  that matrix with the LayerNorms' centring and gains (exact up to their positive
  per-position scales, which do not change the score) on the direct path (token embedding ->
  this head -> unembedding; other layers' contributions left out, as Elhage et al. do).
- **Sink share** (Xiao et al. 2023, "Efficient Streaming Language Models with Attention
  Sinks", §3.1): the mean attention on position 0, leaving out the first ``skip`` query rows
  (where position 0 is one of few keys).

Each score function takes one layer's weights and returns ``(H,)``; :func:`head_scores` runs a
model on token rows and returns every layer's, ``(L, H)`` each.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

SINK_SKIP = 4  # query rows left out of the sink share


def _check(weights: Tensor, ids: Tensor | None = None) -> None:
    if weights.dim() != 4 or weights.size(-1) != weights.size(-2):
        raise ValueError(f"weights must be (B, H, T, T) self-attention, got {tuple(weights.shape)}")
    if ids is not None and ids.shape != (weights.size(0), weights.size(2)):
        raise ValueError(f"ids {tuple(ids.shape)} must be (B, T) of weights {tuple(weights.shape)}")


def induction_targets(ids: Tensor) -> Tensor:
    """``(B, T, T)`` bool: ``[b, t, k]`` True where key ``k`` follows an earlier occurrence of
    the query's token (``k - 1 < t`` and ``ids[b, k - 1] == ids[b, t]``)."""
    t = ids.size(1)
    same = ids[:, :, None] == ids[:, None, :]  # (B, T, T): [t, j] token j is token t
    earlier = torch.ones(t, t, dtype=torch.bool, device=ids.device).tril(-1)  # (T, T): j < t
    hit = same & earlier  # (B, T, T)
    targets = torch.zeros_like(hit)
    targets[:, :, 1:] = hit[:, :, :-1]  # key k = j + 1
    return targets


def prefix_matching_sum(
    weights: Tensor, ids: Tensor, queries: Tensor | None = None
) -> tuple[Tensor, int]:
    """The summed prefix-matching mass per head ``(H,)`` and the queries counted: those whose
    token occurred earlier (and, where given, with ``queries`` ``(T,)`` or ``(B, T)`` True)."""
    _check(weights, ids)
    targets = induction_targets(ids)  # (B, T, T)
    counted = targets.any(-1)  # (B, T)
    if queries is not None:
        counted = counted & queries.to(counted.device)
    mass = (weights.float() * targets[:, None]).sum(-1)  # (B, H, T)
    return (mass * counted[:, None]).sum((0, 2)), int(counted.sum())


def prefix_matching(weights: Tensor, ids: Tensor, queries: Tensor | None = None) -> Tensor:
    """Olsson et al.'s prefix-matching score of each head ``(H,)``: see the module docstring."""
    total, n = prefix_matching_sum(weights, ids, queries)
    if n == 0:
        raise ValueError("no query repeats an earlier token: prefix matching is undefined")
    return total / n


def previous_token_sum(weights: Tensor) -> tuple[Tensor, int]:
    """The summed attention on key ``t - 1`` per head ``(H,)`` and the queries counted."""
    _check(weights)
    diagonal = weights.float().diagonal(offset=-1, dim1=-2, dim2=-1)  # (B, H, T - 1)
    return diagonal.sum((0, 2)), diagonal.size(0) * diagonal.size(2)


def previous_token(weights: Tensor) -> Tensor:
    """The mean attention each head ``(H,)`` gives the previous position (queries ``t >= 1``)."""
    total, n = previous_token_sum(weights)
    if n == 0:
        raise ValueError("one position has no previous token")
    return total / n


def sink_share_sum(weights: Tensor, skip: int = SINK_SKIP) -> tuple[Tensor, int]:
    """The summed attention on position 0 per head ``(H,)`` from query rows ``skip ..``."""
    _check(weights)
    first = weights.float()[:, :, skip:, 0]  # (B, H, T - skip)
    return first.sum((0, 2)), first.size(0) * first.size(2)


def sink_share(weights: Tensor, skip: int = SINK_SKIP) -> Tensor:
    """StreamingLLM's sink: the mean attention each head ``(H,)`` puts on position 0, over
    the query rows from ``skip`` on."""
    total, n = sink_share_sum(weights, skip)
    if n == 0:
        raise ValueError(f"{weights.size(2)} query rows leave none after skip={skip}")
    return total / n


def eigen_copying(matrix: Tensor) -> float:
    """``sum(lambda) / sum(|lambda|)`` of a square matrix's eigenvalues (Elhage et al. 2021's
    copying score): 1 for positive eigenvalues only, -1 for negative only; 0 for a zero matrix."""
    values = torch.linalg.eigvals(matrix.double())  # (V,) complex
    magnitude = float(values.abs().sum())
    return float(values.sum().real) / magnitude if magnitude > 0 else 0.0


def ov_circuit(model, layer: int, head: int) -> Tensor:
    """Head ``head`` of layer ``layer``'s OV circuit ``(V, V)``: ``[out, in]`` the logit of
    token ``out`` the head writes when it attends wholly to token ``in`` (its embedding alone):
    ``W_U diag(g_f) C W_O^h W_V^h diag(g_1) C W_E^T`` with ``C`` the LayerNorms' centring and
    ``g`` their gains; their positive scales (1 / std) left out."""
    block = model.blocks[layer]
    attn = block.attn
    dh, groups = attn.head_dim, attn.num_heads // attn.kv_heads
    g = head // groups  # the key/value head this query head reads (repeat_interleave order)
    w_v = attn.v_proj.weight[g * dh : (g + 1) * dh].double()  # (Dh, D)
    w_o = attn.out_proj.weight[:, head * dh : (head + 1) * dh].double()  # (D, Dh)
    width = w_o.size(0)
    centre = torch.eye(width, dtype=torch.float64, device=w_o.device) - 1.0 / width  # (D, D)
    embed = model.tokens.weight.double()  # (V, D)
    into = block.ln1.weight.double()[:, None] * (centre @ embed.T)  # (D, V)
    written = model.ln_f.weight.double()[:, None] * (centre @ (w_o @ (w_v @ into)))  # (D, V)
    return model.head.weight.double() @ written  # (V, V)


def copying(model) -> Tensor:
    """Every head's copying score ``(L, H)`` (:func:`eigen_copying` of :func:`ov_circuit`)."""
    layers, heads = len(model.blocks), model.blocks[0].attn.num_heads
    with torch.no_grad():
        rows = [
            [eigen_copying(ov_circuit(model, i, h)) for h in range(heads)] for i in range(layers)
        ]
    return torch.tensor(rows)  # (L, H)


@dataclass
class HeadScores:
    """Every layer's per-head scores, ``(L, H)`` each (``copying`` None where not asked)."""

    prefix_matching: Tensor
    previous_token: Tensor
    sink_share: Tensor
    copying: Tensor | None = None

    def to_lists(self) -> dict[str, list[list[float]]]:
        named = vars(self).items()
        return {
            k: [[round(float(x), 4) for x in row] for row in v] for k, v in named if v is not None
        }


@torch.no_grad()
def head_scores(
    model,
    ids: Tensor,
    queries: Tensor | None = None,
    *,
    batch_size: int = 32,
    skip: int = SINK_SKIP,
    with_copying: bool = True,
) -> HeadScores:
    """The scores of every head of ``model`` on the token rows ``ids (N, T)``, run
    ``batch_size`` rows at a time (prefix matching over the ``queries (T,)`` where given)."""
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    sums = {"prefix": [], "previous": [], "sink": []}
    counts = {"prefix": 0, "previous": 0, "sink": 0}
    for rows in ids.split(batch_size):
        rows = rows.to(device)
        for i, w in enumerate(model(rows, need_weights=True).weights):
            parts = {
                "prefix": prefix_matching_sum(w, rows, queries),
                "previous": previous_token_sum(w),
                "sink": sink_share_sum(w, skip),
            }
            for key, (total, n) in parts.items():
                if i == len(sums[key]):
                    sums[key].append(torch.zeros_like(total))
                sums[key][i] += total
                counts[key] += n if i == 0 else 0
    model.train(was_training)
    mean = {k: torch.stack(v).cpu() / max(counts[k], 1) for k, v in sums.items()}  # (L, H)
    scores = copying(model) if with_copying else None
    return HeadScores(mean["prefix"], mean["previous"], mean["sink"], scores)
