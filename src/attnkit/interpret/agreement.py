"""Symmetrising two directions' attention before reading links: the product of their weights.

Link symmetrisation (:func:`attnkit.interpret.alignments.symmetrise`, Koehn, Och & Marcu 2003)
combines two *sets of links*, each read from one direction's argmaxes. Liang, Taskar & Klein
(2006, "Alignment by agreement", §2.3) combine the two directional models one step earlier:
their link posteriors are multiplied, so a link survives only where **both** directions put
weight on it. With attention as the posterior:

    P_ij = A→_ij · A←_ji        A→ (T, S): the forward run's attention (target rows)
                                A← (S, T): the reverse run's (its target is our source)

and the links are read from ``P`` in both ways: each target word's argmax (row) and each source
word's argmax (column), combined by grow-diag. An article whose forward attention leans on
the noun that decides its case, while the reverse run's leans on the article, gets its
product's peak on neither alone but where both agree.
"""

from __future__ import annotations

import torch
from torch import Tensor

from attnkit.interpret.alignments import Link, argmax_links, symmetrise


def posterior_product(forward, backward) -> Tensor:
    """``forward (T, S) * backward (S, T)ᵀ``: the two directions' weights multiplied link by
    link (Liang et al. 2006). Shapes must agree word for word."""
    f = torch.as_tensor(forward, dtype=torch.float64)
    b = torch.as_tensor(backward, dtype=torch.float64)
    if f.dim() != 2 or b.dim() != 2 or f.shape != b.T.shape:
        raise ValueError(
            f"the forward attention (T, S) and the reverse one (S, T) must match, got "
            f"{tuple(f.shape)} and {tuple(b.shape)}"
        )
    return f * b.T  # (T, S)


def agreement_links(forward, backward) -> frozenset[Link]:
    """Links ``(source, target)`` of :func:`posterior_product`: the argmax of each row and of
    each column, combined by grow-diag."""
    product = posterior_product(forward, backward)  # (T, S)
    rows = argmax_links(product)
    return symmetrise(rows, argmax_links(product, per="source"), "grow-diag")
