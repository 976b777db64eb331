"""Word alignments from a trained translation run: ``attnkit translation align extract`` and
the generated corpus's gold.

A run is teacher-forced on each sentence pair of a tokenised parallel file
(:mod:`attnkit.apps.translation.align.forced`; a pretrained Hugging Face encoder-decoder folder
such as MarianMT's: :mod:`attnkit.apps.translation.align.hf_forced`) and its word-level
cross-attention becomes links:

- **Shift-Att** (Chen et al. 2020, "Accurate word alignment induction from neural machine
  translation", §3): target word ``y_i`` is aligned from the decoder step where ``y_i`` is the
  decoder's *input*, not the step that emits it (``shift=True``). On the generated gold our
  small Transformers align the other way: their step that reads ``y_i`` looks at the source of
  ``y_(i+1)`` (docs/alignment.md), so the command's default is off;
- one decoder **layer**, heads averaged (or one ``head``): ``"auto"`` takes the penultimate
  layer of a Transformer (Garg et al. 2019, "Jointly learning to align and translate with
  Transformer models", found it best for their 6-layer models), an int picks one (negative from
  the end), ``"mean"`` averages them (the command's default: best on our 2-layer models); a
  recurrent model has one attention;
- each target word linked to its most attended source word (argmax); ``both_ways`` adds each
  source word's most attending target word (the column's argmax) by grow-diag; with a
  ``reverse_run`` (the other direction), both directions combined by a symmetrisation
  (``grow-diag`` default; Koehn, Och & Marcu 2003), or by ``product``: the two attentions
  multiplied before any link is read (Liang, Taskar & Klein 2006;
  :mod:`attnkit.interpret.agreement`), the best reading of unguided attention on the generated
  gold, and the labels of a self-guided model (docs/alignment.md).

Links are ``(source word, target word)``, 0-based, in the order of the forward run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from attnkit.apps.translation.align.forced import Layer, WordMismatchError, forced_attention
from attnkit.apps.translation.data.corpora import read_parallel
from attnkit.apps.translation.data.generated import generate_aligned_corpus
from attnkit.errors import DataError
from attnkit.interpret.agreement import agreement_links
from attnkit.interpret.alignments import (
    SYMMETRISERS,
    Link,
    argmax_links,
    flip,
    symmetrise,
    write_pharaoh,
)
from attnkit.metrics.aer import GoldCorpus

# ------------------------------------------------------------------------------- extraction


def resolve_layer(layer: Layer, decoder_layers: int) -> Layer:
    """``"auto"`` -> the penultimate decoder layer (the last when there is one)."""
    if layer == "auto":
        return -2 if decoder_layers >= 2 else -1
    return layer


def run_attention(
    run_dir: str | Path,
    pairs: Sequence[tuple[str, str]],
    *,
    layer: Layer = "mean",
    head: int | None = None,
    shift: bool = False,
    detok: bool = False,
    checkpoint: str = "best",
) -> list:
    """The word-level ``(T_words, S_words)`` forced attention of a run on ``pairs`` of
    whitespace-tokenised sentences (``detok``: feed the model running text; ``head``: one head
    instead of the mean). ``run_dir`` may also be a Hugging Face encoder-decoder folder
    (:mod:`attnkit.apps.translation.align.hf_forced`; ``checkpoint`` is then unused)."""
    from attnkit.apps.translation.align import hf_forced
    from attnkit.apps.translation.decode.run import load_run

    if hf_forced.is_hf_model(run_dir):
        model, tokenizer = hf_forced.load_hf(run_dir)
        layer = resolve_layer(layer, hf_forced.decoder_layer_count(model))
        return hf_forced.hf_forced_attention(
            model, tokenizer, pairs, layer=layer, head=head, shift=shift, detok=detok
        )

    cfg, tokenizer, model = load_run(run_dir, checkpoint)
    layer = resolve_layer(layer, getattr(cfg.model, "decoder_layers", 1))
    forced = forced_attention(
        model, tokenizer, pairs, layer=layer, head=head, detok=detok, shift=shift
    )
    return [f.weights for f in forced]


def extract_links(
    run_dir: str | Path,
    pairs: Sequence[tuple[str, str]],
    *,
    reverse_run: str | Path | None = None,
    symmetrisation: str = "grow-diag",
    both_ways: bool = False,
    reverse_layer: Layer | None = None,
    **kw,
) -> list[frozenset[Link]]:
    """Argmax links of ``run_dir`` on each ``(source, target)`` pair, combined with the
    ``reverse_run``'s (target -> source, flipped) by ``symmetrisation`` when one is given
    (``"product"``: :func:`attnkit.interpret.agreement.agreement_links` of the two attentions;
    the reverse run's layer is ``reverse_layer``, by default the forward one's).
    ``both_ways``: each run's links are its argmax per target word and per source word (the
    column's argmax), combined by grow-diag: one attention read in both directions.
    ``kw`` goes to :func:`run_attention`."""
    if reverse_run is not None and symmetrisation not in (*SYMMETRISERS, "product"):
        choices = ", ".join([*SYMMETRISERS, "product"])
        raise ValueError(f"unknown symmetrisation {symmetrisation!r}; choose one of {choices}")
    ahead = run_attention(run_dir, pairs, **kw)
    if reverse_run is None:
        return [_links(w, both_ways) for w in ahead]
    swapped = [(tgt, src) for src, tgt in pairs]
    back_kw = {**kw, "layer": kw.get("layer", "mean") if reverse_layer is None else reverse_layer}
    back = run_attention(reverse_run, swapped, **back_kw)
    if symmetrisation == "product":
        return [agreement_links(f, b) for f, b in zip(ahead, back, strict=True)]
    forward = [_links(w, both_ways) for w in ahead]
    backward = [flip(_links(w, both_ways)) for w in back]
    return [symmetrise(f, b, symmetrisation) for f, b in zip(forward, backward, strict=True)]


def _links(weights, both_ways: bool) -> frozenset[Link]:
    """The argmax of each row ``(T, S)``; ``both_ways``: grow-diag with each column's argmax."""
    rows = argmax_links(weights)
    return symmetrise(rows, argmax_links(weights, per="source"), "grow-diag") if both_ways else rows


