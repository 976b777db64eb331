"""Coarse-to-fine attention (Deng et al. 2017, §4) against its definition, computed by hand:
the weight of a cell is its block's coarse weight times its fine weight inside the block."""

from __future__ import annotations

import pytest
import torch

from attnkit.apps.im2latex.coarse_to_fine import CoarseToFineAttention


def _grid():
    torch.manual_seed(0)
    grid = torch.randn(2, 3, 5, 6)  # (B, R, C, D)
    mask = torch.ones(2, 3, 5, dtype=torch.bool)
    mask[1, 2:] = False  # the second image has 2 x 3 real cells
    mask[1, :, 3:] = False
    return grid, mask


def _sparsemax(z, dim=-1):
    """Martins and Astudillo 2016, Algorithm 1: the Euclidean projection onto the simplex."""
    s, _ = torch.sort(z, descending=True)
    k = torch.arange(1, len(z) + 1, dtype=z.dtype)
    support = 1 + k * s > torch.cumsum(s, 0)
    tau = (torch.cumsum(s, 0)[support][-1] - 1) / k[support][-1]
    return torch.clamp(z - tau, min=0)


def _by_hand(att, query, grid, mask, coarse_norm):
    """Loop over the blocks of one image: mean annotation, scores, normalise, multiply."""
    kr, kc = att.block
    r, c, _ = grid.shape
    fine, coarse = att.fine.score, att.coarse.score
    blocks, block_scores = [], []
    for i in range(0, r, kr):
        for j in range(0, c, kc):
            cells = [(a, b) for a in range(i, min(i + kr, r)) for b in range(j, min(j + kc, c))]
            real = [(a, b) for a, b in cells if mask[a, b]]
            if not real:
                continue
            values = torch.stack([grid[a, b] for a, b in real])  # (n, D)
            e = fine(query[None, None], values[None])[0, 0]  # (n,)
            blocks.append((real, torch.softmax(e, -1)))
            block_scores.append(coarse(query[None, None], values.mean(0)[None, None])[0, 0, 0])
    alpha = coarse_norm(torch.stack(block_scores), -1)
    out = torch.zeros(r, c)
    for a_i, (real, w) in zip(alpha, blocks, strict=True):
        for (a, b), w_j in zip(real, w, strict=True):
            out[a, b] = a_i * w_j
    return out


@pytest.mark.parametrize("coarse", ["softmax", "sparsemax"])
@pytest.mark.parametrize("block", [(2, 2), (1, 3), (3, 5)])
def test_cell_weight_is_coarse_times_fine_and_context_follows(coarse, block):
    grid, mask = _grid()
    att = CoarseToFineAttention(4, 6, 5, block=block, coarse=coarse)
    query = torch.randn(2, 1, 4)
    with torch.no_grad():
        out = att(query, att.prepare(grid, mask))
    norm = torch.softmax if coarse == "softmax" else _sparsemax
    for k in range(2):
        want = _by_hand(att, query[k, 0], grid[k], mask[k], norm)
        torch.testing.assert_close(out.weights[k, 0].view(3, 5), want, rtol=1e-5, atol=1e-6)
        context = (want.view(-1, 1) * grid[k].view(-1, 6)).sum(0)  # (D,)
        torch.testing.assert_close(out.context[k, 0], context, rtol=1e-5, atol=1e-6)


def test_sparsemax_gives_blocks_exactly_zero_weight():
    grid, mask = _grid()
    att = CoarseToFineAttention(4, 6, 5, block=(1, 1), coarse="sparsemax")
    with torch.no_grad():  # 1 x 1 blocks: coarse-to-fine is sparsemax over the cells
        att.coarse.score.v.weight.mul_(20.0)
        w = att(torch.randn(2, 1, 4), att.prepare(grid, mask)).weights
    assert (w[0] == 0).sum() > 0 and torch.allclose(w.sum(-1), torch.ones(2, 1))


@pytest.mark.parametrize("coarse", ["softmax", "sparsemax"])
def test_all_padding_blocks_give_finite_weights_and_gradients(coarse):
    grid, mask = _grid()  # with 2 x 2 blocks the second image has four all-padding blocks
    grid.requires_grad_(True)
    att = CoarseToFineAttention(4, 6, 5, block=(2, 2), coarse=coarse)
    blocked = att.prepare(grid, mask)
    assert (~blocked.block_mask[1]).sum() == 4
    out = att(torch.randn(2, 1, 4), blocked)
    (out.context.sum() + out.weights.sum()).backward()
    assert torch.isfinite(out.weights).all() and torch.isfinite(grid.grad).all()
    assert all(torch.isfinite(p.grad).all() for p in att.parameters())
