"""Graph attention = attention masked to a graph's edges (Veličković et al. 2018), plus a learned
bias per edge type (T5's bucket bias, Raffel et al. 2020 §2.1, with edge types for buckets).

The task: random graphs of 12-20 nodes, each node one of three colours, each pair of nodes
friends, rivals or nothing. A node is *content* (label 1) when at least half of its friends
share its colour (Schelling's segregation rule); rivals do not count. Colours carry no
identity, so a node's own features say nothing about its label: the answer is in its friends.

Three models of the same size (the bias tables add 2 x 4 x 4 = 32 parameters to 17,250), each
two post-norm Transformer layers (Vaswani et al. 2017, §3.1) whose attention step is
:func:`attnkit.attention.attend`:

- ``none``: self-attention over all nodes of the graph (the complete graph: no edges given);
- ``mask``: attention masked to each node's neighbours and itself (GAT-style, eq. (2));
- ``mask+bias``: the same, plus ``B[type(i, j), h]`` added to the scores (self, friend, rival).

Each is trained by the engine (:func:`attnkit.engine.trainer.fit`) into a temporary run
directory; the best epoch (by validation accuracy) is scored on held-out graphs. Run
``python examples/graph_attention.py --seed 1 --figure docs/graph-attention.png``.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnkit.attention import attend
from attnkit.attention.graph import batch_edge_mask, edge_type_bias, edge_type_matrix
from attnkit.engine.checkpoint import load_model
from attnkit.engine.settings import TrainSettings
from attnkit.engine.task import Loss, Task
from attnkit.engine.trainer import fit

NO_EDGE, SELF, FRIEND, RIVAL = 0, 1, 2, 3  # edge types; 0 = no edge (masked anyway)
COLOURS, KINDS = 3, ("none", "mask", "mask+bias")


def random_graph(gen: torch.Generator, nodes: tuple[int, int] = (12, 20), degree: float = 3.0):
    """One graph: colours ``(N,)``, undirected friend and rival edges (each about ``degree``
    per node), and labels ``(N,)``: 1 iff at least half of the node's friends share its colour
    (a node without friends is 0)."""
    n = int(torch.randint(nodes[0], nodes[1] + 1, (1,), generator=gen))
    colour = torch.randint(0, COLOURS, (n,), generator=gen)
    draw = torch.rand(n, n, generator=gen).triu(1)  # one draw per unordered pair i < j
    p = degree / (n - 1)
    pairs = {FRIEND: (draw > 0) & (draw < p), RIVAL: (draw >= p) & (draw < 2 * p)}
    edges = torch.cat([m.nonzero() for m in pairs.values()])  # (E, 2), i < j
    types = torch.cat([torch.full((int(m.sum()),), t) for t, m in pairs.items()])  # (E,)
    friends = pairs[FRIEND] | pairs[FRIEND].T  # (N, N) symmetric
    same = (colour[:, None] == colour[None, :]) & friends  # (N, N) same-colour friends
    count = friends.sum(1)
    label = ((2 * same.sum(1) >= count) & (count > 0)).long()
    return {"n": n, "colour": colour, "edges": edges, "types": types, "label": label}


def make_graphs(count: int, seed: int, size: int = 20) -> dict[str, Tensor]:
    """``count`` random graphs padded to ``size`` nodes: ``colour (G, N)``, ``mask (G, N, N)``
    (:func:`batch_edge_mask`), ``types (G, N, N)``, ``real (G, N)``, ``label (G, N)`` (-100 at
    padding)."""
    gen = torch.Generator().manual_seed(seed)
    graphs = [random_graph(gen) for _ in range(count)]
    sizes = [g["n"] for g in graphs]
    mask = batch_edge_mask([g["edges"] for g in graphs], sizes, undirected=True, size=size)

    def pad(t: Tensor, value: int, dims: int) -> Tensor:
        return F.pad(t, (0, size - t.size(-1)) * dims, value=value)  # (N,) or (N, N)

    types = [
        edge_type_matrix(g["edges"], g["types"], g["n"], SELF, undirected=True) for g in graphs
    ]
    return {
        "colour": torch.stack([pad(g["colour"], 0, 1) for g in graphs]),  # (G, N)
        "label": torch.stack([pad(g["label"], -100, 1) for g in graphs]),  # (G, N)
        "real": torch.stack([pad(torch.ones(g["n"], dtype=torch.bool), 0, 1) for g in graphs]),
        "types": torch.stack([pad(t, NO_EDGE, 2) for t in types]),  # (G, N, N)
        "mask": mask,  # (G, N, N)
    }


class GraphLayer(nn.Module):
    """A post-norm Transformer layer (Vaswani et al. 2017, §3.1) whose attention step is
    :func:`attend` with the graph's mask and edge-type bias."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)  # W^Q, W^K, W^V of all heads
        self.out = nn.Linear(width, width)  # W^O
        self.ff = nn.Sequential(nn.Linear(width, 2 * width), nn.ReLU(), nn.Linear(2 * width, width))
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)

    def forward(self, x: Tensor, mask: Tensor, bias: Tensor | None, need_weights: bool):
        b, n, d = x.shape
        qkv = self.qkv(x).view(b, n, 3, self.heads, d // self.heads)  # (B, N, 3, H, Dh)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)  # 3 x (B, H, N, Dh)
        out = attend(q, k, v, mask.unsqueeze(1), bias=bias, need_weights=need_weights)
        merged = out.context.transpose(1, 2).reshape(b, n, d)  # (B, N, D)
        x = self.norm1(x + self.out(merged))
        return self.norm2(x + self.ff(x)), out.weights


class GraphNet(nn.Module):
    """Colour embedding, ``layers`` :class:`GraphLayer`, a per-node classifier. ``kind`` is
    ``none`` (complete graph), ``mask`` (edges) or ``mask+bias`` (edges and type bias)."""

    def __init__(self, kind: str, width: int = 32, heads: int = 4, layers: int = 2) -> None:
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        self.kind = kind
        self.embed = nn.Embedding(COLOURS, width)
        self.layers = nn.ModuleList(GraphLayer(width, heads) for _ in range(layers))
        table = torch.zeros(layers, RIVAL + 1, heads)  # one (num_types, H) table per layer
        self.type_bias = nn.Parameter(table) if kind == "mask+bias" else None
        self.classify = nn.Linear(width, 2)

    def forward(self, batch: dict[str, Tensor], need_weights: bool = False):
        """Logits ``(B, N, 2)`` and each layer's weights ``(B, H, N, N)`` (or None)."""
        real = batch["real"]
        complete = real.unsqueeze(2) & real.unsqueeze(1)  # (B, N, N): every real pair
        mask = complete if self.kind == "none" else batch["mask"]
        x, weights = self.embed(batch["colour"]), []  # (B, N, D)
        for i, layer in enumerate(self.layers):
            bias = None
            if self.type_bias is not None:  # B[type(i, j), h] of this layer: (B, H, N, N)
                bias = edge_type_bias(self.type_bias[i], batch["types"])
            x, w = layer(x, mask, bias, need_weights)
            weights.append(w)
        return self.classify(x), weights


@dataclass
class GraphConfig:
    """What the engine saves with the run: the model kind and the training settings."""

    name: str = "graph-attention"
    kind: str = "mask+bias"
    batch_size: int = 32
    train: TrainSettings = field(default_factory=TrainSettings)


def node_scores(model: GraphNet, data: dict[str, Tensor]) -> dict[str, float]:
    """Mean cross-entropy and accuracy over the real nodes of ``data``."""
    model.eval()
    with torch.no_grad():
        logits = model(data)[0]  # (G, N, 2)
    gold, real = data["label"], data["real"]
    loss = F.cross_entropy(logits.flatten(0, 1), gold.flatten(), ignore_index=-100)
    correct = (logits.argmax(-1) == gold)[real].float().mean()
    return {"valid_loss": float(loss), "valid_accuracy": float(correct)}


class GraphTask(Task):
    """The :class:`~attnkit.engine.task.Task`: batches of graphs, per-node cross-entropy."""

    monitor, mode = "valid_accuracy", "max"

    def __init__(self, cfg: GraphConfig, train: dict[str, Tensor], valid: dict[str, Tensor]):
        self.config, self.train, self.valid = cfg, train, valid

    def prepare(self, run, *, resume: bool) -> None:
        """Nothing to read or write: the graphs are generated in memory."""

    def build_model(self) -> nn.Module:
        return GraphNet(self.config.kind)

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        """A shuffle of the training graphs, a pure function of (seed, epoch)."""
        gen = torch.Generator().manual_seed(1000 * self.config.train.seed + epoch)
        order = torch.randperm(self.train["colour"].size(0), generator=gen).tolist()
        size = self.config.batch_size
        return [order[i : i + size] for i in range(0, len(order), size)]

    def units(self, batch: list[int]) -> float:
        return float(self.train["real"][batch].sum())  # the loss is a mean over nodes

    def loss(self, model: nn.Module, batch: list[int]) -> Loss:
        part = {key: value[batch] for key, value in self.train.items()}
        logits = model(part)[0]  # (B, N, 2)
        total = F.cross_entropy(
            logits.flatten(0, 1), part["label"].flatten(), ignore_index=-100, reduction="sum"
        )
        return Loss(total, self.units(batch))

    def validate(self, model: nn.Module) -> dict[str, float]:
        return node_scores(model, self.valid)


def train_kind(kind: str, data: dict, seed: int, steps: int, run_root: Path) -> GraphNet:
    """Train one model with the engine and return its best epoch's weights."""
    batches = math.ceil(data["train"]["colour"].size(0) / GraphConfig.batch_size)
    settings = TrainSettings(
        epochs=math.ceil(steps / batches),
        max_steps=steps,
        learning_rate=3e-3,
        seed=seed,
        schedule="linear",
        warmup_fraction=0.05,
        patience=1000,
        threads=torch.get_num_threads(),
        tensorboard=False,
        keep_checkpoints=1,
    )
    task = GraphTask(GraphConfig(kind=kind, train=settings), data["train"], data["valid"])
    result = fit(task, run_root / kind.replace("+", "_"), progress=False)
    model = GraphNet(kind)
    load_model(model, result.run_dir / "model.safetensors")
    return model


def generate(seed: int, train_graphs: int, test_graphs: int) -> dict[str, dict[str, Tensor]]:
    """Training, validation (picks the best epoch) and held-out test graphs."""
    sizes = {"train": train_graphs, "valid": 300, "test": test_graphs}
    return {part: make_graphs(n, 10 * seed + i) for i, (part, n) in enumerate(sizes.items())}


def compare(
    seed: int, steps: int, train_graphs: int = 2000, test_graphs: int = 1000, kinds=KINDS
) -> tuple[dict[str, GraphNet], dict[str, float], dict[str, Tensor]]:
    """Train each of ``kinds`` on the same graphs, from the same seed, for ``steps`` updates;
    returns the models, their node accuracy on the held-out graphs, and those graphs."""
    data = generate(seed, train_graphs, test_graphs)
    models, accuracy = {}, {}
    with tempfile.TemporaryDirectory() as tmp:  # the engine's run directories
        for kind in kinds:
            models[kind] = train_kind(kind, data, seed, steps, Path(tmp))
            accuracy[kind] = node_scores(models[kind], data["test"])["valid_accuracy"]
    return models, accuracy, data["test"]


def plot_attention(model: GraphNet, test: dict[str, Tensor], path: Path, index: int = 0) -> None:
    """The edge types of test graph ``index`` beside the first layer's weights, head by head,
    with the share of each head's weight on friends and on rivals."""
    import matplotlib

    matplotlib.use("Agg")  # files only
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    one = {key: value[index : index + 1] for key, value in test.items()}  # (1, ..)
    n = int(one["real"].sum())
    with torch.no_grad():
        weights = model(one, need_weights=True)[1][0][0, :, :n, :n]  # (H, n, n)
    types = one["types"][0, :n, :n]  # (n, n)
    names = [f"{i}{'RGB'[int(c)]}" for i, c in enumerate(one["colour"][0, :n])]
    fig, axes = plt.subplots(1, 1 + weights.size(0), figsize=(3.1 * (1 + weights.size(0)), 3.6))
    cmap = ListedColormap(["white", "lightgrey", "tab:green", "tab:red"])
    axes[0].imshow(types, cmap=cmap, vmin=-0.5, vmax=3.5, interpolation="nearest")
    axes[0].set_title("edges: self grey,\nfriend green, rival red", fontsize=8)
    top = float(weights.max())  # one colour scale for all heads
    for h, ax in enumerate(axes[1:]):
        w = weights[h]  # (n, n)
        share = [float(w[types == t].sum() / n) for t in (FRIEND, RIVAL)]
        ax.imshow(w, cmap="Greys", vmin=0, vmax=top, interpolation="nearest")
        ax.set_title(
            f"head {h}: weight on friends {share[0]:.2f},\nrivals {share[1]:.2f}", fontsize=8
        )
    for ax in axes:
        ax.set_xticks(range(n), names, rotation=90, fontsize=5)
        ax.set_yticks(range(n), names, fontsize=5)
    fig.suptitle("mask+bias model, layer 1: rows = query nodes, columns = key nodes", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps", type=int, default=1000, help="updates per model")
    parser.add_argument("--graphs", type=int, default=2000, help="training graphs")
    parser.add_argument("--figure", type=Path, default=Path("graph-attention.png"))
    parser.add_argument("--threads", type=int, default=1, help="torch threads (tiny tensors)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    models, accuracy, test = compare(args.seed, args.steps, args.graphs)
    majority = float((test["label"][test["real"]] == 0).float().mean())
    nodes, graphs = int(test["real"].sum()), test["real"].size(0)
    print(f"held-out: {nodes} nodes of {graphs} graphs; always 0: {majority:.3f}")
    for kind, model in models.items():
        size = sum(p.numel() for p in model.parameters())
        print(f"{kind:>10}: {size} parameters, held-out node accuracy {accuracy[kind]:.3f}")
    plot_attention(models["mask+bias"], test, args.figure)
    print(f"wrote {args.figure} ({time.perf_counter() - started:.0f} s)")
    return accuracy


if __name__ == "__main__":
    main()
