"""The position term alone: what each scheme adds to the scores, per head, as a picture.

For the first encoder layer of a trained Transformer, the part of the score ``e_ij`` that comes
from the positions ``i`` and ``j`` (not from the words), with the words replaced by the mean
query and key of real sentences where a scheme needs them:

- absolute: ``(PE_i W^Q_h) . (PE_j W^K_h) / sqrt(d)``, the position-position part of the score
  when sinusoids are added to the embeddings (Vaswani et al. 2017 §3.5);
- shaw: ``q_mean . a^K_clip(j - i) / sqrt(d)`` (Shaw et al. 2018, eq. (4));
- t5, alibi: the bias itself, ``B[bucket(j - i), h]`` or ``-m_h |j - i|``;
- rope: ``(R_i q_mean) . (R_j k_mean) / sqrt(d)`` (Su et al. 2021), which depends on ``j - i``;
- none: no term (nothing is drawn).
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import Tensor

from attnkit.attention.rotary import rotate


def _mean_query_key(model, src: Tensor, keep: Tensor) -> tuple[Tensor, Tensor]:
    """Mean query and key ``(H, Dh)`` each of encoder layer 0 over the real tokens of ``src``."""
    layer = model.encoder.layers[0]
    attn = layer.self_attn
    x = model.src_embed(src)  # (B, S, D)
    h = layer.norm1(x) if layer.norm_first else x
    q = attn._split(attn.q_proj(h), attn.num_heads)  # (B, H, S, Dh)
    k = attn._split(attn.k_proj(h), attn.kv_heads)  # (B, H_kv, S, Dh); H_kv = H here
    weight = keep[:, None, :, None].to(q.dtype)  # (B, 1, S, 1)
    count = weight.sum(dim=(0, 2))  # (1, 1)
    return (q * weight).sum(dim=(0, 2)) / count, (k * weight).sum(dim=(0, 2)) / count


@torch.no_grad()
def position_term(model, src: Tensor, keep: Tensor, length: int) -> Tensor | None:
    """``(H, L, L)`` position term of encoder layer 0 for ``L = length`` positions, or None
    for ``positions="none"``; ``src (B, S)``, ``keep (B, S)`` are real sentences."""
    attn = model.encoder.layers[0].self_attn
    heads, width = attn.num_heads, attn.head_dim
    scheme = model.positions
    if scheme == "none":
        return None
    if scheme == "absolute":
        pe = model.src_embed.position(length)[0]  # (L, D)
        qp = (pe @ attn.q_proj.weight.T).view(length, heads, width).transpose(0, 1)  # (H, L, Dh)
        kp = (pe @ attn.k_proj.weight.T).view(length, heads, width).transpose(0, 1)
        return qp @ kp.transpose(-2, -1) / math.sqrt(width)  # (H, L, L)
    q_mean, k_mean = _mean_query_key(model, src, keep)  # (H, Dh) each
    queries = q_mean[None, :, None, :].expand(1, heads, length, width)  # (1, H, L, Dh)
    if scheme == "rope":
        keys = k_mean[:, None, :].expand(heads, length, width)  # (H, L, Dh)
        steps = torch.arange(length)
        rq, rk = rotate(queries[0], steps), rotate(keys, steps)  # (H, L, Dh)
        return rq @ rk.transpose(-2, -1) / math.sqrt(width)  # (H, L, L)
    bias = attn.position.bias(queries, length, 0)  # (1|1, H, L, L)
    return bias[0].expand(heads, length, length)


def plot_position_terms(
    runs: dict[str, Path], path: str | Path, length: int = 40, sources: list[str] | None = None
) -> Path | None:
    """One row per trained Transformer run (``{label: run_dir}``), heads across, each term
    drawn over ``length`` query (rows) and key (columns) positions; the mean query and key
    come from ``sources`` (default: the run's test sentences). Returns ``path``, or None when
    no run has a position term (``positions: none``)."""
    from attnkit.runtime import files_backend

    files_backend()
    import matplotlib.pyplot as plt

    terms = {}
    for label, run_dir in runs.items():
        term = _term_of_run(Path(run_dir), length, sources)
        if term is not None:
            terms[label] = term
    if not terms:
        return None
    heads = max(t.size(0) for t in terms.values())
    fig, axes = plt.subplots(len(terms), heads, figsize=(2.2 * heads, 2.2 * len(terms)))
    axes = [axes] if len(terms) == 1 else axes
    for row, (scheme, term) in zip(axes, terms.items(), strict=True):
        limit = float(term.abs().max()) or 1.0
        for h, ax in enumerate(row):
            ax.imshow(term[h].numpy(), cmap="RdBu_r", vmin=-limit, vmax=limit)
            ax.set_xticks([]), ax.set_yticks([])
            ax.set_title(f"{scheme}, head {h}", fontsize=8)
    fig.suptitle("position term of encoder layer 0 (query rows, key columns)", fontsize=9)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _term_of_run(run_dir: Path, length: int, sources: list[str] | None) -> Tensor | None:
    from attnkit.apps.translation.decode.run import load_run
    from attnkit.apps.translation.prepare import load_configured_corpus

    cfg, tokenizer, model = load_run(run_dir)
    if sources is None:  # the run's own test sentences (else valid, else train)
        splits = load_configured_corpus(cfg.data).splits
        pairs = splits.get("test") or splits.get("valid") or splits["train"]
        sources = [pair.src for pair in pairs]
    ids = tokenizer.encode_src(sources[:64])
    width = max(len(s) for s in ids)
    src = torch.tensor([s + [tokenizer.pad_id] * (width - len(s)) for s in ids])  # (B, S)
    return position_term(model, src, src != tokenizer.pad_id, length)
