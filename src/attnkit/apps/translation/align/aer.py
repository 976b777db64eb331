"""Measured AER of attention read as word alignment, on the RWTH German-English gold.

A trained translation model is teacher-forced on each gold pair
(:mod:`attnkit.apps.translation.align.forced`)
and its word-level cross-attention is turned into links in several ways, each scored with
:func:`attnkit.metrics.aer.alignment_error_rate` (Och & Ney 2003):

- ``argmax``: each target word linked to the source word it attends to most (Bahdanau et al.
  2015 read the weights as a soft alignment; Ghader & Monz 2017 and Garg et al. 2019 measure
  exactly this);
- ``threshold t``: every link whose weight is at least ``t``;
- with a model of the other direction too: its argmax links, and the two directions' argmax
  links combined by ``intersection``, ``union``, ``grow-diag`` and ``grow-diag-final(-and)``
  (Och & Ney 2003; Koehn, Och & Marcu 2003);
- ``diagonal``: a baseline that uses no model (target word ``j`` of ``T`` linked to source word
  ``round((j + 0.5) * S / T - 0.5)``), to read the others against.

Gold links are ``(German word, English word)``, 0-based. A de->en model's attention is
``(T_en, S_de)``, so its links are already in gold order; an en->de model's links are flipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from torch import Tensor

from attnkit.apps.translation.align.forced import Layer, forced_attention
from attnkit.datadir import default_data_dir
from attnkit.interpret.alignments import (
    Alignment,
    Link,
    argmax_links,
    flip,
    symmetrise,
    threshold_links,
)
from attnkit.metrics.aer import AlignmentScores, GoldCorpus, alignment_error_rate

THRESHOLDS = (0.1, 0.2, 0.3, 0.5)
SYMMETRISATIONS = ("intersection", "union", "grow-diag", "grow-diag-final", "grow-diag-final-and")
RWTH_TARBALL = Path("word-alignment") / "rwth-deen" / "DeEnGoldAlignment.tar.gz"


@dataclass(frozen=True)
class AERRow:
    """One extraction method and its scores."""

    method: str
    scores: AlignmentScores


def default_rwth_tarball() -> Path:
    """``$ATTNKIT_DATA_DIR/word-alignment/rwth-deen/DeEnGoldAlignment.tar.gz``, else the same
    under ``../shared/data`` (:func:`attnkit.datadir.default_data_dir`; see that folder's
    SOURCE.md)."""
    return default_data_dir() / RWTH_TARBALL


# ------------------------------------------------------------------------------- extraction
def diagonal_links(n_source: int, n_target: int) -> frozenset[Link]:
    """The monotone baseline: target word ``j`` linked to the proportional source word."""
    return frozenset(
        (min(n_source - 1, max(0, round((j + 0.5) * n_source / n_target - 0.5))), j)
        for j in range(n_target)
    )


def links_by_method(
    forward: Sequence[Tensor],
    backward: Sequence[Tensor] | None = None,
    thresholds: Sequence[float] = THRESHOLDS,
    symmetrisations: Sequence[str] = SYMMETRISATIONS,
) -> dict[str, list[frozenset[Link]]]:
    """Links per method and sentence, in ``(source word, target word)`` order of ``forward``.

    ``forward[n]`` is sentence ``n``'s word attention ``(T, S)`` of the forward model;
    ``backward[n]`` (optional) that of the reverse model, ``(S, T)``: its links are flipped
    into forward order before they are scored or combined.
    """
    out: dict[str, list[frozenset[Link]]] = {
        "diagonal (no model)": [diagonal_links(w.shape[1], w.shape[0]) for w in forward],
        "argmax": [argmax_links(w) for w in forward],
    }
    for t in thresholds:
        out[f"threshold {t:g}"] = [threshold_links(w, t) for w in forward]
    if backward is not None:
        if len(backward) != len(forward):
            raise ValueError(f"{len(forward)} forward but {len(backward)} backward sentences")
        for n, (f, b) in enumerate(zip(forward, backward, strict=True)):
            if tuple(b.shape) != tuple(f.shape)[::-1]:
                raise ValueError(
                    f"sentence {n + 1}: forward attention {tuple(f.shape)} but backward "
                    f"{tuple(b.shape)}; the backward one must be its transpose's shape"
                )
        reverse = [flip(argmax_links(w)) for w in backward]
        out["reverse argmax"] = reverse
        for method in symmetrisations:
            out[f"{method} (argmax both ways)"] = [
                symmetrise(f, b, method) for f, b in zip(out["argmax"], reverse, strict=True)
            ]
    return out


def score_methods(
    gold: Sequence[Alignment],
    forward: Sequence[Tensor],
    backward: Sequence[Tensor] | None = None,
    thresholds: Sequence[float] = THRESHOLDS,
    symmetrisations: Sequence[str] = SYMMETRISATIONS,
) -> list[AERRow]:
    """AER of every method of :func:`links_by_method` against ``gold``, in that order."""
    methods = links_by_method(forward, backward, thresholds, symmetrisations)
    return [AERRow(name, alignment_error_rate(gold, links)) for name, links in methods.items()]


# ------------------------------------------------------------------------------ whole runs
def _check_langs(cfg, want: tuple[str, str], run_dir) -> None:
    if cfg.data.corpus == "default":  # the generated corpus has no real languages
        return
    have = (cfg.data.src_lang, cfg.data.tgt_lang)
    if have != want:
        raise ValueError(
            f"{run_dir} translates {'->'.join(have)}, but this side needs {'->'.join(want)}"
        )


def run_word_attention(
    run_dir: str | Path,
    pairs: Sequence[tuple[str, str]],
    *,
    layer: Layer = "mean",
    detok: bool = False,
    shift: bool = False,
    checkpoint: str = "best",
    want: tuple[str, str] | None = None,
) -> list[Tensor]:
    """Load a run and return its forced word attention ``(T_words, S_words)`` per pair.
    ``want`` (``(src_lang, tgt_lang)``) checks the run's languages."""
    from attnkit.apps.translation.decode.run import load_run

    cfg, tokenizer, model = load_run(run_dir, checkpoint)
    if want is not None:
        _check_langs(cfg, want, run_dir)
    forced = forced_attention(model, tokenizer, pairs, layer=layer, detok=detok, shift=shift)
    return [f.weights for f in forced]


