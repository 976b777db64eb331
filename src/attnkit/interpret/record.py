"""Saving and loading recorded attention: one safetensors file plus one JSON file per example.

An example is one :class:`~attnkit.interpret.structure.AttentionRecord` per hypothesis (one
for most applications; a decoded n-best list has several). ``DIR/000012.safetensors`` holds
example 12's: ``hyp{k}/{stack}.layer{l}`` is layer ``l`` of stack ``stack`` of hypothesis
``k``, ``(H, Tq, Tk)``. ``DIR/000012.json`` holds their labels (``"labels"``: one
``{stack: [query labels, key labels]}`` per hypothesis) beside what the application adds
(:meth:`SavesAttention.attention_meta`: for a decoded sentence its texts, scores and
pieces), so a plot needs nothing else::

    record, meta = load_attention("att", 12)
    rows, cols = record.labels["cross"]
    plot_heatmap(record["cross"][-1].mean(0), cols, rows, "12.png")
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from safetensors.torch import load_file, save_file

from attnkit.interpret.structure import AttentionRecord, group_layers


@runtime_checkable
class SavesAttention(Protocol):
    """An application's result whose attention :func:`save_attention` writes."""

    def attention_records(self) -> list[AttentionRecord]:
        """One labelled record per hypothesis, the best first."""
        ...

    def attention_meta(self) -> dict:
        """What to write beside the weights (JSON-able: texts, scores, tokens)."""
        ...


def _records_and_meta(result) -> tuple[list[AttentionRecord], dict]:
    if isinstance(result, AttentionRecord):
        return [result], {}
    if isinstance(result, list | tuple) and all(isinstance(r, AttentionRecord) for r in result):
        return list(result), {}
    if isinstance(result, SavesAttention):
        return list(result.attention_records()), dict(result.attention_meta())
    raise TypeError(
        f"cannot save the attention of a {type(result).__name__}: give an AttentionRecord, a "
        "list of them (one per hypothesis) or a result that provides attention_records() and "
        "attention_meta()"
    )


def save_records(
    records: Sequence[AttentionRecord], stem: str | Path, meta: Mapping | None = None
) -> None:
    """Write one example: ``stem.safetensors`` (the weights) and ``stem.json`` (the labels and
    ``meta``)."""
    if not records:
        raise ValueError("no attention to save: record it (e.g. need_weights=True)")
    stem = Path(stem)
    tensors = {
        f"hyp{k}/{stack}.layer{layer}": w.contiguous()  # (H, Tq, Tk)
        for k, record in enumerate(records)
        for stack, layers in record.stacks.items()
        for layer, w in enumerate(layers)
    }
    save_file(tensors, str(stem.with_name(stem.name + ".safetensors")))
    labels = [{s: [list(q), list(k)] for s, (q, k) in r.labels.items()} for r in records]
    info = {**(meta or {}), "labels": labels}
    stem.with_name(stem.name + ".json").write_text(
        json.dumps(info, ensure_ascii=False, indent=1), encoding="utf-8"
    )


def save_attention(results: Sequence, directory: str | Path, start: int = 0) -> int:
    """Write each result's attention as example ``start``, ``start + 1``, ...; returns the
    examples written. A result is an :class:`~attnkit.interpret.structure.AttentionRecord`, a
    list of them (one per hypothesis) or an application's result that provides
    ``attention_records()`` and ``attention_meta()`` (:class:`SavesAttention`)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = 0
    for i, result in enumerate(results, start=start):
        records, meta = _records_and_meta(result)
        save_records(records, directory / f"{i:06d}", meta)
        written += 1
    return written


def load_attention(
    directory: str | Path, index: int, hypothesis: int = 0
) -> tuple[AttentionRecord, dict]:
    """``(record, meta)`` of hypothesis ``hypothesis`` of one saved example: the labelled
    :class:`~attnkit.interpret.structure.AttentionRecord` and the JSON file's contents."""
    directory = Path(directory)
    path = directory / f"{index:06d}.safetensors"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no saved attention for example {index}")
    meta = json.loads((directory / f"{index:06d}.json").read_text(encoding="utf-8"))
    if "labels" not in meta:  # written before records were saved with their labels
        raise ValueError(f"{path}: an older format without labels; save the attention again")
    saved = len(meta["labels"])
    if not 0 <= hypothesis < saved:
        raise IndexError(f"hypothesis {hypothesis} out of range: {saved} saved in {path}")
    prefix = f"hyp{hypothesis}/"
    named = {
        k.removeprefix(prefix): v for k, v in load_file(str(path)).items() if k.startswith(prefix)
    }
    labels = {s: (q, k) for s, (q, k) in meta["labels"][hypothesis].items()}
    return AttentionRecord(group_layers(named), labels), meta
