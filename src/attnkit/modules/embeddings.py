"""The Embed step of a Transformer: tokens -> scaled embeddings + positions -> dropout.

Vaswani et al. 2017, §3.4: "In the embedding layers, we multiply those weights by
sqrt(d_model)"; §3.5: the positional encodings are summed with the embeddings; §5.4: dropout
on the sums. The token table starts as ``N(0, D^-1/2)``, so the scaled embedding has unit
scale, like the sinusoids, and a tied output projection gives logits of unit scale.
"""

from __future__ import annotations

import math

from torch import Tensor, nn

from attnkit.modules.positional import build_positional


class TransformerEmbedding(nn.Module):
    """``dropout(sqrt(D) * E[tokens] + PE(positions))``.

    Args:
        vocab_size: V.
        d_model: width D.
        positional: ``"sinusoidal"`` (Vaswani et al. 2017 §3.5), ``"learned"``, or ``"none"``
            (no absolute positions: for relative schemes in the attention).
        max_len: positions a learned table holds.
        dropout: on the sum (Vaswani et al. 2017 §5.4).
        pad_id: its embedding is zero and gets no gradient.
        scale: multiply by ``sqrt(D)`` (§3.4).

    ``token`` is the ``nn.Embedding`` ``(V, D)``, for tying and sharing.
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int,
        *,
        positional: str = "sinusoidal",
        max_len: int = 512,
        dropout: float = 0.1,
        pad_id: int | None = 0,
        scale: bool = True,
    ) -> None:
        super().__init__()
        self.d_model = d_model
        self.token = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        nn.init.normal_(self.token.weight, std=d_model**-0.5)
        if pad_id is not None:
            nn.init.zeros_(self.token.weight[pad_id])
        self.scale = math.sqrt(d_model) if scale else 1.0
        self.position = build_positional(positional, d_model, max_len)
        self.dropout = nn.Dropout(dropout)

    def forward(self, tokens: Tensor, offset: int | Tensor = 0) -> Tensor:
        """Embed ``tokens (B, T)`` at positions ``offset .. offset + T - 1``.

        Args:
            offset: int, or ``(B,)`` per-row start positions (the step when decoding with a
                key/value cache).

        Returns:
            ``(B, T, D)``.
        """
        x = self.token(tokens) * self.scale  # (B, T, D)
        if self.position is not None:
            x = x + self.position(tokens.size(1), offset).to(x.dtype)  # (B|1, T, D) broadcast
        return self.dropout(x)
