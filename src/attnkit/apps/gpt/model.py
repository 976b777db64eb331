"""A decoder-only Transformer language model, GPT (Radford et al. 2018, "Improving Language
Understanding by Generative Pre-Training", §3.1; GPT-2: Radford et al. 2019, §2.3, pre-LN).

The flow: **Embed** (token embeddings, plus learned positions where ``positions: learned``),
**Encode/Attend** (``L`` pre-LN blocks, each ``x + Attn(LN(x))`` then ``x + MLP(LN(x))``, the
attention causal, :class:`~attnkit.attention.MultiHeadAttention`), **Predict** (a final
LayerNorm and the output layer, its weight the token embedding's: Press & Wolf 2017). A model
with ``mlp: false`` is attention-only, as the induction-head models of Olsson et al. (2022).

``forward(ids, need_weights=True)`` returns every layer's per-head weights
``(B, H, T, Tk)``; with ``caches``/``use_cache`` it decodes step by step (the KV cache, a
sliding window with ``window``, StreamingLLM's sinks with ``sinks``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnkit.apps.gpt.config import GPTModelConfig
from attnkit.attention import MultiHeadAttention
from attnkit.attention.cache import KVCache


@dataclass
class GPTOutput:
    """``logits (B, T, V)``; ``weights``: one ``(B, H, T, Tk)`` per layer (when asked);
    ``caches``: one :class:`KVCache` per layer (with ``use_cache``)."""

    logits: Tensor
    weights: list[Tensor] | None = None
    caches: list[KVCache] | None = None


class MLP(nn.Module):
    """The position-wise network ``W2 GELU(W1 x)`` (GPT-2: the tanh approximation)."""

    def __init__(self, cfg: GPTModelConfig) -> None:
        super().__init__()
        inner = cfg.mlp_ratio * cfg.width
        self.fc = nn.Linear(cfg.width, inner, bias=cfg.bias)
        self.proj = nn.Linear(inner, cfg.width, bias=cfg.bias)
        self.approximate = "tanh" if cfg.activation == "gelu_tanh" else "none"
        self.dropout = _dropout(cfg.dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.dropout(self.proj(F.gelu(self.fc(x), approximate=self.approximate)))


class Block(nn.Module):
    """One pre-LN block: ``x + Attn(LN1(x))``, then ``x + MLP(LN2(x))`` (GPT-2, §2.3)."""

    def __init__(self, cfg: GPTModelConfig) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.width, eps=cfg.norm_eps, bias=cfg.bias)
        relative = None if cfg.positions in ("learned", "none") else cfg.positions
        self.attn = MultiHeadAttention(
            cfg.width,
            cfg.heads,
            dropout=cfg.dropout,
            bias=cfg.bias,
            positions=relative,
            position_options={"causal": True} if relative == "alibi" else None,
            kv_heads=cfg.kv_heads,
        )
        self.resid_dropout = _dropout(cfg.dropout)
        self.ln2 = nn.LayerNorm(cfg.width, eps=cfg.norm_eps, bias=cfg.bias) if cfg.mlp else None
        self.mlp = MLP(cfg) if cfg.mlp else None

    def forward(self, x, need_weights, cache, use_cache, window, sinks):
        # one query (a decoding step) is the last position and sees every key: no causal mask
        out = self.attn(
            self.ln1(x),
            causal=x.size(1) > 1,
            need_weights=need_weights,
            cache=cache,
            use_cache=use_cache,
            window=window,
            sinks=sinks,
        )
        x = x + self.resid_dropout(out.context)
        if self.mlp is not None:
            x = x + self.mlp(self.ln2(x))
        return x, out


class GPT(nn.Module):
    """The language model of :class:`GPTModelConfig` over ``vocab_size`` tokens, with a
    context of ``block_size`` positions (the learned position table's length)."""

    def __init__(self, cfg: GPTModelConfig, vocab_size: int, block_size: int) -> None:
        super().__init__()
        self.cfg, self.vocab_size, self.block_size = cfg, vocab_size, block_size
        self.tokens = nn.Embedding(vocab_size, cfg.width)
        learned = cfg.positions == "learned"
        self.positions = nn.Embedding(block_size, cfg.width) if learned else None
        self.dropout = _dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.ln_f = nn.LayerNorm(cfg.width, eps=cfg.norm_eps, bias=cfg.bias)
        self.head = nn.Linear(cfg.width, vocab_size, bias=False)
        if cfg.tie_embeddings:
            self.head.weight = self.tokens.weight
        self.apply(_init)
        for name, p in self.named_parameters():  # GPT-2's scaled init of residual outputs
            if name.endswith(("out_proj.weight", "mlp.proj.weight")):
                nn.init.normal_(p, 0.0, 0.02 / (2 * cfg.layers) ** 0.5)

    def forward(
        self,
        ids: Tensor,
        *,
        need_weights: bool = False,
        caches: list[KVCache] | None = None,
        use_cache: bool = False,
        sinks: int = 0,
    ) -> GPTOutput:
        """Logits of every position of ``ids (B, T)`` for the next token; positions start
        after the caches' (their :attr:`~KVCache.seen`)."""
        start = 0 if caches is None else caches[0].seen
        x = self.tokens(ids)  # (B, T, D)
        if self.positions is not None:
            if start + ids.size(1) > self.block_size:
                raise ValueError(
                    f"{start + ids.size(1)} positions exceed the learned context of "
                    f"{self.block_size}; crop the input (generation does)"
                )
            where = torch.arange(start, start + ids.size(1), device=ids.device)  # (T,)
            x = x + self.positions(where)  # (B, T, D)
        x = self.dropout(x)
        weights, new = [], []
        for i, block in enumerate(self.blocks):
            cache = None if caches is None else caches[i]
            x, out = block(x, need_weights, cache, use_cache, self.cfg.window, sinks)
            weights.append(out.weights)
            new.append(out.cache)
        logits = self.head(self.ln_f(x))  # (B, T, V)
        return GPTOutput(logits, weights if need_weights else None, new if use_cache else None)

    def parameter_count(self) -> int:
        """Parameters without the learned position table (nanoGPT's count)."""
        n = sum(p.numel() for p in self.parameters())
        return n - (self.positions.weight.numel() if self.positions is not None else 0)


def _dropout(p: float) -> nn.Module:
    """Dropout, or nothing when ``p`` is 0 (no call per layer and step in decoding)."""
    return nn.Dropout(p) if p > 0 else nn.Identity()


def _init(module: nn.Module) -> None:
    """GPT-2's initialisation: normal(0, 0.02) weights, zero biases."""
    if isinstance(module, nn.Linear | nn.Embedding):
        nn.init.normal_(module.weight, 0.0, 0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)
