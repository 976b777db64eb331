"""Alignment error rate (Och & Ney 2003) of predicted word alignments against gold ones, over a
corpus and per sentence-length bin (:func:`aer_by_length`).

Gold alignments mark each link sure (S) or possible (P), with S ⊆ P; a prediction is a link set
A. Summed over the corpus (not averaged per sentence), as Och & Ney 2003 define them::

    precision = |A ∩ P| / |A|      recall = |A ∩ S| / |S|
    AER = 1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|)

Files are in Pharaoh format (:mod:`attnkit.interpret.alignments`). The usual conventions, which
the defaults follow: gold files are 1-based (WPT 2005, the RWTH and Tsinghua gold sets) and
predictions 0-based (fast_align, awesome-align). Every link of a prediction counts, sure or not.
"""

from __future__ import annotations

import tarfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from attnkit.interpret.alignments import Alignment, Link, read_pharaoh, read_pharaoh_lines


@dataclass(frozen=True)
class AlignmentScores:
    """AER, precision and recall (fractions in [0, 1]) with the counts they come from."""

    aer: float
    precision: float  # 0 when nothing is predicted
    recall: float  # 0 when the gold has no sure link
    sentences: int
    predicted: int  # |A|
    sure: int  # |S|
    possible: int  # |P|, sure links included
    predicted_sure: int  # |A ∩ S|
    predicted_possible: int  # |A ∩ P|
    notes: tuple[str, ...] = ()  # what a reader of the figures should know (conventions guessed)

    def summary(self) -> str:
        """One line for a terminal, in percent."""
        return (
            f"AER {100 * self.aer:.1f}  precision {100 * self.precision:.1f}  "
            f"recall {100 * self.recall:.1f}  ({self.sentences} sentences; {self.predicted} "
            f"predicted, {self.sure} sure, {self.possible - self.sure} possible-only gold links)"
        )


def _links(prediction: Alignment | Iterable[Link]) -> frozenset[Link]:
    return prediction.links if isinstance(prediction, Alignment) else frozenset(prediction)


