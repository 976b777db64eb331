"""Which past items drove a recommendation: SASRec's attention over a user's history, block by
block (each block's weights, averaged over heads, as a causal heatmap of positions × items, the
items named by their ids), for ``predict --picture``, the run report and the served page; and
the scores of every split evaluated so far for the report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from attnkit.interpret import report_page as rp
from attnkit.results import Shown

SCORES = ("hr10", "ndcg10", "mrr")


def plot_history_attention(run, history: Sequence[int], path: str | Path, title: str = "") -> Path:
    """Write each block's attention over the last ``max_len`` items of ``history`` to ``path``
    (.png, .svg or .pdf); the last row is the prediction's, labelled with the top item."""
    from attnkit.runtime import files_backend

    files_backend()
    import matplotlib.pyplot as plt

    path = Path(path)
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise ValueError(f"{path}: unknown picture format {path.suffix!r}; use .png, .svg or .pdf")
    weights = run.attention(history)  # per block (H, L, L)
    items = [str(i) for i in list(history)[-weights[0].shape[-1] :]]
    best = run.recommend(history, k=1)[0][0]
    rows = [f"after {i}" for i in items[:-1]] + [f"next: {best}"]
    fig, axes = plt.subplots(1, len(weights), figsize=(3.2 * len(weights) + 1, 3.2), squeeze=False)
    for b, (ax, w) in enumerate(zip(axes[0], weights, strict=True)):
        ax.imshow(w.mean(0), cmap="Greys", vmin=0, vmax=1)  # (L, L), heads averaged
        ax.set_xticks(range(len(items)), items, rotation=90, fontsize=6)
        ax.set_yticks(range(len(rows)), rows if b == 0 else [""] * len(rows), fontsize=6)
        ax.set_title(f"block {b + 1}", fontsize=8)
        ax.set_xlabel("past item", fontsize=7)
    fig.suptitle(title or "attention over the history", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def histories_shown(run, histories: Sequence[Sequence[int]]) -> list[Shown]:
    """Each history with its ten best next items and, for SASRec, every block's attention as
    a record (queries: the positions, keys: the items)."""
    import torch

    from attnkit.interpret.structure import AttentionRecord

    shown = []
    for history in histories:
        top = run.recommend(history, k=10)
        record = None
        if hasattr(run.model, "encode"):
            weights = run.attention(history)  # per block (H, L, L)
            items = [str(i) for i in list(history)[-weights[0].shape[-1] :]]
            layers = [torch.from_numpy(w) for w in weights]
            record = AttentionRecord({"self": layers}, {"self": (items, items)})
        text = " ".join(str(i) for i in history)
        shown.append(Shown(text, " ".join(str(i) for i, _ in top), record))
    return shown


def evaluated_scores(root: Path) -> str:
    """A row per split and protocol scored by ``attnkit evaluate``, or how to score one."""
    return rp.evaluated_section(
        root, ["split", "protocol", "users", "HR@10", "NDCG@10", "MRR"],
        lambda r: [
            [r["split"], protocol, r["n"], *(rp.fmt(r[protocol].get(k)) for k in SCORES)]
            for protocol in ("sampled", "full")
        ],
    )  # fmt: skip
