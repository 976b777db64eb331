"""Hard word alignments from attention, their symmetrisation, and the Pharaoh link format.

A link is ``(i, j)``: source word ``i``, target word ``j``, both 0-based. An attention matrix is
``(T, S)``, a row per target word, a column per source word (:func:`.heatmap.plot_heatmap`).

- Hard alignments: ``argmax`` (Bahdanau et al. 2015 read attention as a soft alignment; the
  argmax of each row is the usual hard one) and ``threshold``.
- Symmetrisation of two directions (Och & Ney 2003; Koehn, Och & Marcu 2003):
  ``intersection``, ``union``, ``grow_diag``, ``grow_diag_final`` and ``grow_diag_final_and``.
- Subword pieces back to words (:mod:`attnkit.interpret.pieces`): SentencePiece's "▁",
  WordPiece's "##" and byte-level BPE's "Ġ", told apart by the pieces themselves.
- Pharaoh format: one sentence per line, ``i-j`` for a sure link and ``ipj`` for a possible one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from attnkit.interpret.pieces import (  # noqa: F401 - re-exported: their first home
    WORD_START,
    merge_pieces,
    merge_subwords,
    piece_word_ids,
)
from attnkit.interpret.structure import EOS_LABEL, as_record, split_name

Link = tuple[int, int]  # (source word, target word), 0-based

# Neighbours of a link, the four adjacent ones first, then the four diagonal ones ("grow-diag").
_NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


# ----------------------------------------------------------------------------- hard alignments
def _matrix(weights) -> Tensor:
    w = torch.as_tensor(weights, dtype=torch.float64).detach().cpu()
    if w.dim() != 2:
        raise ValueError(f"an attention matrix must be 2-D (T, S), got shape {tuple(w.shape)}")
    return w


def argmax_links(weights, per: str = "target") -> frozenset[Link]:
    """Each target word linked to its most attended source word (``per="target"``: the argmax of
    each row of ``weights (T, S)``), or each source word to the target word that attends to it
    most (``per="source"``: the argmax of each column). Ties go to the first index; an all-zero
    row or column (a fully masked query) gives no link."""
    w = _matrix(weights)
    if per == "target":
        return frozenset((int(w[j].argmax()), j) for j in range(w.shape[0]) if w[j].any())
    if per == "source":
        return frozenset((i, int(w[:, i].argmax())) for i in range(w.shape[1]) if w[:, i].any())
    raise ValueError(f'per must be "target" or "source", got {per!r}')


def threshold_links(weights, t: float) -> frozenset[Link]:
    """Every link whose weight in ``weights (T, S)`` is at least ``t`` (0 < t <= 1)."""
    if not 0.0 < t <= 1.0:
        raise ValueError(f"the threshold must be in (0, 1], got {t}")
    w = _matrix(weights)
    return frozenset((int(i), int(j)) for j, i in (w >= t).nonzero().tolist())


def flip(links: Iterable[Link]) -> frozenset[Link]:
    """Swap the sides of each link: a target->source model's links in (source, target) order."""
    return frozenset((j, i) for i, j in links)


# ------------------------------------------------------------------------------ symmetrisation
def intersection(forward: Iterable[Link], backward: Iterable[Link]) -> frozenset[Link]:
    """Links found in both directions: high precision (Och & Ney 2003)."""
    return frozenset(forward) & frozenset(backward)


def union(forward: Iterable[Link], backward: Iterable[Link]) -> frozenset[Link]:
    """Links found in either direction: high recall (Och & Ney 2003)."""
    return frozenset(forward) | frozenset(backward)


def _free(links: set[Link], link: Link, test=any) -> bool:
    """``test`` (any / all) of: the link's source word, its target word is not yet aligned."""
    return test((all(a != link[0] for a, _ in links), all(b != link[1] for _, b in links)))


def _order(links: Iterable[Link]) -> list[Link]:
    """Visiting order: target word, then source word (the published loop runs over e, then f)."""
    return sorted(links, key=lambda link: (link[1], link[0]))


def _grow(forward: Iterable[Link], backward: Iterable[Link]) -> set[Link]:
    forward, backward = frozenset(forward), frozenset(backward)
    candidates, links = union(forward, backward), set(intersection(forward, backward))
    added = True
    while added:  # until a pass adds nothing
        added = False
        for i, j in _order(links):
            for di, dj in _NEIGHBOURS:
                near = (i + di, j + dj)
                if near in candidates and near not in links and _free(links, near):
                    links.add(near)
                    added = True
    return links


def _final(links: set[Link], extra: Iterable[Link], test) -> set[Link]:
    for link in _order(frozenset(extra)):
        if link not in links and _free(links, link, test):
            links.add(link)
    return links


def grow_diag(forward: Iterable[Link], backward: Iterable[Link]) -> frozenset[Link]:
    """Start from the intersection; repeatedly add a union link next to (incl. diagonally) a link
    already chosen when its source or its target word is still unaligned (Koehn, Och & Marcu
    2003). Links are visited in (target, source) order, adjacent neighbours before diagonal
    ones, so the result is deterministic and symmetric in ``forward`` and ``backward``."""
    return frozenset(_grow(forward, backward))


def grow_diag_final(forward: Iterable[Link], backward: Iterable[Link]) -> frozenset[Link]:
    """``grow_diag``, then "final": add each remaining link of ``forward``, then of ``backward``,
    whose source or target word is still unaligned (Koehn, Och & Marcu 2003)."""
    forward, backward = frozenset(forward), frozenset(backward)  # each is read twice
    return frozenset(_final(_final(_grow(forward, backward), forward, any), backward, any))