def extract_command(
    run_dir: str | Path,
    source: str | Path,
    target: str | Path,
    output: str | Path,
    **kw,
) -> Path:
    """``attnkit translation align extract RUN SOURCE TARGET -o OUT``: read the tokenised
    parallel files (errors name the file and line), extract links (:func:`extract_links`) and
    write them as Pharaoh ``i-j`` lines, 0-based."""
    pairs = read_parallel(source, target)
    try:
        links = extract_links(run_dir, [(p.src, p.tgt) for p in pairs], **kw)
    except WordMismatchError as error:  # "sentence N" is line N of both files
        raise DataError(f"{source} and {target}: {error}") from None
    return write_pharaoh(output, links)


# ------------------------------------------------------------------------- generated gold
def generated_gold(
    sizes: Sequence[int], seed: int = 0, split: str = "test", reverse: bool = False
) -> GoldCorpus:
    """Tokenised ``split`` of the generated corpus of ``sizes`` (train, valid, test) and
    ``seed`` with its gold links, English -> German (``reverse``: German -> English, links
    flipped), as a run of ``data.corpus: default`` with those sizes sees it."""
    aligned = generate_aligned_corpus(*sizes, seed=seed)[split]
    source = [" ".join(p.en) for p in aligned]
    target = [" ".join(p.de) for p in aligned]
    gold = [p.alignment for p in aligned]
    if reverse:
        return GoldCorpus(target, source, [_flipped(a) for a in gold])
    return GoldCorpus(source, target, gold)


def _flipped(alignment):
    return type(alignment)(flip(alignment.sure), flip(alignment.possible))


def write_generated(directory: str | Path, sizes: Sequence[int], seed: int = 0) -> list[Path]:
    """``attnkit translation data generate``: the generated corpus as running text,
    ``{split}.en`` and ``{split}.de`` (what ``data.corpus: files`` reads), and per split its tokens,
    ``{split}.tok.en`` / ``{split}.tok.de``, with the gold alignment ``{split}.en-de.align``
    (Pharaoh, 1-based, English first: ``i-j`` sure, ``ipj`` possible)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for split, aligned in generate_aligned_corpus(*sizes, seed=seed).items():
        for lang, side in (("en", 0), ("de", 1)):
            text = "".join(p.pair[side] + "\n" for p in aligned)
            tokens = "".join(" ".join(p.en if side == 0 else p.de) + "\n" for p in aligned)
            for path, content in ((f"{split}.{lang}", text), (f"{split}.tok.{lang}", tokens)):
                (directory / path).write_text(content, encoding="utf-8")
                written.append(directory / path)
        gold = [p.alignment for p in aligned]
        written.append(write_pharaoh(directory / f"{split}.en-de.align", gold, one_based=True))
    return written
