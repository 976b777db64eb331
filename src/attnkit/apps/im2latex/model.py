"""The im2markup model (Deng et al. 2017): CNN -> row encoder -> attention decoder, as a
:class:`~attnkit.modules.seq2seq.Seq2SeqModel`, so :mod:`attnkit.decoding`'s greedy and beam
search decode it with attention recorded, exactly as they decode translation models.

The "source" is the image: ``src (B, 1, H, W)`` and ``src_mask (B, R * C)`` the grid cells
that cover real pixels (:func:`attnkit.apps.im2latex.images.batch`). Attention comes back as
``{"cross": (B, 1, L)}`` per step, ``L = R * C`` cells row-major, so a decoded formula's
attention strips to its own ``r x c`` grid (:func:`~attnkit.apps.im2latex.images.grid_maps`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import torch.nn.functional as F
from torch import Tensor, nn

from attnkit.apps.im2latex.decoder import FormulaDecoder, FormulaState
from attnkit.apps.im2latex.encoder import FormulaCNN, RowEncoder
from attnkit.apps.im2latex.transformer_decoder import GridDecoderState, GridTransformerDecoder
from attnkit.config import Bounds, Checked, bounded
from attnkit.modules.seq2seq import Memory, ModelOutput, Seq2SeqModel, StepOutput


@dataclass
class FormulaModelConfig(Checked):
    """The model's shape (a CPU-sized version of the paper's; its widths are in brackets)."""

    channels: list[int] = bounded(factory=lambda: [32, 64, 128, 128], ge=1)  # [64..512]
    # max-pool (rows, columns) after each stage; the product is the grid's stride
    pools: list[list[int]] = field(default_factory=lambda: [[2, 2], [2, 2], [2, 1], [1, 2]])
    # images are scaled up this many times (bilinear) before the CNN, so its first stages see
    # small glyphs over more pixels; the grid's stride on the image is the pools' product / it
    upsample: int = bounded(1, ge=1)
    row_encoder: bool = True  # False: attend over the CNN features (the paper's ablation)
    d_row: int = bounded(128, ge=1)  # row-encoder LSTM width per direction [256]; 2 * d_row wide
    max_rows: int = bounded(32, ge=1)  # feature rows with a learned initial state (positions)
    d_embed: int = bounded(64, ge=1)  # target embedding [80]
    d_hidden: int = bounded(256, ge=1)  # decoder LSTM [512]
    d_attention: int = bounded(128, ge=1)  # hidden width of the additive score
    # additive: the paper's score; general: Luong's; coarse_to_fine: additive coarse attention
    # over blocks of cells, then fine attention inside them (Deng et al. 2017, §4)
    attention: Literal["additive", "general", "coarse_to_fine"] = "additive"
    block: list[int] = bounded(factory=lambda: [2, 2], ge=1)  # coarse_to_fine: cells per block
    coarse: Literal["softmax", "sparsemax"] = "sparsemax"  # coarse_to_fine: coarse normaliser
    # lstm: the paper's decoder; transformer: a stack of Transformer decoder layers of width
    # d_hidden over the same grid (attention is then multi-head; ``attention`` is unused)
    decoder: Literal["lstm", "transformer"] = "lstm"
    layers: int = bounded(2, ge=1)  # transformer decoder layers
    heads: int = bounded(4, ge=1)  # transformer attention heads; divides d_hidden
    d_ff: int = bounded(1024, ge=1)  # transformer feed-forward width
    dropout: float = bounded(0.1, ge=0, lt=1)

    def check(self) -> None:
        if not self.channels or len(self.channels) != len(self.pools):
            raise ValueError(
                f"channels ({len(self.channels)}) and pools ({len(self.pools)}) need one "
                "entry per CNN stage"
            )
        if not all(len(p) == 2 and Bounds(ge=1).problem(p) is None for p in self.pools):
            raise ValueError(
                f"pools must each be [rows, columns], both at least 1, got {self.pools}"
            )
        if len(self.block) != 2:
            raise ValueError(f"block must be [rows, columns], got {self.block}")
        pooled = math.prod(p[0] for p in self.pools), math.prod(p[1] for p in self.pools)
        if any(n % self.upsample for n in pooled):
            raise ValueError(
                f"upsample ({self.upsample}) must divide the pools' product {list(pooled)}, "
                "so each grid cell covers whole pixels of the image"
            )
        if self.d_hidden % self.heads:
            raise ValueError(f"heads ({self.heads}) must divide d_hidden ({self.d_hidden})")

    @property
    def stride(self) -> tuple[int, int]:
        """Pixels of the image per grid cell ``(rows, columns)``."""
        rows, cols = math.prod(p[0] for p in self.pools), math.prod(p[1] for p in self.pools)
        return rows // self.upsample, cols // self.upsample


class FormulaReader(Seq2SeqModel):
    """Image in, LaTeX tokens out; see the module docstring."""

    def __init__(self, cfg: FormulaModelConfig, vocab: int, pad_id: int = 0) -> None:
        super().__init__()
        self.config, self.pad_id = cfg, pad_id
        self.cnn = FormulaCNN(cfg.channels, cfg.pools)
        d = self.cnn.out_channels
        if cfg.row_encoder:
            self.rows: nn.Module | None = RowEncoder(d, cfg.d_row, cfg.max_rows)
            d = 2 * cfg.d_row
        else:
            self.rows = None
        if cfg.decoder == "transformer":
            self.decoder: nn.Module = GridTransformerDecoder(
                vocab,
                d,
                d_model=cfg.d_hidden,
                heads=cfg.heads,
                d_ff=cfg.d_ff,
                layers=cfg.layers,
                dropout=cfg.dropout,
                pad_id=pad_id,
            )
        else:
            self.decoder = FormulaDecoder(
                vocab,
                d,
                d_embed=cfg.d_embed,
                d_hidden=cfg.d_hidden,
                d_attention=cfg.d_attention,
                attention=cfg.attention,
                dropout=cfg.dropout,
                pad_id=pad_id,
                block=cfg.block,
                coarse=cfg.coarse,
            )

    def encode(self, src: Tensor, src_mask: Tensor) -> Memory:
        """``src (B, 1, H, W)`` -> annotations ``(B, L, D)`` with ``src_mask (B, L)``."""
        if self.config.upsample > 1:  # (B, 1, H, W) -> (B, 1, u * H, u * W)
            src = F.interpolate(src, scale_factor=self.config.upsample, mode="bilinear")
        features = self.cnn(src)  # (B, C, R, Cc)
        b, _, rows, cols = features.shape
        if self.rows is not None:
            states = self.rows(features)  # (B, R * Cc, D)
        else:
            states = features.flatten(2).transpose(1, 2)  # (B, C, R * Cc) -> (B, R * Cc, C)
        if states.size(1) != src_mask.size(1):
            raise ValueError(
                f"the image gives {states.size(1)} grid cells but the mask has "
                f"{src_mask.size(1)}: batch images with images.batch(images, model.stride)"
            )
        keys = None
        if self.config.decoder == "lstm":  # the key side of the score, once per image
            grid = states.reshape(b, rows, cols, -1), src_mask.view(b, rows, cols)  # (B, R, Cc, D)
            keys = self.decoder.prepare_key(*grid)
        return Memory(states, src_mask, None, keys)

    def init_state(self, memory: Memory) -> FormulaState | GridDecoderState:
        return self.decoder.initial(memory)

    def decode_step(
        self,
        memory: Memory,
        state: FormulaState | GridDecoderState,
        prev: Tensor,
        need_weights: bool = False,
    ) -> StepOutput:
        logits, state, weights = self.decoder.step(memory, state, prev, need_weights)
        attention = {"cross": weights} if need_weights else {}  # (B, 1, L)
        return StepOutput(logits, state, attention)

    def forward(
        self, src: Tensor, src_mask: Tensor, tgt_in: Tensor, need_weights: bool = False
    ) -> ModelOutput:
        """Teacher forcing: ``tgt_in (B, T)`` from BOS -> logits ``(B, T, V)`` (the same
        logits as :meth:`decode_step` step by step), attention ``{"cross": (B, 1, T, L)}``."""
        memory = self.encode(src, src_mask)
        logits, weights = self.decoder.teacher_forced(memory, tgt_in, need_weights)
        return ModelOutput(logits, {"cross": weights} if need_weights else {})

    @property
    def stride(self) -> tuple[int, int]:
        return self.config.stride
