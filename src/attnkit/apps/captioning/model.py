"""Show, Attend and Tell (Xu et al. 2015): a CNN feature grid and an LSTM that attends over it.

- :class:`GridEncoder`: a small CNN giving ``L = grid x grid`` annotation vectors
  ``a_i in R^D`` (Xu et al. §3.1.1), plus a learned embedding of each location.
- :class:`Captioner`: the LSTM decoder of §3.1.2 with one of three context models:

  ``soft``  deterministic soft attention, ``z_t = beta_t sum_i alpha_ti a_i`` (§4.2, eq. (13)),
            with the gating scalar ``beta_t = sigmoid(f_beta(h_{t-1}))`` (§4.2.1);
  ``hard``  stochastic hard attention, ``s_t ~ Multinoulli(alpha_t)``, ``z_t = a_{s_t}``
            (§4.1, eqs. (8)-(9)), trained by REINFORCE (see :mod:`.losses`);
  ``gumbel`` the same hard choice, trained through a straight-through Gumbel-softmax
            relaxation (Jang et al. 2017) whose temperature the task anneals
            (:mod:`.context`);
  ``none``  no attention: the decoder sees the image only through its initial state, predicted
            from the mean annotation vector (the Show and Tell style baseline).

  The attention weights come from attnkit's :class:`AdditiveAttention`
  (``e_ti = f_att(a_i, h_{t-1})``, eq. (4)-(5)); hard attention samples from the same scores
  with the ``sample`` normaliser. The output layer is the deep output of eq. (7),
  ``p(y_t) ∝ exp(L_o(E y_{t-1} + L_h h_t + L_z z_t))``.

  ``feed_context=True`` also feeds ``z_t`` into the LSTM with ``E y_{t-1}`` (eq. (1)), as in
  the paper. The LSTM can then read an object while saying "a" and name it from memory two
  words later, so its attention at the noun need not be on the object (seen on small scenes);
  ``feed_context=False`` gives ``z_t`` to the deep output only, so the word that names an
  object must be read from it (better on 16x16 scenes, worse on 32x32 ones: docs/captioning.md).

Shapes: images ``(B, 3, S, S)``, tokens ``(B, T)``, annotations ``(B, L, D)``, attention
``(B, T, L)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn

from attnkit.apps.captioning.context import context
from attnkit.attention import AdditiveAttention
from attnkit.config import Checked, bounded

Mode = Literal["soft", "hard", "gumbel", "none"]


@dataclass
class CaptionerConfig(Checked):
    """The model's shape. ``canvas`` must be ``grid * 2**k`` for some ``k >= 0``."""

    attention: Mode = "soft"  # soft (§4.2), hard (§4.1), gumbel (relaxed hard) or none
    canvas: int = bounded(32, ge=1)  # input image side in pixels
    grid: int = bounded(8, ge=1)  # feature grid side: L = grid * grid annotation vectors
    d_feature: int = bounded(64, ge=1)  # D, the annotation vector width
    d_embed: int = bounded(32, ge=1)  # m, the word embedding width
    d_hidden: int = bounded(128, ge=1)  # n, the LSTM width
    d_attention: int = bounded(64, ge=1)  # width of the additive score's hidden layer
    gate: bool = True  # the gating scalar beta_t (§4.2.1); False: beta_t = 1
    # z_t into the LSTM (Xu et al. eq. (1)) and the deep output; False: into the deep output
    # only, so the decoder cannot read an object ahead of the word that names it
    feed_context: bool = True
    dropout: float = bounded(0.0, ge=0, lt=1)  # on the deep output's input
    # hard, training only: per image, the probability of taking the expected context
    # sum_i alpha_ti a_i (the soft one) instead of a sampled a_{s_t}; Xu et al. §4.1 use 0.5
    # "to further improve the robustness of this learning rule". 0: always sample.
    hard_expectation: float = bounded(0.0, ge=0, le=1)

    def check(self) -> None:
        ratio, rest = divmod(self.canvas, self.grid)
        if rest or ratio & (ratio - 1):  # canvas is positive: no rest, a ratio of 1 or more
            raise ValueError(
                f"canvas {self.canvas} must be grid {self.grid} times a power of two; "
                "change model.grid or model.canvas"
            )


