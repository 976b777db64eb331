"""Saving and loading decoded attention: one safetensors file plus one JSON file per sentence.

``DIR/000012.safetensors`` holds ``{name: (H, T_out, S)}`` for hypothesis 0 of sentence 12
(``hyp{k}/name`` for the k-th of an n-best list; a Transformer's encoder self-attention is
``encoder.layer{l}``, ``(H, S, S)``); ``DIR/000012.json`` holds the source and output subword
pieces, ``rows`` (one label per decoding step: the output pieces, then ``</s>`` when the
hypothesis finished: the row labels of the decoder's attention), the texts and the scores, so
a plot needs nothing else::

    named, meta = load_attention("att", 12)
    plot_heatmap(named["cross"].mean(0), meta["src_pieces"], meta["rows"][0], "12.png")
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from safetensors.torch import load_file, save_file


def save_attention(translations: Sequence, directory: str | Path, start: int = 0) -> int:
    """Write each :class:`~attnkit.apps.translation.translate.Translation`'s attention; returns
    files written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = 0
    for i, tr in enumerate(translations, start=start):
        if tr.attention is None:
            raise ValueError("translations carry no attention; translate with need_weights=True")
        tensors = {
            f"hyp{k}/{name}": weights.contiguous()
            for k, hyp in enumerate(tr.attention)
            for name, weights in hyp.items()
        }
        save_file(tensors, str(directory / f"{i:06d}.safetensors"))
        meta = {
            "source": tr.source,
            "outputs": tr.outputs,
            "scores": tr.scores,
            "src_pieces": tr.src_pieces,
            "tgt_pieces": tr.tgt_pieces,
            "rows": [tr.rows(k) for k in range(len(tr.outputs))],
            "finished": tr.finished,
        }
        (directory / f"{i:06d}.json").write_text(
            json.dumps(meta, ensure_ascii=False, indent=1), encoding="utf-8"
        )
        written += 1
    return written


def load_attention(directory: str | Path, index: int, hypothesis: int = 0) -> tuple[dict, dict]:
    """``({name: (H, T_out, S)}, meta)`` for one saved sentence."""
    directory = Path(directory)
    path = directory / f"{index:06d}.safetensors"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no saved attention for sentence {index}")
    prefix = f"hyp{hypothesis}/"
    tensors = {
        k.removeprefix(prefix): v for k, v in load_file(str(path)).items() if k.startswith(prefix)
    }
    meta = json.loads((directory / f"{index:06d}.json").read_text(encoding="utf-8"))
    return tensors, meta