def alignment_error_rate(
    gold: Sequence[Alignment],
    predicted: Sequence[Alignment | Iterable[Link]],
    notes: Sequence[str] = (),
) -> AlignmentScores:
    """Corpus AER, precision and recall of ``predicted`` against ``gold``, sentence by sentence
    (Och & Ney 2003). Raises ValueError when the corpora do not pair up or the AER is undefined
    (no predicted and no sure link at all)."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted ones")
    n_a = n_s = n_p = n_as = n_ap = 0
    for sentence, prediction in zip(gold, predicted, strict=True):
        a = _links(prediction)
        n_a, n_s, n_p = n_a + len(a), n_s + len(sentence.sure), n_p + len(sentence.possible)
        n_as += len(a & sentence.sure)
        n_ap += len(a & sentence.possible)
    if n_a + n_s == 0:
        raise ValueError("AER is undefined: neither the gold nor the prediction has a sure link")
    return AlignmentScores(
        aer=1.0 - (n_as + n_ap) / (n_a + n_s),
        precision=n_ap / n_a if n_a else 0.0,
        recall=n_as / n_s if n_s else 0.0,
        sentences=len(gold),
        predicted=n_a,
        sure=n_s,
        possible=n_p,
        predicted_sure=n_as,
        predicted_possible=n_ap,
        notes=tuple(notes),
    )


# (first, last) words of each bin, last None = no upper end: RWTH's English sentences have a
# median of 19-20 words and run to 40 (Vilar, Popović & Ney 2006); generated gold to 50
LENGTH_BINS: tuple[tuple[int, int | None], ...] = (
    (1, 10),
    (11, 20),
    (21, 30),
    (31, 40),
    (41, None),
)


@dataclass(frozen=True)
class LengthBin:
    """The sentences whose length falls in ``[first, last]`` words and their pooled scores."""

    first: int
    last: int | None  # None: no upper end
    sentences: int
    scores: AlignmentScores | None  # None when the bin is empty or its AER undefined

    @property
    def label(self) -> str:
        """``"11-20"``, or ``"41+"`` for the open last bin."""
        return f"{self.first}+" if self.last is None else f"{self.first}-{self.last}"

    def percent(self) -> dict:
        """``{bin, sentences, aer, precision, recall}``, scores in percent (None when empty)."""
        out = dict(bin=self.label, sentences=self.sentences, aer=None, precision=None, recall=None)
        if self.scores is not None:
            s = self.scores
            out.update(aer=100 * s.aer, precision=100 * s.precision, recall=100 * s.recall)
        return out


def aer_by_length(
    gold: Sequence[Alignment],
    predicted: Sequence[Alignment | Iterable[Link]],
    lengths: Sequence[int],
    bins: Sequence[tuple[int, int | None]] = LENGTH_BINS,
) -> list[LengthBin]:
    """AER per length bin: sentence ``n`` goes to the bin holding ``lengths[n]`` (its length in
    words, e.g. of the English side), and each bin's AER pools the links of its sentences, as
    the corpus AER does (Och & Ney 2003), so it is not a mean of sentence AERs. A sentence in no
    bin is left out; a bin with no sentence (or no sure and no predicted link) has no scores."""
    if not len(gold) == len(predicted) == len(lengths):
        raise ValueError(
            f"{len(gold)} gold sentences, {len(predicted)} predicted and {len(lengths)} lengths"
        )
    out = []
    for first, last in bins:
        picked = [n for n, k in enumerate(lengths) if first <= k and (last is None or k <= last)]
        scores = None
        if picked:
            try:
                scores = alignment_error_rate(
                    [gold[n] for n in picked], [predicted[n] for n in picked]
                )
            except ValueError:  # neither a sure nor a predicted link in the bin
                scores = None
        out.append(LengthBin(first, last, len(picked), scores))
    return out


def _trailing_empty(alignments: Sequence[Alignment]) -> int:
    n = 0
    while n < len(alignments) and not alignments[-1 - n].links:
        n += 1
    return n


def _pair_up(gold, pred, gold_name: str, pred_name: str) -> tuple[list, list, list[str]]:
    """Equal lengths, or equal once trailing empty lines (which hold no links, so change no
    count) are dropped from the longer file; else a one-line error with both counts."""
    if len(gold) == len(pred):
        return gold, pred, []
    longer, name = (gold, gold_name) if len(gold) > len(pred) else (pred, pred_name)
    extra = abs(len(gold) - len(pred))
    if _trailing_empty(longer) < extra:
        raise ValueError(
            f"{gold_name} has {len(gold)} sentences but {pred_name} has {len(pred)}: "
            "the files must pair up line by line"
        )
    note = f"ignored the last {extra} empty line(s) of {name}: they hold no links"
    return gold[: len(pred)], pred[: len(gold)], [note]


def score_files(
    gold: str | Path,
    pred: str | Path,
    gold_one_based: bool = True,
    pred_one_based: bool = False,
) -> AlignmentScores:
    """AER of the Pharaoh file ``pred`` against the Pharaoh file ``gold`` (links ``i-j``, with
    ``ipj`` for possible ones; the same side first in both). Defaults: 1-based gold, 0-based
    prediction. Format errors name the file and line; unequal sentence counts give both."""
    gold_set = read_pharaoh(gold, gold_one_based)
    pred_set = read_pharaoh(pred, pred_one_based)
    empty = [str(p) for p, a in ((gold, gold_set), (pred, pred_set)) if not a]
    if empty:
        raise ValueError(f"{' and '.join(empty)}: no alignments (an empty file); nothing to score")
    gold_set, pred_set, notes = _pair_up(gold_set, pred_set, str(gold), str(pred))
    return alignment_error_rate(gold_set, pred_set, notes)


def _base_hint(alignments: Sequence[Alignment], path, one_based: bool, flag: str) -> list[str]:
    """A note when a file read as 0-based never uses index 0 (it is likely 1-based)."""
    links = [link for a in alignments for link in a.links]
    if one_based or not links or any(0 in link for link in links):
        return []
    return [f"{path} is read as 0-based but never uses index 0; if it is 1-based, pass {flag}"]


def align_score_command(
    gold: str | Path,
    pred: str | Path,
    gold_one_based: bool = True,
    pred_one_based: bool = False,
) -> AlignmentScores:
    """The scoring behind the command line's ``align score --gold GOLD --pred PRED
    [--gold-one-based/--gold-zero-based] [--pred-one-based/--pred-zero-based]``:
    :func:`score_files`, with notes when a file's index base looks wrong. Print
    ``result.summary()`` and each of ``result.notes``."""
    scores = score_files(gold, pred, gold_one_based, pred_one_based)
    hints = _base_hint(read_pharaoh(gold, gold_one_based), gold, gold_one_based, "--gold-one-based")
    hints += _base_hint(
        read_pharaoh(pred, pred_one_based), pred, pred_one_based, "--pred-one-based"
    )
    return replace(scores, notes=scores.notes + tuple(hints))


# ------------------------------------------------------------------------------ gold corpora
@dataclass
class GoldCorpus:
    """Tokenised sentence pairs (tokens split on spaces) with their gold alignments."""

    source: list[str]
    target: list[str]
    gold: list[Alignment]


def check_bounds(corpus: GoldCorpus, where: str = "<gold>") -> None:
    """Every link must point inside its sentence pair; errors name ``where`` and the line."""
    if not len(corpus.source) == len(corpus.target) == len(corpus.gold):
        raise ValueError(
            f"{where}: {len(corpus.source)} source, {len(corpus.target)} target sentences and "
            f"{len(corpus.gold)} alignments; they must pair up"
        )
    for n, (src, tgt, a) in enumerate(
        zip(corpus.source, corpus.target, corpus.gold, strict=True), 1
    ):
        n_src, n_tgt = len(src.split()), len(tgt.split())
        for i, j in sorted(a.links):
            if i >= n_src or j >= n_tgt:
                raise ValueError(
                    f"{where}:{n}: link ({i}, {j}) (0-based) is outside a pair of "
                    f"{n_src} source and {n_tgt} target words"
                )


def read_src_tgt(path: str | Path) -> tuple[list[str], list[str]]:
    """A ``source ||| target`` file (awesome-align's ``*.src-tgt``): the two sides' lines."""
    source, target = [], []
    with Path(path).open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            left, sep, right = line.rstrip("\n").partition(" ||| ")
            if not sep:
                raise ValueError(f"{path}:{n}: expected 'source ||| target'")
            source.append(left.strip())
            target.append(right.strip())
    return source, target


def read_rwth_deen(tarball: str | Path) -> GoldCorpus:
    """The RWTH German-English gold alignments (Vilar, Popović & Ney 2006) straight from
    ``DeEnGoldAlignment.tar.gz``: ``DeEn/de`` and ``DeEn/en`` (ISO-8859-1) and
    ``DeEn/alignmentDeEn.talp`` (1-based, German first). The blank last line is dropped."""
    members = {"de": "DeEn/de", "en": "DeEn/en", "talp": "DeEn/alignmentDeEn.talp"}
    with tarfile.open(tarball, "r:gz") as tar:
        text = {}
        for key, member in members.items():
            try:
                handle = tar.extractfile(member)
            except KeyError:
                handle = None
            if handle is None:
                raise ValueError(f"{tarball}: no file {member} in the archive")
            text[key] = handle.read().decode("latin-1").split("\n")
    lines = {key: value[:-1] if value[-1] == "" else value for key, value in text.items()}
    while all(value and not value[-1].strip() for value in lines.values()):
        for value in lines.values():
            value.pop()
    gold = read_pharaoh_lines(lines["talp"], one_based=True, source=f"{tarball}:{members['talp']}")
    if not len(lines["de"]) == len(lines["en"]) == len(gold):
        raise ValueError(
            f"{tarball}: {len(lines['de'])} German, {len(lines['en'])} English lines and "
            f"{len(gold)} alignment lines; they must pair up"
        )
    corpus = GoldCorpus(lines["de"], lines["en"], gold)
    check_bounds(corpus, f"{tarball}:{members['talp']}")
    return corpus
