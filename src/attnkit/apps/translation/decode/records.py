"""A decoded sentence's attention as the core's labelled
:class:`~attnkit.interpret.structure.AttentionRecord`.

:class:`TranslationAttention` gives :class:`~attnkit.apps.translation.decode.translate.Translation`
the methods the core's views, heatmaps, alignments and files take (``attention_record``,
``attention_records``, ``attention_meta``), so ``run.translate(..., attention=True)`` goes
straight into :func:`attnkit.viz.model_view`, :func:`attnkit.interpret.heatmap.plot_record`,
:func:`attnkit.interpret.alignments.word_attention` and
:func:`attnkit.interpret.record.save_attention`. The labels: decoder rows are decoding steps,
labelled by the piece each step output (``</s>`` last when it finished); the decoder's
self-attention keys are its inputs, ``<s>`` then the outputs; the encoder's self-attention is
source over source.
"""

from __future__ import annotations

from pathlib import Path

from attnkit.interpret.structure import EOS_LABEL, AttentionRecord, group_layers

BOS_LABEL = "<s>"  # the decoder's first input


def decoder_labels(src: list[str], tgt: list[str], finished: bool, rows: int) -> dict:
    """``{stack: (query labels, key labels)}`` of one hypothesis with ``rows`` decoding
    steps."""
    outputs = (list(tgt) + ([EOS_LABEL] if finished else []))[:rows]
    inputs = [BOS_LABEL, *tgt][:rows]
    return {"cross": (outputs, list(src)), "self": (outputs, inputs), "encoder": (src, src)}


def labelled_record(named, src, tgt, finished: bool) -> AttentionRecord:
    """One hypothesis' named weights ``{name: (H, Tq, Tk)}`` as a labelled record."""
    stacks = group_layers(named)
    decoder = [name for name in ("cross", "self") if name in stacks]
    if not decoder:
        raise ValueError("no attention recorded for this hypothesis")
    rows = stacks[decoder[0]][0].shape[-2]  # decoding steps
    labels = decoder_labels(list(src), tgt, finished, rows)
    return AttentionRecord(stacks, {k: v for k, v in labels.items() if k in stacks})


class TranslationAttention:
    """The core's attention protocol for a ``Translation`` (its fields ``attention``,
    ``src_pieces``, ``tgt_pieces``, ``finished``, ``source``, ``outputs``, ``scores``)."""

    def attention_record(self, hypothesis: int = 0) -> AttentionRecord:
        """Hypothesis ``hypothesis``, decoded with ``need_weights=True``: stacks ``"cross"``
        (and for a Transformer ``"self"``, the decoder's, and ``"encoder"``), labelled."""
        if self.attention is None:
            raise ValueError(
                "the translation carries no attention; translate with need_weights=True"
            )
        if not 0 <= hypothesis < len(self.attention):
            raise IndexError(f"hypothesis {hypothesis} out of range: {len(self.attention)} decoded")
        return labelled_record(
            self.attention[hypothesis],
            self.src_pieces,
            self.tgt_pieces[hypothesis],
            self.finished[hypothesis],
        )

    def attention_records(self) -> list[AttentionRecord]:
        """Every hypothesis' record, the best first."""
        if self.attention is None:
            raise ValueError("translations carry no attention; translate with need_weights=True")
        return [self.attention_record(k) for k in range(len(self.attention))]

    def attention_meta(self) -> dict:
        """What :func:`~attnkit.interpret.record.save_attention` writes beside the weights."""
        return {
            "source": self.source,
            "outputs": self.outputs,
            "scores": self.scores,
            "src_pieces": self.src_pieces,
            "tgt_pieces": self.tgt_pieces,
            "rows": [self.rows(k) for k in range(len(self.outputs))],
            "finished": self.finished,
        }


def from_translation(translation, hypothesis: int = 0) -> AttentionRecord:
    """Hypothesis ``hypothesis`` of a ``Translation`` as a labelled record."""
    return translation.attention_record(hypothesis)


def plot_translation(
    translation,
    name: str = "cross",
    path: str | Path = "attention.png",
    head: int | None = None,
    *,
    layer: int = -1,
    hypothesis: int = 0,
) -> Path:
    """Heatmap of one translation's attention, titled with its text: the stack ``name``
    (``"cross"``, and for a Transformer ``"self"`` or ``"encoder"``) at ``layer`` (default the
    last), averaged over heads unless ``head``. ``translation`` is what
    ``run.translate(..., attention=True)`` returns (a ``Translation`` or a list of one).

    Decoder rows are the output pieces, the last one the end-of-sentence step ``</s>``.
    """
    from attnkit.interpret.heatmap import plot_record

    one = translation[0] if isinstance(translation, list | tuple) else translation
    return plot_record(
        translation, name, path, head, layer=layer, hypothesis=hypothesis, title=one.text
    )
