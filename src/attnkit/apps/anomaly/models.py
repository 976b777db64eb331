"""Two attention-based anomaly detectors for (multivariate) time series, built from attnkit's
attention layers. Both read sliding windows ``x (B, W, C)`` and give a Gaussian
``p(x_t | ...)`` for the window's last row ``t``, whose negative log-likelihood is the raw
anomaly score of row ``t`` (computed from rows ``<= t`` only, so detection is causal).

- :class:`AttentionVRAE`: the variational recurrent autoencoder with variational self-attention
  of Pereira & Silveira 2018 ("Unsupervised anomaly detection in energy time series data using
  variational recurrent autoencoders with attention", §III): a bidirectional LSTM encoder,
  a latent ``z ~ N(mu_z, sigma_z)`` from its final states, scaled dot-product self-attention
  over the encoder states whose contexts are made variational, ``c_t ~ N(mu_c, sigma_c)``
  (the variational attention of Bahuleyan et al. 2018), and an LSTM decoder that outputs
  ``mu_x, sigma_x`` per step. Loss: the negative ELBO ``-E[log p(x|z,c)] + KL(z) + eta KL(c)``;
  anomaly score: the reconstruction probability (An & Cho 2015), a Monte Carlo estimate of
  ``-E_{z,c}[log p(x_t | z, c)]``.
- :class:`TransformerForecaster`: a causal Transformer encoder (Vaswani et al. 2017, with
  :class:`attnkit.modules.transformer.TransformerEncoder`) that forecasts ``N(mu, sigma)`` for
  each next row; the score is ``-log p(x_t | x_{t-W..t-1})``.

``forward(x, need_weights)`` returns an :class:`AnomalyOutput`; ``loss(x)`` the training loss;
``score_last(x, samples)`` the raw scores ``(B,)`` and the last row's attention ``(B, W)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnkit.attention import attend, causal_mask
from attnkit.modules.positional import SinusoidalPositionalEncoding
from attnkit.modules.transformer import TransformerEncoder, TransformerEncoderLayer

LOG_2PI = math.log(2 * math.pi)


def gaussian_nll(x: Tensor, mean: Tensor, logvar: Tensor) -> Tensor:
    """``-log N(x; mean, exp(logvar))`` elementwise."""
    return 0.5 * (LOG_2PI + logvar + (x - mean) ** 2 * torch.exp(-logvar))


def kl_standard_normal(mean: Tensor, logvar: Tensor) -> Tensor:
    """``KL(N(mean, exp(logvar)) || N(0, I))`` summed over the last axis (Kingma & Welling 2014,
    App. B)."""
    return -0.5 * torch.sum(1 + logvar - mean**2 - torch.exp(logvar), dim=-1)


@dataclass
class AnomalyOutput:
    """What a detector's forward pass returns.

    Attributes:
        mean, logvar: ``(B, W, C)`` the Gaussian over each row (VRAE: reconstruction of row
            ``j``; forecaster: prediction of row ``j + 1`` from rows ``<= j``).
        kl: ``(B,)`` the KL terms of the VRAE (zero for the forecaster).
        weights: ``(B, W, W)`` attention (query rows, key columns; heads averaged, last layer
            for the forecaster), or ``None`` unless asked for.
    """

    mean: Tensor
    logvar: Tensor
    kl: Tensor
    weights: Tensor | None = None


class AttentionVRAE(nn.Module):
    """Variational recurrent autoencoder with variational self-attention (Pereira & Silveira
    2018, Fig. 2).

    Args:
        channels: C, values per row.
        hidden: LSTM width per direction (encoder states are ``2 * hidden`` wide).
        latent: width of ``z``.
        eta: weight of the attention's KL term relative to the latent's (the paper's eta).
        logvar_min: floor of the decoder's log-variance (keeps the likelihood bounded).
        score_rows: how many of the window's last rows the anomaly score averages (1: the row
            being scored; W: the whole window's reconstruction probability).
    """

    def __init__(
        self,
        channels: int = 1,
        hidden: int = 16,
        latent: int = 4,
        eta: float = 0.01,
        logvar_min: float = -6.0,
        score_rows: int = 1,
    ) -> None:
        super().__init__()
        self.eta, self.logvar_min, self.score_rows = eta, logvar_min, score_rows
        self.encoder = nn.LSTM(channels, hidden, batch_first=True, bidirectional=True)
        d = 2 * hidden
        self.to_z = nn.Linear(d, 2 * latent)  # [mu_z, log sigma_z^2]
        self.to_c = nn.Linear(d, 2 * d)  # [mu_c, log sigma_c^2] from the deterministic context
        self.decoder = nn.LSTM(latent + d, hidden, batch_first=True)
        self.to_x = nn.Linear(hidden, 2 * channels)  # [mu_x, log sigma_x^2]

    def forward(self, x: Tensor, need_weights: bool = False, sample: bool = True) -> AnomalyOutput:
        """Encode and reconstruct ``x (B, W, C)``; ``sample=False`` uses the means of z and c."""
        states, (h_n, _) = self.encoder(x)  # (B, W, 2h); h_n (2, B, h)
        final = torch.cat([h_n[0], h_n[1]], dim=-1)  # (B, 2h) last forward + first backward
        mu_z, logvar_z = self.to_z(final).chunk(2, dim=-1)  # (B, latent) each
        # self-attention over the encoder states: c_t = sum_j a_tj h_j, a = softmax(h h^T / sqrt d)
        att = attend(states, states, states, score="scaled_dot", need_weights=need_weights)
        mu_c, logvar_c = self.to_c(att.context).chunk(2, dim=-1)  # (B, W, 2h) each
        z = _reparameterise(mu_z, logvar_z, sample)  # (B, latent)
        c = _reparameterise(mu_c, logvar_c, sample)  # (B, W, 2h)
        z_steps = z.unsqueeze(1).expand(-1, x.size(1), -1)  # (B, W, latent)
        out, _ = self.decoder(torch.cat([z_steps, c], dim=-1))  # (B, W, h)
        mean, logvar = self.to_x(out).chunk(2, dim=-1)  # (B, W, C) each
        logvar = logvar.clamp(min=self.logvar_min)
        kl = kl_standard_normal(mu_z, logvar_z) + self.eta * kl_standard_normal(mu_c, logvar_c).sum(
            dim=1
        )  # (B,)
        return AnomalyOutput(mean, logvar, kl, att.weights)

    def loss(self, x: Tensor, kl_weight: float = 1.0) -> Tensor:
        """The negative ELBO per window, averaged over the batch (KL annealed by ``kl_weight``)."""
        out = self(x)
        nll = gaussian_nll(x, out.mean, out.logvar).sum(dim=(1, 2))  # (B,)
        return (nll + kl_weight * out.kl).mean()

    @torch.no_grad()
    def score_last(self, x: Tensor, samples: int = 4) -> tuple[Tensor, Tensor]:
        """Reconstruction probability of each window's last ``score_rows`` rows: ``(B,)`` their
        mean NLL over ``samples`` draws of ``z, c`` (the means when ``samples=0``), and the last
        row's attention over the window ``(B, W)``."""
        draws = max(samples, 1)
        total = torch.zeros(x.size(0), device=x.device)
        weights = None
        for _ in range(draws):
            out = self(x, need_weights=weights is None, sample=samples > 0)
            if weights is None:
                weights = out.weights[:, -1, :]  # (B, W): the last row's query
            k = self.score_rows
            nll = gaussian_nll(x[:, -k:], out.mean[:, -k:], out.logvar[:, -k:])  # (B, k, C)
            total += nll.sum(-1).mean(-1)
        return total / draws, weights


def _reparameterise(mean: Tensor, logvar: Tensor, sample: bool) -> Tensor:
    """``mean + sigma * eps`` (Kingma & Welling 2014, eq. (10)); the mean when not sampling."""
    if not sample:
        return mean
    return mean + torch.exp(0.5 * logvar) * torch.randn_like(mean)


class TransformerForecaster(nn.Module):
    """Causal Transformer encoder forecasting each next row as ``N(mu, sigma)``.

    Args:
        channels: C.
        d_model, num_heads, d_ff, num_layers: the encoder's size (pre-LN layers).
        dropout: residual and attention dropout.
        logvar_min: floor of the predicted log-variance.
    """

    def __init__(
        self,
        channels: int = 1,
        d_model: int = 16,
        num_heads: int = 2,
        d_ff: int = 32,
        num_layers: int = 1,
        dropout: float = 0.0,
        logvar_min: float = -6.0,
    ) -> None:
        super().__init__()
        self.logvar_min = logvar_min
        self.embed = nn.Linear(channels, d_model)
        self.positions = SinusoidalPositionalEncoding(d_model)
        layer = TransformerEncoderLayer(d_model, num_heads, d_ff, dropout=dropout, norm_first=True)
        self.encoder = TransformerEncoder.from_layer(layer, num_layers, nn.LayerNorm(d_model))
        self.head = nn.Linear(d_model, 2 * channels)

    def forward(self, x: Tensor, need_weights: bool = False) -> AnomalyOutput:
        """``x (B, W, C)`` -> the Gaussian over rows ``2 .. W + 1`` (row ``j`` sees ``<= j``)."""
        h = self.embed(x) + self.positions(x.size(1))  # (B, W, D)
        mask = causal_mask(x.size(1), device=x.device)  # (W, W), True = may attend
        enc = self.encoder(h, mask, need_weights=need_weights)
        mean, logvar = self.head(enc.last_hidden).chunk(2, dim=-1)  # (B, W, C) each
        weights = enc.attentions[-1].mean(dim=1) if need_weights else None  # (B, W, W)
        return AnomalyOutput(
            mean,
            logvar.clamp(min=self.logvar_min),
            torch.zeros(x.size(0), device=x.device),
            weights,
        )

    def loss(self, x: Tensor, kl_weight: float = 1.0) -> Tensor:
        """Mean NLL of every next row inside the window ``x (B, W, C)``."""
        out = self(x[:, :-1])
        return gaussian_nll(x[:, 1:], out.mean, out.logvar).sum(-1).mean()

    @torch.no_grad()
    def score_last(self, x: Tensor, samples: int = 0) -> tuple[Tensor, Tensor]:
        """``-log p(x_t | rows before it)`` for each window's last row ``(B,)``, and the
        attention of the last input row's query over the window ``(B, W)`` (zero at ``t``,
        which the forecast does not see)."""
        out = self(x[:, :-1], need_weights=True)
        nll = gaussian_nll(x[:, -1], out.mean[:, -1], out.logvar[:, -1]).sum(-1)  # (B,)
        weights = torch.nn.functional.pad(out.weights[:, -1, :], (0, 1))  # (B, W)
        return nll, weights


def build_detector(kind: str, channels: int, **options) -> nn.Module:
    """``"vrae"`` (:class:`AttentionVRAE`) or ``"transformer"`` (:class:`TransformerForecaster`)."""
    if kind == "vrae":
        return AttentionVRAE(channels, **options)
    if kind == "transformer":
        return TransformerForecaster(channels, **options)
    raise ValueError(f"unknown detector {kind!r}; choose 'vrae' or 'transformer'")
