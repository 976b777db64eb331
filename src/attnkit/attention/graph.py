"""Graph attention as masked attention: a graph's edges are the mask, its edge labels a bias.

Veličković et al. 2018, "Graph Attention Networks" (GAT), let node ``i`` attend only to its
neighbourhood ``N_i`` (its first-order neighbours and ``i`` itself, §2.1)::

    e_ij     = LeakyReLU(a^T [W h_i || W h_j])                       # eq. (1), (3)
    alpha_ij = exp(e_ij) / sum_{k in N_i} exp(e_ik)                  # eq. (2), j in N_i
    h'_i     = sigma(sum_{j in N_i} alpha_ij W h_j)                  # eq. (4)

That is :func:`~attnkit.attention.attend` with the mask ``M_ij = [j in N_i]``
(:func:`edge_mask`): the softmax over ``N_i`` is the softmax over all keys with the others
masked to ``-inf``. GAT's score is :func:`gat_score`; the dot-product score of Vaswani et al.
2017, eq. (1), works the same way. Read the other way round:

- **Transformer self-attention is GAT on the complete graph**: every token is every token's
  neighbour, so the mask has nothing to remove; word order enters through positions instead.
- **A relative position is an edge label.** Shaw et al. 2018, §3, describe their model as
  attention over a labelled, fully connected graph whose edge ``(i, j)`` carries the clipped
  offset ``j - i``. T5 (Raffel et al. 2020, §2.1) adds one learned scalar per offset bucket
  and head to the scores. On a graph with typed edges ("friend", "rival", ...), the edge type
  takes the place of the bucket: ``e_ij += B[type(i, j), h]`` (:func:`edge_type_bias`).

Direction: an edge ``(i, j)`` (a row of ``edges``) means **node i may attend to node j**, so
information flows from ``j`` to ``i``; ``mask[i, j]`` is True. (PyTorch Geometric's default
``edge_index`` uses the opposite order, source first.) Pass ``undirected=True``, or list both
directions, for an undirected graph.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor


def _check_edges(edges: Tensor, num_nodes: int) -> None:
    if edges.dim() != 2 or edges.size(-1) != 2:
        raise ValueError(f"edges must be (E, 2) node pairs, got shape {tuple(edges.shape)}")
    if edges.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"edges must be an integer tensor, got {edges.dtype}")
    if edges.numel() and (int(edges.min()) < 0 or int(edges.max()) >= num_nodes):
        raise ValueError(f"edges name nodes outside 0 .. {num_nodes - 1}")


def edge_mask(
    edges: Tensor, num_nodes: int, self_loops: bool = True, undirected: bool = False
) -> Tensor:
    """The neighbourhoods of GAT (Veličković et al. 2018, eq. (2)) as an attention mask.

    Args:
        edges: ``(E, 2)`` integer node pairs; a row ``(i, j)`` lets node ``i`` attend to ``j``.
        num_nodes: ``N``.
        self_loops: every node is in its own neighbourhood (GAT's ``N_i`` includes ``i``).
        undirected: each edge also lets ``j`` attend to ``i``.

    Returns:
        ``(N, N)`` bool, True = may attend (query row ``i``, key column ``j``); it broadcasts
        against scores ``(B, H, N, N)``.
    """
    _check_edges(edges, num_nodes)
    mask = torch.zeros(num_nodes, num_nodes, dtype=torch.bool, device=edges.device)  # (N, N)
    mask[edges[:, 0], edges[:, 1]] = True
    if undirected:
        mask[edges[:, 1], edges[:, 0]] = True
    if self_loops:
        mask.fill_diagonal_(True)
    return mask


def batch_edge_mask(
    edges: Sequence[Tensor],
    num_nodes: Sequence[int],
    self_loops: bool = True,
    undirected: bool = False,
    size: int | None = None,
) -> Tensor:
    """:func:`edge_mask` of ``B`` graphs of different sizes, padded to one batch.

    Graph ``b`` has ``num_nodes[b]`` nodes and edges ``edges[b]`` ``(E_b, 2)``. Returns
    ``(B, N, N)`` bool with ``N = size`` or the largest graph; padding nodes neither attend
    nor are attended to (a query with no key gets zero weights from :func:`attend`).
    """
    if len(edges) != len(num_nodes):
        raise ValueError(f"{len(edges)} edge lists for {len(num_nodes)} graphs")
    n = max(num_nodes, default=0) if size is None else size
    if any(count > n for count in num_nodes):
        raise ValueError(f"a graph has {max(num_nodes)} nodes, more than size={n}")
    masks = []
    for graph_edges, count in zip(edges, num_nodes, strict=True):
        mask = edge_mask(graph_edges, count, self_loops, undirected)  # (N_b, N_b)
        masks.append(F.pad(mask, (0, n - count, 0, n - count)))  # (N, N)
    if not masks:
        return torch.zeros(0, n, n, dtype=torch.bool)
    return torch.stack(masks)  # (B, N, N)


def edge_type_matrix(
    edges: Tensor,
    types: Tensor,
    num_nodes: int,
    self_type: int | None = None,
    undirected: bool = False,
) -> Tensor:
    """The type of every node pair, ``(N, N)`` long: ``types[e]`` at edge ``e`` ``(i, j)`` of
    ``edges (E, 2)``, ``self_type`` on the diagonal (if given), 0 elsewhere, so type 0 means
    "no edge" and labelled edges should use 1, 2, ... (the rows of :func:`edge_type_bias`)."""
    _check_edges(edges, num_nodes)
    if types.shape != edges.shape[:1]:
        raise ValueError(f"types must be (E,) = ({edges.size(0)},), got {tuple(types.shape)}")
    matrix = torch.zeros(num_nodes, num_nodes, dtype=torch.long, device=edges.device)  # (N, N)
    matrix[edges[:, 0], edges[:, 1]] = types.long()
    if undirected:
        matrix[edges[:, 1], edges[:, 0]] = types.long()
    if self_type is not None:
        matrix.fill_diagonal_(self_type)
    return matrix


def edge_type_bias(table: Tensor, edge_types: Tensor) -> Tensor:
    """One learned scalar per edge type and head, added to the scores: ``B[type(i, j), h]``.

    T5's relative bias (Raffel et al. 2020, §2.1), ``B[bucket(j - i), h]``, with the edge type
    in place of the offset bucket; Shaw et al. 2018, §3, likewise treat relative positions as
    edge labels. Pass the result to :func:`~attnkit.attention.attend` as ``bias``.

    Args:
        table: ``(num_types, H)`` float, typically an ``nn.Parameter``.
        edge_types: ``(.., N, N)`` long, the type of each pair (:func:`edge_type_matrix`).

    Returns:
        ``(.., H, N, N)`` float: ``(H, N, N)`` for one graph (broadcasts over the batch),
        ``(B, H, N, N)`` for a batch of graphs.
    """
    if table.dim() != 2 or not table.is_floating_point():
        raise ValueError(f"table must be a float (num_types, H) tensor, got {tuple(table.shape)}")
    if edge_types.dim() < 2 or edge_types.dtype not in (torch.int32, torch.int64):
        raise ValueError("edge_types must be an integer (.., N, N) tensor")
    if edge_types.numel() and int(edge_types.max()) >= table.size(0):
        raise ValueError(
            f"edge type {int(edge_types.max())} has no row in a table of {table.size(0)} types"
        )
    bias = table[edge_types]  # (.., N, N, H)
    return bias.movedim(-1, -3)  # (.., H, N, N)


def gat_score(
    query: Tensor, key: Tensor, a_query: Tensor, a_key: Tensor, negative_slope: float = 0.2
) -> Tensor:
    """GAT's score ``LeakyReLU(a^T [W h_i || W h_j])`` (Veličković et al. 2018, eq. (3)),
    with ``a = [a_query; a_key]`` split in two ``(D,)`` halves, so it is
    ``LeakyReLU(a_query . q_i + a_key . k_j)``. Shapes ``(.., Tq, D)`` x ``(.., Tk, D)`` ->
    ``(.., Tq, Tk)``. Pass ``functools.partial(gat_score, a_query=.., a_key=..)`` to
    :func:`~attnkit.attention.attend` as its ``score``, with ``q = k = v = W h``."""
    from_query = query @ a_query  # (.., Tq)
    from_key = key @ a_key  # (.., Tk)
    pairs = from_query.unsqueeze(-1) + from_key.unsqueeze(-2)  # (.., Tq, Tk)
    return F.leaky_relu(pairs, negative_slope)