@dataclass
class DecoderOutput:
    """What a teacher-forced or greedy pass returns (``T`` decoder steps, ``L`` locations).

    ``logits (B, T, V)``; ``alpha (B, T, L)`` the attention distribution (zeros for ``none``);
    ``beta (B, T)`` the gate; ``log_prob (B, T)`` log p of the sampled location (hard, training);
    ``entropy (B, T)`` of ``alpha``; ``tokens (B, T)`` the emitted words (greedy only);
    ``sampled (B,)`` bool, hard with ``hard_expectation``: the images whose locations were
    sampled this pass (the others took the expected context); ``value (B,)`` the learned
    baseline's predicted reward (``value_head`` only).
    """

    logits: Tensor
    alpha: Tensor
    beta: Tensor
    log_prob: Tensor | None = None
    entropy: Tensor | None = None
    tokens: Tensor | None = None
    sampled: Tensor | None = None
    value: Tensor | None = None


class GridEncoder(nn.Module):
    """A small CNN: ``(B, 3, S, S)`` -> ``(B, L, D)`` annotation vectors, ``L = grid**2``.

    ``log2(S / grid)`` stride-2 convolutions (4x4 on the pixels, then 3x3) and a 3x3
    convolution at grid resolution, then a learned embedding per location (so that a
    context vector carries where it was taken from, which the spatial relations need).
    """

    def __init__(self, cfg: CaptionerConfig):
        super().__init__()
        layers: list[nn.Module] = []
        size, width = cfg.canvas, 3
        while size > cfg.grid:  # stride-2 convolutions down to the grid
            out = 32 if width == 3 else 64
            layers += [nn.Conv2d(width, out, 4 if width == 3 else 3, 2, 1), nn.BatchNorm2d(out)]
            layers.append(nn.ReLU())
            width, size = out, size // 2
        layers += [nn.Conv2d(width, cfg.d_feature, 3, padding=1), nn.ReLU()]
        self.cnn = nn.Sequential(*layers)
        self.position = nn.Parameter(torch.randn(cfg.grid * cfg.grid, cfg.d_feature) * 0.1)

    def forward(self, images: Tensor) -> Tensor:
        features = self.cnn(images)  # (B, D, G, G)
        annotations = features.flatten(2).transpose(1, 2)  # (B, L, D), row-major locations
        return annotations + self.position


