"""AER (Och & Ney 2003): hand-computed cases, file scoring, and published figures.

The real-data tests need the word-alignment data (see its SOURCE.md) under
``$ATTNKIT_DATA_DIR/word-alignment`` or ``<repo>/../shared/data/word-alignment``.
"""

import os
import tarfile
from pathlib import Path

import pytest

from attnkit.interpret.alignments import Alignment, AlignmentFormatError, flip, read_pharaoh
from attnkit.metrics.aer import (
    GoldCorpus,
    align_score_command,
    alignment_error_rate,
    check_bounds,
    read_rwth_deen,
    read_src_tgt,
    score_files,
)


def gold(sure, possible=()):
    return Alignment(frozenset(sure), frozenset(possible))


def test_perfect_prediction_has_aer_zero():
    scores = alignment_error_rate([gold({(0, 0), (1, 1)})], [{(0, 0), (1, 1)}])
    assert (scores.aer, scores.precision, scores.recall) == (0.0, 1.0, 1.0)


def test_disjoint_prediction_has_aer_one():
    scores = alignment_error_rate([gold({(0, 0)})], [{(0, 1)}])
    assert (scores.aer, scores.precision, scores.recall) == (1.0, 0.0, 0.0)


def test_possible_links_count_for_precision_only():
    # S = {(0,0),(1,1)}, P = S + {(1,2),(2,2)}, A = {(0,0),(1,2),(2,0)}:
    # |A ∩ S| = 1, |A ∩ P| = 2, AER = 1 - (1 + 2) / (3 + 2) = 0.4, precision 2/3, recall 1/2.
    scores = alignment_error_rate(
        [gold({(0, 0), (1, 1)}, {(1, 2), (2, 2)})], [gold({(0, 0), (1, 2), (2, 0)})]
    )
    assert scores.aer == pytest.approx(0.4)
    assert scores.precision == pytest.approx(2 / 3)
    assert scores.recall == pytest.approx(0.5)
    assert (scores.predicted, scores.sure, scores.possible) == (3, 2, 4)
    assert (scores.predicted_sure, scores.predicted_possible) == (1, 2)
    # Only a possible link predicted: 1 - (0 + 1) / (1 + 1).
    only = alignment_error_rate([gold({(0, 0)}, {(1, 2)})], [{(1, 2)}])
    assert (only.aer, only.precision, only.recall) == (0.5, 1.0, 0.0)


def test_counts_are_summed_over_the_corpus_not_averaged():
    # Sentence AERs are 0 and 1 (mean 0.5); the corpus AER is 1 - (1 + 1) / (2 + 4) = 2/3.
    golds = [gold({(0, 0)}), gold({(0, 0), (1, 1), (2, 2)})]
    scores = alignment_error_rate(golds, [{(0, 0)}, {(0, 1)}])
    assert scores.aer == pytest.approx(2 / 3)
    assert scores.sentences == 2


def test_undefined_and_unpaired():
    with pytest.raises(ValueError, match="undefined"):
        alignment_error_rate([gold(set())], [set()])
    with pytest.raises(ValueError, match="2 gold sentences but 1 predicted"):
        alignment_error_rate([gold({(0, 0)}), gold(set())], [set()])


def test_score_files_conventions_and_errors(tmp_path):
    g, p = tmp_path / "gold.talp", tmp_path / "pred.txt"
    g.write_text("1-1 2p2\n3-3\n")  # 1-based
    p.write_text("0-0 1-1\n2-2\n")  # 0-based
    scores = score_files(g, p)
    assert (scores.aer, scores.precision, scores.recall) == (0.0, 1.0, 1.0)
    assert score_files(g, p, gold_one_based=True, pred_one_based=False) == scores
    p.write_text("1-1 2-2\n3-3\n")  # the same links written 1-based
    assert score_files(g, p, pred_one_based=True) == scores
    p.write_text("0-0\n")
    with pytest.raises(ValueError, match=r"gold.talp has 2 sentences but .*pred.txt has 1"):
        score_files(g, p)
    p.write_text("0-0 1-1\n2-2\n\n\n")  # trailing empty lines hold no links: noted, not fatal
    scores = score_files(g, p)
    assert scores.aer == 0.0 and scores.sentences == 2
    assert "ignored the last 2 empty line(s)" in scores.notes[0]
    p.write_text("0-0 1-1\n2-2\n")
    with pytest.raises(AlignmentFormatError, match=r"pred.txt:1: .*index 0"):
        score_files(g, p, pred_one_based=True)


def test_command_notes_a_suspicious_index_base(tmp_path):
    g, p = tmp_path / "gold.talp", tmp_path / "pred.txt"
    g.write_text("1-1 2-2\n")
    p.write_text("1-1 2-2\n")  # 1-based, read as 0-based by default
    result = align_score_command(g, p)
    assert result.aer == 0.5  # only (1, 1) is right by accident
    assert any("--pred-one-based" in note for note in result.notes)
    assert align_score_command(g, p, pred_one_based=True).notes == ()
    assert (
        "AER 0.0  precision 100.0  recall 100.0  (1 sentences"
        in align_score_command(g, p, pred_one_based=True).summary()
    )


# ------------------------------------------------------------------------------ real data
def _data_dir() -> Path:
    root = os.environ.get("ATTNKIT_DATA_DIR")
    base = Path(root) if root else Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
    folder = base / "word-alignment"
    if not folder.is_dir():
        pytest.skip(f"word-alignment data not found at {folder} (set ATTNKIT_DATA_DIR)")
    return folder


