"""Recurrent encoder (Bahdanau et al. 2015 §3.2; Sutskever et al. 2014) with a bridge.

The encoder reads the source left to right (and right to left when bidirectional) and returns
the annotations ``h_j = [h_j^fwd; h_j^bwd]`` the decoder attends to, plus an initial decoder
state computed from the final states (the "bridge", Bahdanau et al. 2015 App. A.2.2:
``s_0 = tanh(W_s h_1^bwd)``; here from both directions' final states).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

CELLS = {"gru": nn.GRU, "lstm": nn.LSTM}


class RNNEncoder(nn.Module):
    """Embedding + (bi)GRU/LSTM over the source.

    Args:
        vocab_size, embed_dim: source vocabulary and embedding width.
        hidden_dim: width H of each direction.
        num_layers, dropout: stacked layers and dropout between them and on embeddings.
        cell: ``"gru"`` or ``"lstm"``.
        bidirectional: annotations are ``2H`` wide when True.
        decoder_dim, decoder_layers: shape of the decoder state the bridge produces; with
            ``bridge=False`` the decoder starts from zeros.
    """

    def __init__(
        self,
        vocab_size: int,
        embed_dim: int,
        hidden_dim: int,
        *,
        num_layers: int = 1,
        dropout: float = 0.0,
        cell: str = "gru",
        bidirectional: bool = True,
        decoder_dim: int | None = None,
        decoder_layers: int = 1,
        bridge: bool = True,
        pad_id: int = 0,
    ) -> None:
        super().__init__()
        if cell not in CELLS:
            raise ValueError(f"unknown cell {cell!r}; choose one of {tuple(CELLS)}")
        self.cell, self.num_layers, self.bidirectional = cell, num_layers, bidirectional
        self.output_dim = hidden_dim * (2 if bidirectional else 1)
        self.decoder_dim, self.decoder_layers = decoder_dim or hidden_dim, decoder_layers
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=pad_id)
        self.dropout = nn.Dropout(dropout)
        self.rnn = CELLS[cell](
            embed_dim,
            hidden_dim,
            num_layers=num_layers,
            batch_first=True,
            bidirectional=bidirectional,
            dropout=dropout if num_layers > 1 else 0.0,
        )
        n_states = 2 if cell == "lstm" else 1
        self.bridge = (
            nn.Linear(self.output_dim, self.decoder_dim * decoder_layers * n_states)
            if bridge
            else None
        )

    def forward(self, src: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor | tuple | None]:
        """``src (B, S)``, ``src_mask (B, S)`` -> annotations ``(B, S, D_enc)`` and the
        initial decoder state ``(B, L_dec, D_dec)`` (a pair ``(h, c)`` for LSTM) or None.
        """
        lengths = src_mask.sum(1).clamp_min(1).cpu()  # (B,)
        x = self.dropout(self.embed(src))  # (B, S, E)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, final = self.rnn(packed)
        states, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
        if self.bridge is None:
            return states, None  # (B, S, D_enc)
        h = final[0] if self.cell == "lstm" else final  # (L * dirs, B, H)
        b = src.size(0)
        last = h.view(self.num_layers, -1, b, h.size(-1))[-1]  # (dirs, B, H) top layer
        summary = last.transpose(0, 1).reshape(b, self.output_dim)  # (B, dirs * H)
        init = torch.tanh(self.bridge(summary))  # (B, L_dec * D_dec * n_states)
        init = init.view(b, -1, self.decoder_layers, self.decoder_dim)  # (B, n, L_dec, D_dec)
        if self.cell == "lstm":
            return states, (init[:, 0], init[:, 1])  # (h, c), each (B, L_dec, D_dec)
        return states, init[:, 0]  # (B, L_dec, D_dec)
