"""Eager attention for the length of a call: Hugging Face's fused kernels return no weights.

transformers runs ``attn_implementation="sdpa"`` (or flash / flex) by default; those kernels
never form the weight matrix, so ``output_attentions=True`` yields ``attentions=()`` (or
``None``). :func:`eager_attention` switches a model to the ``"eager"`` implementation (the
readable ``softmax(QK^T / sqrt(d)) V``, which returns the weights) and restores the previous
one afterwards, so the caller's model is left as it was. It never imports transformers: it
works on the model object it is given.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

EAGER = "eager"


class NoWeightsError(ValueError):
    """The model cannot return attention weights (one line says why and what to do)."""


def implementation(model) -> str | None:
    """The model's attention implementation (``"eager"``, ``"sdpa"``, ...), or ``None`` when
    the model does not say (not a transformers model, or an old version)."""
    config = getattr(model, "config", None)
    return getattr(config, "_attn_implementation", None)


def _switch(model, name: str) -> None:
    setter = getattr(model, "set_attn_implementation", None)
    if callable(setter):
        setter(name)  # transformers >= 4.48: also switches the sub-models' configs
    else:
        model.config._attn_implementation = name


@contextmanager
def evaluating(model) -> Iterator[object]:
    """Eval mode (dropout off) for the length of the block; the previous mode is restored."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


@contextmanager
def eager_attention(model) -> Iterator[object]:
    """``with eager_attention(model):`` runs ``model`` with eager attention and restores its
    implementation on exit (even on error). A model that is already eager, or that does not
    name its implementation, is left alone. Raises :class:`NoWeightsError` when the model
    refuses eager attention."""
    before = implementation(model)
    if before is None or before == EAGER:
        yield model
        return
    try:
        _switch(model, EAGER)
    except Exception as err:  # noqa: BLE001 - transformers raises ValueError or ImportError
        raise NoWeightsError(
            f"{type(model).__name__} runs {before!r} attention, which returns no weights, and "
            f"refused to switch to eager attention ({err}); load it with "
            'attn_implementation="eager"'
        ) from err
    try:
        yield model
    finally:
        _switch(model, before)