# awesome-align's README (fine-tuned mBERT rows): AER ro-en 20.7, zh-en 13.3. Conventions, from
# SOURCE.md and the data: left side (ro / zh) first in both files; gold 1-based with `p` marking
# possible links (ro-en has none); the predictions 0-based, sure only.
PUBLISHED = {
    # pair: (AER in percent, |A|, |S|, |P|, |A ∩ S|, |A ∩ P|)
    "roen": (20.7, 5014, 6198, 6198, 4443, 4443),
    "zhen": (13.3, 11385, 11238, 11416, 9743, 9868),
}


@pytest.mark.parametrize("pair", sorted(PUBLISHED))
def test_awesome_align_published_aer(pair):
    folder = _data_dir() / "awesome-align-examples"
    percent, n_a, n_s, n_p, n_as, n_ap = PUBLISHED[pair]
    gold_path, pred_path = folder / f"{pair}.gold", folder / f"{pair}.awesome-align.out"
    scores = align_score_command(gold_path, pred_path, gold_one_based=True, pred_one_based=False)
    assert round(100 * scores.aer, 1) == percent
    assert (scores.predicted, scores.sure, scores.possible) == (n_a, n_s, n_p)
    assert (scores.predicted_sure, scores.predicted_possible) == (n_as, n_ap)
    assert scores.aer == 1 - (n_as + n_ap) / (n_a + n_s)
    assert scores.notes == ()
    # Every link, gold and predicted, falls inside its sentence pair.
    source, target = read_src_tgt(folder / f"{pair}.src-tgt")
    check_bounds(GoldCorpus(source, target, read_pharaoh(gold_path, one_based=True)), "gold")
    check_bounds(GoldCorpus(source, target, read_pharaoh(pred_path)), "pred")
    # The conventions matter: the wrong index base or side order moves the figure far off.
    assert score_files(gold_path, pred_path, gold_one_based=False).aer > scores.aer + 0.3
    flipped = [flip(a.links) for a in read_pharaoh(pred_path)]
    assert alignment_error_rate(read_pharaoh(gold_path, True), flipped).aer > scores.aer + 0.3
    with pytest.raises(AlignmentFormatError, match="index 0"):
        score_files(gold_path, pred_path, pred_one_based=True)


def _raw_rwth(lines: list[str]) -> list[Alignment]:
    """RWTH's own format: ``SENT: n`` then ``S i j`` / ``P i j`` lines, 0-based."""
    sentences: list[tuple[set, set]] = []
    for line in lines:
        kind, *rest = line.split()
        if kind == "SENT:":
            assert int(rest[0]) == len(sentences)
            sentences.append((set(), set()))
        else:
            sentences[-1][kind == "P"].add((int(rest[0]), int(rest[1])))
    return [gold(s, p) for s, p in sentences]


def test_rwth_deen_gold():
    tarball = _data_dir() / "rwth-deen" / "DeEnGoldAlignment.tar.gz"
    corpus = read_rwth_deen(tarball)
    assert len(corpus.source) == len(corpus.target) == len(corpus.gold) == 508
    sure = sum(len(a.sure) for a in corpus.gold)
    possible_only = sum(len(a.possible - a.sure) for a in corpus.gold)
    assert (sure, possible_only) == (9613, 921)
    assert corpus.source[0].startswith("Wir glauben nicht")
    assert (0, 0) in corpus.gold[0].sure  # Wir - We
    # The .talp file (1-based) says what the raw RWTH file (0-based) says, but for one link: on
    # line 179 the raw file has "S 21 -100" (no such English word) where the .talp file has
    # "22-1" (the final "." to "I"). The .talp file is the one the literature scores against.
    with tarfile.open(tarball) as tar:
        raw = tar.extractfile("DeEn/alignmentDeEn").read().decode("ascii").splitlines()
    raw_gold = _raw_rwth([line for line in raw if line.strip()])
    assert len(raw_gold) == 508
    differ = [n for n, (r, t) in enumerate(zip(raw_gold, corpus.gold, strict=True)) if r != t]
    assert differ == [178]
    assert raw_gold[178].sure ^ corpus.gold[178].sure == {(21, -100), (21, 0)}
    # awesome-align's deen.src-tgt holds the same 508 tokenised pairs, in UTF-8.
    source, target = read_src_tgt(_data_dir() / "awesome-align-examples" / "deen.src-tgt")
    assert (source, target) == (corpus.source, corpus.target)


def test_align_score_command_line(tmp_path):
    from typer.testing import CliRunner

    from attnkit.cli import app

    (tmp_path / "gold.txt").write_text("1-1 2p2\n1-2\n", encoding="utf-8")
    (tmp_path / "pred.txt").write_text("0-0 1-1\n0-0\n", encoding="utf-8")
    runner = CliRunner()
    ok = runner.invoke(
        app,
        [
            "translation",
            "align",
            "score",
            "--gold",
            str(tmp_path / "gold.txt"),
            "--pred",
            str(tmp_path / "pred.txt"),
        ],
    )
    assert ok.exit_code == 0, ok.output
    # gold (1-based): S = {0-0, 0-1'} over two sentences, P = S + {1-1}; predictions (0-based)
    # A = {0-0, 1-1, 0-0'}: |A&S| = 1, |A&P| = 2, AER = 1 - (1 + 2) / (3 + 2) = 40%
    assert "AER 40.0" in ok.output
    bad = runner.invoke(
        app,
        [
            "translation",
            "align",
            "score",
            "--gold",
            str(tmp_path / "gold.txt"),
            "--pred",
            str(tmp_path / "missing.txt"),
        ],
    )
    assert bad.exit_code == 2 and "missing.txt" in bad.stderr
