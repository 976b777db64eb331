"""Coarse-to-fine attention over the annotation grid (Deng et al. 2017, §4, the ICML paper's
title): a coarse attention picks regions of the image, a fine attention reads inside them.

The grid ``V~ (B, R, C, D)`` is cut into blocks of ``kr x kc`` cells (padded with masked cells
to whole blocks). Each block ``i`` has a coarse annotation ``V'_i``, here the mean of its real
cells (ours; the paper pools a coarser CNN feature map). At step ``t``::

    alpha'_t = normaliser(a'(h_t, V'))                          coarse, over the blocks
    alpha^(i)_t = softmax_j(a(h_t, V~_ij))                      fine, inside block i
    c_t = sum_i alpha'_{t,i} sum_j alpha^(i)_{t,j} V~_ij        (§4, eq. (5))

so the weight of cell ``(i, j)`` is ``alpha'_{t,i} * alpha^(i)_{t,j}`` and the weights still sum
to 1 over the real cells. Both attentions are :class:`attnkit.attention.AdditiveAttention`
(the paper's score); the coarse one's normaliser is ``softmax``, or ``sparsemax`` (the paper's
"sparsemax" variant, which gives most blocks exactly zero weight). The paper's hard (REINFORCE)
coarse attention is not built. Every block's fine attention is computed: with sparsemax the
zero-weight blocks could be skipped, the saving the paper is after on large images, but at
these sizes (tens of cells) it is not worth a gather.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from attnkit.attention import AdditiveAttention, AttentionOutput


@dataclass
class BlockedGrid:
    """The grid prepared once per image batch, batch first (so beam search can reorder it):
    ``cells (B, Nb, k, D)`` annotations block by block, ``cell_keys (B, Nb, k, A)`` their
    prepared fine keys, ``cell_mask (B, Nb, k)`` (an all-padding block gets fine weights 0
    from :func:`attnkit.attention.attend` and coarse weight 0), ``blocks (B, Nb, D)`` coarse
    annotations,
    ``block_keys (B, Nb, A)``, ``block_mask (B, Rb, Cb)`` (its shape is the block grid) and
    ``grid_mask (B, R, C)``, the grid before padding (its shape is the grid's)."""

    cells: Tensor
    cell_keys: Tensor
    cell_mask: Tensor
    blocks: Tensor
    block_keys: Tensor
    block_mask: Tensor
    grid_mask: Tensor


class CoarseToFineAttention(nn.Module):
    """See the module docstring. ``block``: cells per block ``(rows, columns)``;
    ``coarse``: the coarse normaliser, ``"softmax"`` or ``"sparsemax"``."""

    def __init__(
        self,
        d_query: int,
        d_annotation: int,
        d_attention: int,
        *,
        block: tuple[int, int] = (2, 2),
        coarse: str = "sparsemax",
    ) -> None:
        super().__init__()
        self.fine = AdditiveAttention(d_query, d_annotation, d_attention)
        self.coarse = AdditiveAttention(d_query, d_annotation, d_attention, normaliser=coarse)
        self.block = (int(block[0]), int(block[1]))

    def prepare(self, grid: Tensor, mask: Tensor) -> BlockedGrid:
        """``grid (B, R, C, D)`` and ``mask (B, R, C)`` cut into blocks, once per batch."""
        kr, kc = self.block
        b, r, c, d = grid.shape
        pr, pc = -r % kr, -c % kc
        padded = nn.functional.pad(grid, (0, 0, 0, pc, 0, pr))  # (B, R', C', D)
        padded_mask = nn.functional.pad(mask, (0, pc, 0, pr))  # (B, R', C'), padding is False
        rb, cb = padded.size(1) // kr, padded.size(2) // kc
        cells = _to_blocks(padded, kr, kc)  # (B, Nb, kr * kc, D)
        cell_mask = _to_blocks(padded_mask[..., None], kr, kc)[..., 0]  # (B, Nb, k)
        weight = cell_mask.float().unsqueeze(-1)  # (B, Nb, k, 1)
        blocks = (cells * weight).sum(2) / weight.sum(2).clamp_min(1.0)  # (B, Nb, D)
        block_mask = cell_mask.any(-1)  # (B, Nb)
        return BlockedGrid(
            cells,
            self.fine.prepare_key(cells.flatten(0, 1)).unflatten(0, (b, rb * cb)),
            cell_mask,
            blocks,
            self.coarse.prepare_key(blocks),
            block_mask.view(b, rb, cb),
            mask,
        )

    def forward(
        self, query: Tensor, grid: BlockedGrid, need_weights: bool = True
    ) -> AttentionOutput:
        """``query (B, 1, Dq)`` -> context ``(B, 1, D)`` and the weight of every cell
        ``(B, 1, R * C)``, row-major (None unless ``need_weights``)."""
        b, nb, k, d = grid.cells.shape
        q = query.expand(b, nb, query.size(-1)).reshape(b * nb, 1, -1)  # (B * Nb, 1, Dq)
        fine = self.fine(
            q,
            grid.cells.flatten(0, 1),
            mask=grid.cell_mask.view(b * nb, 1, k),
            prepared_key=grid.cell_keys.flatten(0, 1),
            need_weights=need_weights,
        )
        per_block = fine.context.view(b, nb, d)  # (B * Nb, 1, D) -> (B, Nb, D)
        coarse = self.coarse(
            query,
            grid.blocks,
            per_block,
            mask=grid.block_mask.view(b, 1, nb),
            prepared_key=grid.block_keys,
            need_weights=True,
        )
        weights = None
        if need_weights:
            cell = coarse.weights.view(b, nb, 1) * fine.weights.view(b, nb, k)  # (B, Nb, k)
            weights = self._to_grid(cell, grid).unsqueeze(1)  # (B, 1, R * C)
        return AttentionOutput(coarse.context, weights)

    def _to_grid(self, cell: Tensor, grid: BlockedGrid) -> Tensor:
        """Per-block cell weights ``(B, Nb, kr * kc)`` back on the unpadded grid, row-major
        ``(B, R * C)`` (the padding cells have weight 0)."""
        (kr, kc), (rb, cb), (r, c) = self.block, grid.block_mask.shape[1:], grid.grid_mask.shape[1:]
        b = cell.size(0)
        padded = cell.view(b, rb, cb, kr, kc).permute(0, 1, 3, 2, 4)  # (B, Rb, kr, Cb, kc)
        padded = padded.reshape(b, rb * kr, cb * kc)  # (B, R', C')
        return padded[:, :r, :c].reshape(b, r * c)  # (B, R, C) -> (B, R * C)


def _to_blocks(grid: Tensor, kr: int, kc: int) -> Tensor:
    """``(B, R, C, D)`` with ``R, C`` whole blocks -> ``(B, Nb, kr * kc, D)``, blocks
    row-major and the cells of a block row-major."""
    b, r, c, d = grid.shape
    blocks = grid.view(b, r // kr, kr, c // kc, kc, d).permute(
        0, 1, 3, 2, 4, 5
    )  # (B, Rb, Cb, kr, kc, D)
    return blocks.reshape(b, (r // kr) * (c // kc), kr * kc, d)
