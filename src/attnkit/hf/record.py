"""A Hugging Face model's attention as the core's records: :func:`record`.

One :class:`~attnkit.interpret.structure.AttentionRecord` per example, the record every view,
heatmap, rollout, flow, alignment scorer and faithfulness measure of attnkit takes:

- encoder-only and decoder-only models (BERT, MiniLM, GPT-2, Llama): stack ``"self"``;
- encoder-decoder models (T5, Marian, BART): ``"encoder"``, ``"self"`` (the decoder's) and
  ``"cross"`` (decoder rows over source columns);
- ViT-style image models (``pixel_values``): ``"self"``, labelled ``[CLS]`` (and further
  prefix tokens) then ``row,column`` of each patch.

The call runs the model once with ``output_attentions=True`` under eager attention
(:func:`~attnkit.hf.eager.eager_attention`; transformers' default ``sdpa`` returns no weights)
and restores the model's implementation. Padding is stripped with ``attention_mask`` (left or
right), so a padded batch gives the records of its examples one at a time. Labels come from
the tokenizer; ``words=True`` merges sub-words into words (:mod:`attnkit.hf.words`).
``generate()`` outputs go through :mod:`attnkit.hf.generate`.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import Tensor

from attnkit.hf.eager import NoWeightsError, eager_attention, evaluating
from attnkit.hf.words import encoding_word_ids, marker_word_ids, merge_weights, word_labels
from attnkit.interpret.structure import HF_STACKS, AttentionRecord

# which positions index the rows and the columns of each stack: "in" (encoder/only tokens)
# or "out" (decoder tokens)
AXES = {"self": ("in", "in"), "encoder": ("in", "in"), "cross": ("out", "in")}
DECODER_AXES = {"self": ("out", "fed"), "encoder": ("in", "in"), "cross": ("out", "in")}
# "fed": the decoder's inputs (keys of its self-attention); "out": the tokens its rows output


def hf_stacks(output) -> dict[str, tuple[Tensor, ...]]:
    """``{our stack: L tensors (B, H, Tq, Tk)}`` of a model output (empty stacks left out)."""
    return {
        ours: tuple(getattr(output, theirs))
        for theirs, ours in HF_STACKS.items()
        if getattr(output, theirs, None)
    }


def _check_inputs(batch) -> dict:
    if not isinstance(batch, Mapping):
        raise TypeError(
            "batch must be the model's inputs (a dict or BatchEncoding with input_ids and "
            "attention_mask, or pixel_values) or what generate() returned with "
            f"return_dict_in_generate=True; got {type(batch).__name__}"
        )
    inputs = dict(batch)
    if not any(k in inputs for k in ("input_ids", "inputs_embeds", "pixel_values")):
        raise ValueError(f"batch has no input_ids or pixel_values; its keys: {sorted(inputs)}")
    for key, value in inputs.items():
        if key.endswith("_ids") and isinstance(value, Tensor) and value.dim() == 1:
            raise ValueError(f"{key} must be batched (B, T); got one dimension: add [None]")
    return inputs


def run_eager(model, inputs: Mapping) -> object:
    """``model(**inputs, output_attentions=True)`` under eager attention, in eval mode and
    without gradients (the model's implementation and mode restored afterwards)."""
    with eager_attention(model), evaluating(model), torch.no_grad():
        output = model(**inputs, output_attentions=True, return_dict=True)
    if not hf_stacks(output):
        raise NoWeightsError(
            f"{type(model).__name__} returned no attentions even under eager attention"
        )
    return output


def _keep(mask: Tensor | None, b: int, length: int) -> Tensor:
    """Positions of example ``b`` that are not padding."""
    if mask is None:
        return torch.arange(length)
    if mask.shape[-1] != length:
        raise ValueError(
            f"attention_mask has {mask.shape[-1]} positions but the attention has {length}"
        )
    return mask[b].nonzero().flatten()


def _select(w: Tensor, rows: Tensor, cols: Tensor) -> Tensor:
    w = w.detach().to("cpu", torch.float32)  # (H, Tq, Tk)
    return w.index_select(-2, rows).index_select(-1, cols)


def image_labels(n_tokens: int, config) -> list[str]:
    """``[CLS]`` (and further prefix tokens) then ``row,column`` of each patch."""
    size, patch = getattr(config, "image_size", None), getattr(config, "patch_size", None)
    side = size // patch if isinstance(size, int) and isinstance(patch, int) else None
    prefix = n_tokens - side * side if side and n_tokens >= side * side else None
    if prefix is None:
        return [str(i) for i in range(n_tokens)]
    heads = ["[CLS]", "[DIST]"] + [f"[REG{i}]" for i in range(prefix)]
    return heads[:prefix] + [f"{i // side},{i % side}" for i in range(side * side)]


def example_record(stacks, keep: dict[str, Tensor], b: int, labels, decoder: bool):
    """Example ``b`` of ``stacks`` with rows/columns ``keep["in"|"out"]``, labelled."""
    axes = DECODER_AXES if decoder else AXES
    out, named = {}, {}
    for name, layers in stacks.items():
        rows, cols = (keep[a] for a in axes[name])
        out[name] = [_select(w[b], rows, cols) for w in layers]  # L x (H, Tq, Tk)
        if labels is not None and all(a in labels for a in axes[name]):
            named[name] = tuple(list(labels[a]) for a in axes[name])
    return AttentionRecord(out, named)


def merge_words(rec: AttentionRecord, word_ids: dict, texts: dict, decoder: bool):
    """``rec`` with each stack merged to words (``word_ids[axis]``, ``texts[axis]``)."""
    axes = DECODER_AXES if decoder else AXES
    stacks, labels = {}, {}
    for name, layers in rec.stacks.items():
        rows, cols = (word_ids[a] for a in axes[name])
        stacks[name] = [merge_weights(w, rows, cols) for w in layers]  # (H, Wq, Wk)
        labels[name] = tuple(list(texts[a]) for a in axes[name])
    return AttentionRecord(stacks, labels)


def _tokens(tokenizer, ids: Tensor) -> list[str]:
    return list(tokenizer.convert_ids_to_tokens(ids.tolist()))


def _word_ids(batch, b: int, keep: Tensor, tokens, tokenizer) -> list[int]:
    getter = getattr(batch, "word_ids", None)
    if callable(getter) and getattr(batch, "is_fast", False):
        full = getter(b)
        return encoding_word_ids([full[i] for i in keep.tolist()])
    return marker_word_ids(tokens, tokenizer)


def _text_axes(batch, inputs, b, keep, tokenizer, words):
    """Labels (and word ids) of the input axis ``"in"`` and the decoder axis ``"out"``."""
    labels, ids = {}, {}
    for axis, key in (("in", "input_ids"), ("out", "decoder_input_ids")):
        if axis not in keep or key not in inputs:
            continue
        tokens = _tokens(tokenizer, inputs[key][b].index_select(0, keep[axis]))
        labels[axis] = tokens
        if words:
            enc = batch if axis == "in" else None
            ids[axis] = _word_ids(enc, b, keep[axis], tokens, tokenizer)
    for found in (labels, ids):
        if "out" in found:
            found["fed"] = found["out"]  # a forward pass: rows are labelled by what was fed
    return labels, ids


def record(model, batch, *, tokenizer=None, words: bool = False, inputs=None):
    """The attention of every example of ``batch`` as one labelled record each.

    ``batch``: the model's inputs (a dict or ``BatchEncoding`` with ``input_ids`` and
    ``attention_mask``, for an encoder-decoder also ``decoder_input_ids``; or ``pixel_values``)
    or the output of ``generate(..., output_attentions=True, return_dict_in_generate=True)``
    (then ``inputs`` are the inputs given to ``generate``: their ``attention_mask`` strips a
    padded prompt, their ``input_ids`` label an encoder's source). ``tokenizer``
    labels tokens (else positions); ``words=True`` merges sub-words into words (needs the
    tokenizer). Returns a list of :class:`~attnkit.interpret.structure.AttentionRecord`.
    """
    if words and tokenizer is None:
        raise ValueError("words=True needs the tokenizer= that made the input")
    if hasattr(batch, "sequences"):
        from attnkit.hf.generate import generated_records

        return generated_records(model, batch, tokenizer, words, inputs)
    inputs = _check_inputs(batch)
    output = run_eager(model, inputs)
    stacks = hf_stacks(output)
    decoder = "cross" in stacks or "encoder" in stacks
    lengths = {"in": stacks.get("encoder", stacks.get("self"))[0].shape[-1]}
    if decoder:
        lengths["out"] = stacks["self"][0].shape[-1]
    masks = {"in": inputs.get("attention_mask"), "out": inputs.get("decoder_attention_mask")}
    records = []
    for b in range(next(iter(stacks.values()))[0].shape[0]):
        keep = {a: _keep(masks[a], b, n) for a, n in lengths.items()}
        if decoder:
            keep["fed"] = keep["out"]
        labels = ids = None
        if "pixel_values" in inputs and "input_ids" not in inputs:
            labels = {"in": image_labels(lengths["in"], model.config)}
        elif tokenizer is not None:
            labels, ids = _text_axes(batch, inputs, b, keep, tokenizer, words)
        rec = example_record(stacks, keep, b, labels, decoder)
        if words:
            missing = sorted({a for axes in DECODER_AXES.values() for a in axes} & set(keep))
            if any(a not in ids for a in missing):
                raise ValueError("words=True needs input_ids (and decoder_input_ids) to merge")
            texts = {a: word_labels(labels[a], ids[a], tokenizer) for a in ids}
            rec = merge_words(rec, ids, texts, decoder)
        records.append(rec)
    return records
