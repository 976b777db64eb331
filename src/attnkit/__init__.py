"""attnkit: attention in deep learning, every classic mechanism in one verified PyTorch API.

The package follows the flow Embed -> Encode -> Attend -> Predict. The attention step lives in
:mod:`attnkit.attention`; its core is :func:`attnkit.attention.attend`.
"""

__version__ = "0.1.0"
