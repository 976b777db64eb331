"""``generate()`` outputs as records: the per-step attentions stitched into one matrix per
sequence.

``generate(..., output_attentions=True, return_dict_in_generate=True)`` returns, for each
generation step ``t``, one tensor ``(N', H, q_t, k_t)`` per layer: the first step holds the
prompt (``q_0 = P`` rows; for an encoder-decoder the start token), each later step one row
over the ``k_t`` positions seen so far (the KV cache). Stitching puts row ``t`` of sequence
``n`` under the rows before it, zero to the right of ``k_t`` (causal), so the record equals
the eager forward of the whole sequence, teacher-forced (tested to 1e-5).

- greedy and sampling: row ``n`` of every step belongs to sequence ``n``;
- beam search: sequence ``n``'s token ``t`` was chosen on beam ``beam_indices[n, t]`` (an index
  into the ``B * num_beams`` rows of step ``t``), so its row is read there; ``-1`` marks the
  steps after the sequence ended.

A sequence ends at its first end-of-sequence token (``generation_config.eos_token_id``); the
rows after it (padding of a batch) are dropped. Rows of a decoder-only model are the tokens
fed (prompt, then the generated tokens but the last); an encoder-decoder's decoder rows are
labelled by the tokens each step output and its self-attention keys by the tokens fed (start
token first), as attnkit's own translations are.
"""

from __future__ import annotations

import torch
from torch import Tensor

from attnkit.hf.eager import NoWeightsError
from attnkit.hf.record import example_record, merge_words
from attnkit.hf.words import marker_word_ids, word_labels


def _eos_ids(model) -> set[int]:
    config = getattr(model, "generation_config", None) or model.config
    eos = getattr(config, "eos_token_id", None)
    return set() if eos is None else {int(e) for e in ([eos] if isinstance(eos, int) else eos)}


def _steps_used(generated: Tensor, eos: set[int], beam: Tensor | None, n: int) -> int:
    """How many generation steps sequence ``n`` used: up to its first EOS, inclusive."""
    used = len(generated)
    for t, token in enumerate(generated.tolist()):
        if token in eos:
            used = t + 1
            break
    if beam is not None:
        ended = (beam[n, :used] < 0).nonzero()
        used = int(ended[0]) if len(ended) else used
    return used


def _stitch(steps, layer: int, n: int, beam: Tensor | None, used: int) -> Tensor:
    """Sequence ``n``'s layer ``layer`` over ``used`` steps: ``(H, Q, K)`` with zeros right of
    each step's keys."""
    rows = []
    for t in range(used):
        r = n if beam is None else int(beam[n, t])
        rows.append(steps[t][layer][r].detach().to("cpu", torch.float32))  # (H, q_t, k_t)
    width = max(w.shape[-1] for w in rows)
    padded = [torch.nn.functional.pad(w, (0, width - w.shape[-1])) for w in rows]
    return torch.cat(padded, dim=1)  # (H, sum q_t, K)


def _check_steps(steps, what: str) -> None:
    if not steps or not steps[0]:
        raise NoWeightsError(
            f"the generate() output holds no {what}: generate ran with fused (sdpa) attention, "
            "which returns no weights; call it with output_attentions=True inside "
            "`with attnkit.hf.eager_attention(model):`"
        )


def _prompt_keep(inputs, n: int, n_sequences: int, length: int) -> Tensor:
    """Positions of sequence ``n``'s prompt (or source) that are not padding: row
    ``n // (N / B)`` of the inputs' ``attention_mask`` (``N`` sequences from ``B`` inputs)."""
    mask = None if inputs is None else inputs.get("attention_mask")
    if mask is None:
        return torch.arange(length)
    if mask.shape[-1] != length:
        raise ValueError(f"inputs' attention_mask has {mask.shape[-1]} positions, not {length}")
    return mask[n // max(n_sequences // mask.shape[0], 1)].nonzero().flatten()


def _decoder_only(out, inputs, n: int, eos: set[int]):
    """Sequence ``n`` of a decoder-only model: stacks, kept positions and their token ids."""
    steps, seq = out.attentions, out.sequences[n]
    _check_steps(steps, "attentions")
    prompt = steps[0][0].shape[-2]
    beam = getattr(out, "beam_indices", None)
    used = _steps_used(seq[prompt:], eos, beam, n)
    stacks = {"self": [_stitch(steps, i, n, beam, used) for i in range(len(steps[0]))]}
    kept = _prompt_keep(inputs, n, out.sequences.shape[0], prompt)
    fed = torch.cat([kept, prompt + torch.arange(used - 1)])  # prompt, then all but the last
    return stacks, {"in": fed}, {"in": seq.index_select(0, fed)}


def _encoder_decoder(out, inputs, n: int, eos: set[int]):
    """Sequence ``n`` of an encoder-decoder: stacks, kept positions and their token ids."""
    self_steps, cross_steps, seq = out.decoder_attentions, out.cross_attentions, out.sequences[n]
    _check_steps(self_steps, "decoder_attentions")
    beam = getattr(out, "beam_indices", None)
    used = _steps_used(seq[1:], eos, beam, n)
    n_layers = len(self_steps[0])
    stacks = {
        "self": [_stitch(self_steps, i, n, beam, used) for i in range(n_layers)],
        "cross": [_stitch(cross_steps, i, n, beam, used) for i in range(n_layers)],
    }
    source = stacks["cross"][0].shape[-1]
    keep_in = _prompt_keep(inputs, n, out.sequences.shape[0], source)
    enc = out.encoder_attentions
    if enc:  # computed once per input: B rows, not N
        row = n // max(out.sequences.shape[0] // enc[0].shape[0], 1)
        stacks["encoder"] = [w[row].detach().to("cpu", torch.float32) for w in enc]
    steps = torch.arange(used)
    keep = {"in": keep_in, "out": steps, "fed": steps}
    ids = {"out": seq[1 : used + 1], "fed": seq[:used]}
    if inputs is not None and "input_ids" in inputs:
        row = n // max(out.sequences.shape[0] // inputs["input_ids"].shape[0], 1)
        ids["in"] = inputs["input_ids"][row].index_select(0, keep_in)
    return stacks, keep, ids


def generated_records(model, out, tokenizer, words: bool, inputs=None) -> list:
    """One record per sequence of a ``generate()`` output (see the module's docstring)."""
    eos = _eos_ids(model)
    decoder = getattr(out, "decoder_attentions", None) is not None
    records = []
    for n in range(out.sequences.shape[0]):
        if decoder:
            stacks, keep, ids = _encoder_decoder(out, inputs, n, eos)
        else:
            stacks, keep, ids = _decoder_only(out, inputs, n, eos)
        batched = {k: [w[None] for w in v] for k, v in stacks.items()}  # (1, H, Tq, Tk)
        labels = _labels(tokenizer, ids)
        rec = example_record(batched, keep, 0, labels, decoder)
        if words:
            word_ids = {a: marker_word_ids(t, tokenizer) for a, t in labels.items()}
            texts = {a: word_labels(labels[a], word_ids[a], tokenizer) for a in labels}
            if decoder and "in" not in labels:
                raise ValueError("words=True needs inputs= (the source's input_ids)")
            rec = merge_words(rec, word_ids, texts, decoder)
        records.append(rec)
    return records


def _labels(tokenizer, ids: dict) -> dict | None:
    if tokenizer is None:
        return None
    return {a: list(tokenizer.convert_ids_to_tokens(v.tolist())) for a, v in ids.items()}
