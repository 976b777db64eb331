"""Reusable building blocks (Encode step): Transformer encoder layers and stacks.

- :class:`TransformerEncoderLayer`, :class:`TransformerEncoder` (Vaswani et al. 2017, §3.1),
  returning :class:`EncoderLayerOutput` / :class:`EncoderOutput`.
"""

from attnkit.modules.transformer import (
    EncoderLayerOutput,
    EncoderOutput,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = [
    "EncoderLayerOutput",
    "EncoderOutput",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]
