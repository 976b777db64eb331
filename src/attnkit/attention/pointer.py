"""The copy mechanism of the pointer-generator network (See, Liu & Manning 2017, §2.2).

"Get To The Point: Summarization with Pointer-Generator Networks", ACL 2017. At each decoder
step a soft switch ``p_gen`` chooses between generating a word from the fixed vocabulary and
copying a source word by pointing at it with the attention weights:

    p_gen = sigmoid(w_h*^T h*_t + w_s^T s_t + w_x^T x_t + b_ptr)                 eq. (8)
    P(w)  = p_gen P_vocab(w) + (1 - p_gen) sum_{i: w_i = w} a_i^t                 eq. (9)

``P`` is over the *extended* vocabulary: the ``V`` vocabulary ids, then ``n_extended`` ids
``V, V + 1, ...`` for the source words outside the vocabulary (numbered per article, See et
al.'s "article OOVs"; ``n_extended`` is the most any article of the batch has). ``P_vocab`` is
0 on the extended ids, and a vocabulary word absent from the source gets no copy mass. When
``P_vocab`` and ``a^t`` each sum to 1, so does ``P``.

- :class:`GenerationGate`: ``p_gen``, eq. (8).
- :func:`copy_distribution`: ``sum_{i: w_i = w} a_i^t`` for every extended id ``w``.
- :func:`pointer_mixture`: ``P(w)``, eq. (9); :func:`log_pointer_mixture`: its logarithm, safe
  where ``P(w) = 0``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class GenerationGate(nn.Module):
    """The generation probability ``p_gen`` of See et al. 2017, eq. (8).

    Args:
        d_context: width of the context vector ``h*_t``; d_state: of the decoder state ``s_t``
            (See et al.'s code concatenates the LSTM's ``c`` and ``h``; any vector will do);
            d_input: of the decoder input ``x_t`` (the previous word's embedding).

    Parameters: ``w_h`` (weight ``(1, Dc)``), ``w_s`` (``(1, Ds)``), ``w_x`` (``(1, Dx)``), three
    bias-free linear maps named as in the paper, and the scalar ``b_ptr`` (starting at 0).
    """

    def __init__(self, d_context: int, d_state: int, d_input: int) -> None:
        super().__init__()
        self.w_h = nn.Linear(d_context, 1, bias=False)  # w_h*
        self.w_s = nn.Linear(d_state, 1, bias=False)
        self.w_x = nn.Linear(d_input, 1, bias=False)
        self.b_ptr = nn.Parameter(torch.zeros(()))

    def logit(self, context: Tensor, state: Tensor, inputs: Tensor) -> Tensor:
        """The argument of eq. (8)'s sigmoid, ``(...)`` from ``(..., Dc)``, ``(..., Ds)`` and
        ``(..., Dx)`` (for a caller who wants ``log p_gen`` as ``logsigmoid``)."""
        total = self.w_h(context) + self.w_s(state) + self.w_x(inputs) + self.b_ptr  # (..., 1)
        return total.squeeze(-1)  # (..., 1) -> (...)

    def forward(self, context: Tensor, state: Tensor, inputs: Tensor) -> Tensor:
        """``p_gen`` in (0, 1), ``(...)``, from ``context`` ``h*_t (..., Dc)``, ``state``
        ``s_t (..., Ds)`` and ``inputs`` ``x_t (..., Dx)``: ``(B,)`` for one step of a batch,
        ``(B, T)`` for a whole teacher-forced sequence."""
        return torch.sigmoid(self.logit(context, state, inputs))


def copy_distribution(weights: Tensor, source_ids: Tensor, size: int) -> Tensor:
    """``sum_{i: w_i = w} a_i`` for each id ``w < size``: the copy term of eq. (9).

    ``weights`` ``a`` ``(B, S)`` or ``(B, T, S)``; ``source_ids`` the extended-vocabulary id of
    each source position, long ``(B, S)`` (or the weights' shape); ``size``: ``V + n_extended``,
    more than every id. Returns ``(B, size)`` or ``(B, T, size)``: the attention mass scattered
    onto the ids (``scatter_add``), so a word at two source positions gets both weights. Padded
    source positions may hold any id below ``size``: their weights are 0.
    """
    ids = _ids_like(weights, source_ids)  # (B, [T,] S)
    zeros = weights.new_zeros(*weights.shape[:-1], size)  # (B, [T,] size)
    return zeros.scatter_add(-1, ids, weights)


def pointer_mixture(
    p_vocab: Tensor, weights: Tensor, source_ids: Tensor, p_gen: Tensor, n_extended: int
) -> Tensor:
    """``P(w) = p_gen P_vocab(w) + (1 - p_gen) sum_{i: w_i = w} a_i`` (See et al. 2017, eq. (9)).

    Args:
        p_vocab: ``P_vocab`` ``(B, V)`` or ``(B, T, V)``, the generator's softmax.
        weights: the attention ``a`` ``(B, S)`` or ``(B, T, S)``.
        source_ids: long ``(B, S)``, each source word's extended id (``< V + n_extended``).
        p_gen: ``(B,)`` or ``(B, T)`` (a trailing axis of 1 is accepted), eq. (8).
        n_extended: how many extended (source OOV) ids follow the ``V`` vocabulary ids.

    Returns ``(B, V + n_extended)`` or ``(B, T, V + n_extended)``. ``p_gen = 1`` gives exactly
    ``p_vocab`` followed by zeros (a plain decoder); ``p_gen = 0`` exactly
    :func:`copy_distribution` (pure pointing). Differentiable in all three of ``p_vocab``,
    ``weights`` and ``p_gen``.
    """
    _check_mixture(p_vocab, weights, n_extended)
    if p_gen.numel() != math.prod(weights.shape[:-1]):
        raise ValueError(
            f"p_gen {tuple(p_gen.shape)} must have one value per row of weights "
            f"{tuple(weights.shape)}: shape {tuple(weights.shape[:-1])}"
        )
    gate = p_gen.reshape(*weights.shape[:-1], 1)  # (B, [T,] 1)
    generated = F.pad(gate * p_vocab, (0, n_extended))  # (B, [T,] V + n_extended): 0 on OOVs
    ids = _ids_like(weights, source_ids)  # (B, [T,] S)
    return generated.scatter_add(-1, ids, (1 - gate) * weights)


def log_pointer_mixture(
    p_vocab: Tensor,
    weights: Tensor,
    source_ids: Tensor,
    p_gen: Tensor,
    n_extended: int,
    *,
    floor: float | None = None,
) -> Tensor:
    """``log P(w)`` of :func:`pointer_mixture`, computed as ``log(max(P, floor))``.

    ``P(w)`` is 0 for an extended id the article does not have, and for any word when
    ``p_gen`` saturates at 0 or 1; See et al.'s code takes the log of the gathered target
    probability with nothing added. Here ``floor`` (default the dtype's smallest normal
    number, ``torch.finfo(dtype).tiny``: ``log`` about -87 in float32, -708 in float64) keeps
    the result finite and changes no probability above it; a probability below the floor gets
    no gradient. Shapes as :func:`pointer_mixture`.
    """
    mixture = pointer_mixture(p_vocab, weights, source_ids, p_gen, n_extended)
    floor = torch.finfo(mixture.dtype).tiny if floor is None else floor
    return torch.log(mixture.clamp_min(floor))


def _ids_like(weights: Tensor, source_ids: Tensor) -> Tensor:
    """``source_ids (B, S)`` spread over the weights' ``(B, T, S)`` (a view), or as given when
    it already has the weights' shape; clear errors otherwise."""
    if source_ids.dtype != torch.long:
        raise TypeError(f"source_ids must be torch.long (int64) ids, got {source_ids.dtype}")
    if source_ids.shape == weights.shape:
        return source_ids
    if weights.dim() == 3 and source_ids.shape == (weights.size(0), weights.size(2)):
        return source_ids.unsqueeze(1).expand_as(weights)  # (B, S) -> (B, 1, S) -> (B, T, S)
    raise ValueError(
        f"source_ids {tuple(source_ids.shape)} must be (B, S) for weights "
        f"{tuple(weights.shape)} ((B, S) or (B, T, S))"
    )


def _check_mixture(p_vocab: Tensor, weights: Tensor, n_extended: int) -> None:
    """Clear errors for the shapes of :func:`pointer_mixture`'s inputs."""
    if n_extended < 0:
        raise ValueError(f"n_extended must be >= 0, got {n_extended}")
    if p_vocab.shape[:-1] != weights.shape[:-1]:
        raise ValueError(
            f"p_vocab {tuple(p_vocab.shape)} and weights {tuple(weights.shape)} must share "
            "their leading axes: (B, V) with (B, S), or (B, T, V) with (B, T, S)"
        )