class Captioner(nn.Module):
    """Encoder + attention LSTM decoder (Xu et al. 2015 §3); see the module docstring."""

    def __init__(
        self, cfg: CaptionerConfig, vocab_size: int, pad_id: int = 0, value_head: bool = False
    ):
        super().__init__()
        self.cfg, self.pad_id = cfg, pad_id
        self.tau = 1.0  # the Gumbel-softmax temperature (gumbel), set by the task as it anneals
        d, n, m = cfg.d_feature, cfg.d_hidden, cfg.d_embed
        self.encoder = GridEncoder(cfg)
        self.embed = nn.Embedding(vocab_size, m, padding_idx=pad_id)
        self.init_h, self.init_c = nn.Linear(d, n), nn.Linear(d, n)  # f_init,h / f_init,c
        context = d if cfg.attention != "none" and cfg.feed_context else 0
        self.lstm = nn.LSTMCell(m + context, n)
        if cfg.attention != "none":
            self.attention = AdditiveAttention(n, d, cfg.d_attention)  # f_att, eq. (4)
            self.f_beta = nn.Linear(n, 1) if cfg.gate else None
            self.L_z = nn.Linear(d, m, bias=False)
        self.L_h = nn.Linear(n, m)
        self.L_o = nn.Linear(m, vocab_size)
        self.drop = nn.Dropout(cfg.dropout)
        # a learned REINFORCE baseline: the reward predicted from the (detached) mean annotation
        self.value = nn.Linear(d, 1) if value_head else None

    def init_state(self, annotations: Tensor) -> tuple[Tensor, Tensor]:
        """``h_0, c_0`` from the mean annotation vector through two layers (§3.1.2)."""
        mean = annotations.mean(dim=1)  # (B, D)
        return torch.tanh(self.init_h(mean)), torch.tanh(self.init_c(mean))

    def step(
        self,
        word: Tensor,
        state,
        annotations: Tensor,
        prepared,
        sample: bool,
        expect: Tensor | None = None,
    ):
        """One decoder step from the previous word ``(B,)``; returns logits and the rest."""
        h, c = state
        e = self.embed(word)  # (B, m)  E y_{t-1}
        z, alpha, beta, log_prob, entropy = context(
            self, h, annotations, prepared, sample, expect, self.tau
        )
        fed = z is not None and self.cfg.feed_context
        h, c = self.lstm(torch.cat([e, z], dim=-1) if fed else e, (h, c))
        deep = e + self.L_h(h) + (self.L_z(z) if z is not None else 0.0)  # eq. (7)
        logits = self.L_o(self.drop(deep))  # (B, V)
        return logits, (h, c), (alpha, beta, log_prob, entropy)

    def _prepare(self, images: Tensor):
        annotations = self.encoder(images)  # (B, L, D)
        prepared = self.attention.prepare_key(annotations) if self.cfg.attention != "none" else None
        return annotations, prepared, self.init_state(annotations)

    def forward(self, images: Tensor, tokens: Tensor) -> DecoderOutput:
        """Teacher forcing: ``tokens (B, T+1)`` starting with BOS; predicts ``tokens[:, 1:]``.

        Hard attention samples its locations when the module is in training mode; with
        ``hard_expectation = p``, each image instead takes the expected context at every step
        with probability ``p`` (drawn once per image and pass, Xu et al. §4.1).
        """
        annotations, prepared, state = self._prepare(images)
        expect = None
        if self.training and self.cfg.attention == "hard" and self.cfg.hard_expectation > 0:
            expect = torch.rand(images.size(0), device=images.device) < self.cfg.hard_expectation
        steps = []
        for t in range(tokens.size(1) - 1):
            logits, state, extra = self.step(
                tokens[:, t], state, annotations, prepared, self.training, expect
            )
            steps.append((logits, *extra))
        out = _stack(steps)
        out.sampled = None if expect is None else ~expect
        if self.value is not None:
            out.value = self.value(annotations.mean(dim=1).detach()).squeeze(-1)  # (B,)
        return out

    @torch.no_grad()
    def greedy(self, images: Tensor, bos_id: int, eos_id: int, max_len: int = 20) -> DecoderOutput:
        """Greedy decoding; ``tokens (B, T)`` end with EOS (then padding), and ``alpha``
        holds the attention map used for each emitted word (hard: the argmax location's
        distribution). Stops when every caption has emitted EOS or after ``max_len`` words."""
        annotations, prepared, state = self._prepare(images)
        word = torch.full((images.size(0),), bos_id, dtype=torch.long, device=images.device)
        done = torch.zeros_like(word, dtype=torch.bool)
        steps, words = [], []
        for _ in range(max_len):
            logits, state, extra = self.step(word, state, annotations, prepared, False)
            word = logits.argmax(-1).masked_fill(done, self.pad_id)  # (B,)
            steps.append((logits, *extra))
            words.append(word)
            done = done | (word == eos_id)
            if done.all():
                break
        out = _stack(steps)
        out.tokens = torch.stack(words, dim=1)  # (B, T)
        return out


def _stack(steps) -> DecoderOutput:
    logits, alpha, beta, log_prob, entropy = zip(*steps, strict=True)
    return DecoderOutput(
        torch.stack(logits, 1),  # (B, T, V)
        torch.stack(alpha, 1),  # (B, T, L)
        torch.stack(beta, 1),  # (B, T)
        torch.stack(log_prob, 1) if log_prob[0] is not None else None,  # (B, T)
        torch.stack(entropy, 1),  # (B, T)
    )
