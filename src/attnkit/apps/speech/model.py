"""Listen, Attend and Spell (Chan, Jaitly, Le & Vinyals 2016) with a CTC head, as a
:class:`~attnkit.modules.seq2seq.Seq2SeqModel`, so :mod:`attnkit.decoding`'s greedy and beam
search decode it with attention recorded.

- **Listen**: :class:`~attnkit.apps.speech.listener.PyramidalListener`, frames ``(B, T, F)``
  -> annotations ``h (B, T', D)``, ``T' = T // 2^p``.
- **Attend and spell**: :class:`~attnkit.apps.speech.speller.Speller`, with location-aware
  (Chorowski et al. 2015) or content-only (additive) attention.
- **CTC** (Graves et al. 2006): a linear layer on ``h`` to the vocabulary whose padding slot
  is the blank (padding is never a target), ``log y^t (B, T', V)``; :func:`joint_loss` mixes
  it with the attention loss (Watanabe et al. 2017, eq. (5)).

**The source mask is at the listener's resolution**, as im2latex's is over grid cells:
``src (B, T, F)`` frames with ``src_mask (B, T // 2^p)`` True at the real annotations
(:meth:`SpeechModel.source_mask` builds it from frame counts). The listener reads the first
``2^p`` times as many frames of each utterance (the rest, fewer than ``2^p``, it drops in any
case), so the mask says all it needs; and decoding's step limits and its stripping of
recorded attention read ``src_mask`` as the positions attended.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from torch import Tensor, nn

from attnkit.apps.speech.listener import PyramidalListener, listener_mask
from attnkit.apps.speech.speller import Speller, SpellerState
from attnkit.config import Checked, bounded
from attnkit.modules.seq2seq import Memory, ModelOutput, Seq2SeqModel, StepOutput


@dataclass
class SpeechModelConfig(Checked):
    """The model's shape (the paper's widths in brackets: a CPU-sized LAS)."""

    n_features: int = bounded(40, ge=1)  # frame width: 40 log-mel bands, 13 for AN4's MFCCs
    d_listener: int = bounded(128, ge=1)  # listener LSTM width per direction [256]
    pyramid: int = bounded(3, ge=0)  # pyramid layers, time shrinks 2^pyramid times [3]
    # both directions [LAS]; false: a forward-only listener, blind to what follows
    bidirectional: bool = True
    d_embed: int = bounded(64, ge=1)  # output-token embedding
    d_decoder: int = bounded(256, ge=1)  # speller LSTM width [512]
    decoder_layers: int = bounded(1, ge=1)  # speller LSTM layers [2]
    d_attention: int = bounded(128, ge=1)  # hidden width of the additive score
    # location: Chorowski et al. 2015's location-aware score; content: additive only
    attention: Literal["location", "content"] = "location"
    conv_channels: int = bounded(10, ge=1)  # location filters k (Chorowski: 10)
    conv_width: int = bounded(15, ge=1)  # their width r over annotations, odd
    dropout: float = bounded(0.1, ge=0, lt=1)
    # lambda of lambda * L_ctc + (1 - lambda) * L_att (Watanabe et al. 2017, eq. (5)):
    # 0 attention only (no CTC head), 1 CTC only (no speller), between: joint training
    ctc_weight: float = bounded(0.0, ge=0, le=1)

    def check(self) -> None:
        if self.conv_width % 2 == 0:
            raise ValueError(
                f"conv_width must be odd (a filter centred on each annotation), got "
                f"{self.conv_width}"
            )


def joint_loss(ctc: Tensor, attention: Tensor, ctc_weight: float) -> Tensor:
    """``lambda L_ctc + (1 - lambda) L_att`` (Watanabe et al. 2017, eq. (5)); a term whose
    weight is 0 is left out, so it may be None."""
    if ctc_weight == 0:
        return attention
    if ctc_weight == 1:
        return ctc
    return ctc_weight * ctc + (1 - ctc_weight) * attention


class SpeechModel(Seq2SeqModel):
    """Frames in, tokens out; see the module docstring. ``vocab``: output tokens including
    pad (the CTC blank), BOS and EOS."""

    def __init__(self, cfg: SpeechModelConfig, vocab: int, pad_id: int = 0) -> None:
        super().__init__()
        self.config, self.pad_id = cfg, pad_id
        self.listener = PyramidalListener(
            cfg.n_features, cfg.d_listener, cfg.pyramid, cfg.dropout, cfg.bidirectional
        )
        d = self.listener.d_out
        self.ctc: nn.Linear | None = nn.Linear(d, vocab) if cfg.ctc_weight > 0 else None
        self.speller: Speller | None = None
        if cfg.ctc_weight < 1:
            self.speller = Speller(
                vocab,
                d,
                d_embed=cfg.d_embed,
                d_hidden=cfg.d_decoder,
                layers=cfg.decoder_layers,
                d_attention=cfg.d_attention,
                attention=cfg.attention,
                conv_channels=cfg.conv_channels,
                conv_width=cfg.conv_width,
                dropout=cfg.dropout,
                pad_id=pad_id,
            )

    @property
    def blank(self) -> int:
        """The CTC blank's index: the padding token's."""
        return self.pad_id

    @property
    def reduction(self) -> int:
        """Input frames per annotation, ``2^p``."""
        return self.listener.reduction

    def source_mask(self, lengths: Tensor, frames: int) -> Tensor:
        """``(B, frames // 2^p)``, the ``src_mask`` of utterances of ``lengths (B,)`` frames
        padded to ``frames``."""
        return listener_mask(lengths, frames, self.config.pyramid)

    def encode(self, src: Tensor, src_mask: Tensor) -> Memory:
        """``src (B, T, F)``, ``src_mask (B, T // 2^p)`` -> annotations ``(B, T', D)``."""
        if src_mask.size(1) != src.size(1) // self.reduction:
            raise ValueError(
                f"src_mask has {src_mask.size(1)} positions but {src.size(1)} frames give "
                f"{src.size(1) // self.reduction} annotations: build it with "
                "model.source_mask(lengths, frames)"
            )
        lengths = src_mask.sum(1) * self.reduction  # (B,) frames the listener reads
        states, mask = self.listener(src, lengths)  # (B, T'', D), T'' = the longest's T'
        if states.size(1) < src_mask.size(1):  # the batch was padded beyond its longest
            states = nn.functional.pad(states, (0, 0, 0, src_mask.size(1) - states.size(1)))
        keys = None if self.speller is None else self.speller.prepare_key(states)
        return Memory(states, src_mask, None, keys)

    def init_state(self, memory: Memory) -> SpellerState:
        return self._spell().initial(memory)

    def decode_step(
        self, memory: Memory, state: SpellerState, prev: Tensor, need_weights: bool = False
    ) -> StepOutput:
        logits, state = self._spell().step(memory, state, prev)
        attention = {"cross": state.weights.unsqueeze(1)} if need_weights else {}  # (B, 1, T')
        return StepOutput(logits, state, attention)

    def forward(
        self, src: Tensor, src_mask: Tensor, tgt_in: Tensor, need_weights: bool = False
    ) -> ModelOutput:
        """Teacher forcing: ``tgt_in (B, T)`` from BOS -> logits ``(B, T, V)`` (those of
        :meth:`decode_step` step by step), attention ``{"cross": (B, 1, T, T')}``."""
        memory = self.encode(src, src_mask)
        logits, weights = self._spell().teacher_forced(memory, tgt_in)
        return ModelOutput(logits, {"cross": weights} if need_weights else {})

    def ctc_log_probs(self, memory: Memory) -> tuple[Tensor, Tensor]:
        """CTC's ``log y^t_k`` ``(B, T', V)`` (blank = :attr:`blank`) and the annotations per
        utterance ``(B,)``: ``torch.nn.CTCLoss`` takes ``log_probs.transpose(0, 1)``."""
        if self.ctc is None:
            raise ValueError("this model has no CTC head: set model.ctc_weight above 0")
        return self.ctc(memory.states).log_softmax(-1), memory.mask.sum(1)  # (B, T', V), (B,)

    def _spell(self) -> Speller:
        if self.speller is None:
            raise ValueError(
                "a CTC-only model (ctc_weight 1) has no speller: decode it with "
                "attnkit.decoding.ctc on model.ctc_log_probs(model.encode(src, src_mask))"
            )
        return self.speller