def grow_diag_final_and(forward: Iterable[Link], backward: Iterable[Link]) -> frozenset[Link]:
    """As :func:`grow_diag_final`, but "final-and" adds a link only when both its words are
    still unaligned (the stricter variant offered by the Moses toolkit)."""
    forward, backward = frozenset(forward), frozenset(backward)  # each is read twice
    return frozenset(_final(_final(_grow(forward, backward), forward, all), backward, all))


SYMMETRISERS = {
    "intersection": intersection,
    "union": union,
    "grow-diag": grow_diag,
    "grow-diag-final": grow_diag_final,
    "grow-diag-final-and": grow_diag_final_and,
}


def symmetrise(forward: Iterable[Link], backward: Iterable[Link], method: str) -> frozenset[Link]:
    """Combine two directions' links (both in (source, target) order) by ``method``."""
    if method not in SYMMETRISERS:
        raise ValueError(f"unknown symmetrisation {method!r}; choose one of {sorted(SYMMETRISERS)}")
    return SYMMETRISERS[method](forward, backward)


def word_attention(result, name: str = "cross", hypothesis: int = 0) -> Tensor:
    """Word-level ``(T_words, S_words)`` attention ``name`` (a one-layer stack, ``"cross"``, or a
    layer, ``"layer{l}.cross"``), mean of heads, of a record labelled with subword pieces or an
    application's result that provides ``attention_record()`` (a decoded sentence's)."""
    record, (stack, layer) = as_record(result, hypothesis), split_name(name)
    layers = getattr(record, "stacks", {}).get(stack, [])  # (H, Tq, Tk) per layer
    if layer >= len(layers) or (name == stack and len(layers) > 1) or stack not in record.labels:
        have = {s: len(ls) for s, ls in getattr(record, "stacks", {}).items()}
        raise ValueError(f"no labelled attention named {name!r}; layers by stack: {have}")
    rows, cols = record.labels[stack]
    pieces = rows[:-1] if rows and rows[-1] == EOS_LABEL else rows  # the EOS step is no word
    return merge_subwords(layers[layer], cols, pieces).mean(0)  # (H, ...) -> (T_words, S_words)


# ------------------------------------------------------------------------------ Pharaoh format
class AlignmentFormatError(ValueError):
    """A Pharaoh file that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class Alignment:
    """One sentence's links: ``sure`` ones and ``possible`` ones, with sure ⊆ possible (Och & Ney
    2003). A predicted alignment is usually sure-only."""

    sure: frozenset[Link] = frozenset()
    possible: frozenset[Link] = frozenset()

    def __post_init__(self):
        object.__setattr__(self, "sure", frozenset(self.sure))
        object.__setattr__(self, "possible", frozenset(self.possible) | self.sure)

    @property
    def links(self) -> frozenset[Link]:
        """Every link, sure or possible."""
        return self.possible


def parse_pharaoh_line(line: str, one_based: bool = False, where: str = "<line>") -> Alignment:
    """Read one line of ``i-j`` (sure) and ``ipj`` (possible) links; ``where`` names the place
    (``file:line``) in errors. Indices become 0-based."""
    sure, possible = set(), set()
    for token in line.split():
        sep = "-" if "-" in token else "p"
        left, _, right = token.partition(sep)
        if not (left.isascii() and left.isdigit() and right.isascii() and right.isdigit()):
            raise AlignmentFormatError(f"{where}: bad link {token!r}; expected i-j or ipj")
        i, j = int(left) - one_based, int(right) - one_based
        if i < 0 or j < 0:
            raise AlignmentFormatError(
                f"{where}: link {token!r} has index 0 but the file is read as 1-based"
            )
        (sure if sep == "-" else possible).add((i, j))
    return Alignment(frozenset(sure), frozenset(possible))


def read_pharaoh_lines(
    lines: Iterable[str],
    one_based: bool = False,
    source: str = "<lines>",
    drop_trailing_empty: bool = False,
) -> list[Alignment]:
    """Parse Pharaoh lines (one sentence each; an empty line is a sentence without links).
    ``drop_trailing_empty`` drops empty lines at the end (e.g. the RWTH gold's blank last line)."""
    out = [parse_pharaoh_line(line, one_based, f"{source}:{n}") for n, line in enumerate(lines, 1)]
    while drop_trailing_empty and out and not out[-1].links:
        out.pop()
    return out


def read_pharaoh(
    path: str | Path, one_based: bool = False, drop_trailing_empty: bool = False
) -> list[Alignment]:
    """Read a Pharaoh file (see :func:`read_pharaoh_lines`); errors name the file and line."""
    path = Path(path)
    if not path.is_file():
        raise AlignmentFormatError(f"{path}: no such file")
    with path.open("rb") as f:
        return read_pharaoh_lines(_decoded(f, path), one_based, str(path), drop_trailing_empty)


def _decoded(lines: Iterable[bytes], path: Path) -> Iterable[str]:
    for n, line in enumerate(lines, 1):
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise AlignmentFormatError(f"{path}:{n}: not UTF-8 text ({error.reason})") from None


def format_pharaoh_line(alignment: Alignment | Iterable[Link], one_based: bool = False) -> str:
    """One line: sure links as ``i-j``, possible-only ones as ``ipj``, sorted."""
    if not isinstance(alignment, Alignment):
        alignment = Alignment(frozenset(alignment))
    sep = {link: "-" if link in alignment.sure else "p" for link in alignment.possible}
    return " ".join(f"{i + one_based}{sep[i, j]}{j + one_based}" for i, j in sorted(sep))


def write_pharaoh(
    path: str | Path, alignments: Iterable[Alignment | Iterable[Link]], one_based: bool = False
) -> Path:
    """Write one line per sentence (see :func:`format_pharaoh_line`)."""
    text = "".join(format_pharaoh_line(a, one_based) + "\n" for a in alignments)
    Path(path).write_text(text, encoding="utf-8")
    return Path(path)