def rwth_aer(
    run: str | Path,
    reverse_run: str | Path | None = None,
    *,
    corpus: GoldCorpus | None = None,
    layer: Layer = "mean",
    detok: bool = False,
    shift: bool = False,
    limit: int | None = None,
    checkpoint: str = "best",
    check_langs: bool = True,
    thresholds: Sequence[float] = THRESHOLDS,
) -> list[AERRow]:
    """The AER table of a de->en ``run`` (and an en->de ``reverse_run``) on the RWTH gold
    (``corpus``, default :func:`default_rwth_tarball`); ``limit`` keeps the first sentences."""
    if corpus is None:
        from attnkit.metrics.aer import read_rwth_deen

        corpus = read_rwth_deen(default_rwth_tarball())
    n = len(corpus.gold) if limit is None else min(limit, len(corpus.gold))
    source, target, gold = corpus.source[:n], corpus.target[:n], corpus.gold[:n]
    kw = dict(layer=layer, detok=detok, shift=shift, checkpoint=checkpoint)
    forward = run_word_attention(
        run,
        list(zip(source, target, strict=True)),
        want=("de", "en") if check_langs else None,
        **kw,
    )
    backward = None
    if reverse_run is not None:
        backward = run_word_attention(
            reverse_run,
            list(zip(target, source, strict=True)),
            want=("en", "de") if check_langs else None,
            **kw,
        )
    return score_methods(gold, forward, backward, thresholds)


def format_table(rows: Sequence[AERRow]) -> str:
    """A markdown table: method, AER, precision, recall (percent) and predicted links."""
    lines = [
        "| method | AER | precision | recall | links |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        s = row.scores
        lines.append(
            f"| {row.method} | {100 * s.aer:.1f} | {100 * s.precision:.1f} | "
            f"{100 * s.recall:.1f} | {s.predicted} |"
        )
    return "\n".join(lines)
