"""Hard alignments from attention, symmetrisation, subword merging and the Pharaoh format."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnkit.interpret.alignments import (
    Alignment,
    AlignmentFormatError,
    argmax_links,
    flip,
    format_pharaoh_line,
    grow_diag,
    grow_diag_final,
    grow_diag_final_and,
    intersection,
    merge_pieces,
    merge_subwords,
    parse_pharaoh_line,
    piece_word_ids,
    read_pharaoh,
    symmetrise,
    threshold_links,
    union,
    word_attention,
    write_pharaoh,
)
from attnkit.interpret.structure import AttentionRecord

# Rows: 3 target words; columns: 4 source words.
WEIGHTS = torch.tensor(
    [
        [0.70, 0.10, 0.10, 0.10],
        [0.05, 0.15, 0.40, 0.40],  # a tie: the first source word wins
        [0.00, 0.00, 0.00, 0.00],  # a fully masked query: no link
    ]
)


def test_argmax_per_target_word():
    assert argmax_links(WEIGHTS) == {(0, 0), (2, 1)}


def test_argmax_per_source_word():
    # Column 0 peaks at target word 0; columns 1, 2 and 3 at target word 1.
    assert argmax_links(WEIGHTS, per="source") == {(0, 0), (1, 1), (2, 1), (3, 1)}


def test_argmax_rejects_bad_arguments():
    with pytest.raises(ValueError, match='"target" or "source"'):
        argmax_links(WEIGHTS, per="both")
    with pytest.raises(ValueError, match="2-D"):
        argmax_links(WEIGHTS[0])


def test_threshold():
    assert threshold_links(WEIGHTS, 0.4) == {(0, 0), (2, 1), (3, 1)}
    assert threshold_links(WEIGHTS, 0.71) == frozenset()
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        threshold_links(WEIGHTS, 0.0)


def test_flip():
    assert flip({(0, 3), (2, 1)}) == {(3, 0), (1, 2)}


# A worked example, by hand (5 source words, 5 target words; links are (source, target)):
#   forward  = {(0,0), (2,2), (1,1), (0,2), (3,0)}
#   backward = {(0,0), (2,2), (2,0), (4,4)}
#   intersection = {(0,0), (2,2)}
#   grow-diag: (1,1) is a diagonal neighbour of (0,0) and both its words are free -> added.
#     (0,2) and (2,0) neighbour (1,1) but all their words are aligned -> never added.
#     (3,0) and (4,4) neighbour no chosen link -> not reached.
#   final: (3,0) has a free source word -> added; (4,4) has both words free -> added.
#   final-and: (3,0) is refused (target word 0 is aligned); (4,4) is added.
FORWARD = {(0, 0), (2, 2), (1, 1), (0, 2), (3, 0)}
BACKWARD = {(0, 0), (2, 2), (2, 0), (4, 4)}


def test_symmetrisation_worked_example():
    assert intersection(FORWARD, BACKWARD) == {(0, 0), (2, 2)}
    assert union(FORWARD, BACKWARD) == FORWARD | BACKWARD
    assert grow_diag(FORWARD, BACKWARD) == {(0, 0), (1, 1), (2, 2)}
    assert grow_diag_final(FORWARD, BACKWARD) == {(0, 0), (1, 1), (2, 2), (3, 0), (4, 4)}
    assert grow_diag_final_and(FORWARD, BACKWARD) == {(0, 0), (1, 1), (2, 2), (4, 4)}
    assert symmetrise(FORWARD, BACKWARD, "grow-diag-final") == grow_diag_final(FORWARD, BACKWARD)
    with pytest.raises(ValueError, match="unknown symmetrisation 'gdf'"):
        symmetrise(FORWARD, BACKWARD, "gdf")


def test_grow_diag_follows_a_diagonal_chain():
    # Only (0,0) is agreed on; the diagonal of the forward direction grows from it link by link.
    forward = {(0, 0), (1, 1), (2, 2), (3, 3)}
    assert grow_diag(forward, {(0, 0)}) == forward


links = st.frozensets(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=20)


@given(links, links)
def test_grow_diag_final_lies_between_intersection_and_union(forward, backward):
    low, high = intersection(forward, backward), union(forward, backward)
    for method in (grow_diag, grow_diag_final, grow_diag_final_and):
        result = method(forward, backward)
        assert low <= result <= high
    assert grow_diag(forward, backward) == grow_diag(backward, forward)
    assert grow_diag_final(forward, forward) == forward
    for method in (grow_diag, grow_diag_final):  # any iterable of links will do
        assert method(iter(forward), iter(backward)) == method(forward, backward)


@given(links, links)
def test_grow_diag_final_aligns_every_word_the_union_aligns(forward, backward):
    result, high = grow_diag_final(forward, backward), union(forward, backward)
    assert {i for i, _ in result} == {i for i, _ in high}
    assert {j for _, j in result} == {j for _, j in high}


def test_piece_word_ids_and_words():
    pieces = ["▁The", "▁un", "believ", "able", "▁", ",", "▁cat"]
    assert piece_word_ids(pieces) == [0, 1, 1, 1, 2, 2, 3]
    assert merge_pieces(pieces) == ["The", "unbelievable", ",", "cat"]
    assert piece_word_ids(["ab", "▁c"]) == [0, 1]  # a first piece without "▁" still starts a word
    assert piece_word_ids([]) == []


def test_merge_subwords_sums_source_pieces_and_averages_target_pieces():
    src = ["▁a", "b", "▁c"]  # words: ab, c
    tgt = ["▁x", "y", "▁z"]  # words: xy, z
    weights = torch.tensor(
        [
            [0.2, 0.3, 0.5],  # x
            [0.6, 0.2, 0.2],  # y
            [0.1, 0.1, 0.8],  # z
            [0.3, 0.3, 0.4],  # the EOS step: dropped
        ]
    )
    words = merge_subwords(weights, src, tgt)
    expected = torch.tensor([[(0.5 + 0.8) / 2, (0.5 + 0.2) / 2], [0.2, 0.8]], dtype=torch.float64)
    torch.testing.assert_close(words, expected)
    torch.testing.assert_close(words.sum(-1), torch.ones(2, dtype=torch.float64))
    # Without the EOS row the result is the same; heads in front are kept.
    torch.testing.assert_close(merge_subwords(weights[:3], src, tgt), expected)
    assert merge_subwords(weights.expand(4, 4, 3), src, tgt).shape == (4, 2, 2)


def test_merge_subwords_checks_shapes():
    with pytest.raises(ValueError, match="3 source columns"):
        merge_subwords(torch.ones(2, 2), ["▁a", "b", "▁c"], ["▁x"])
    with pytest.raises(ValueError, match="1 target rows, or 2 with the EOS step"):
        merge_subwords(torch.ones(3, 1), ["▁a"], ["▁x"])


def test_word_attention_of_a_record_and_of_a_result_that_provides_one():
    # two layers of cross-attention: 1 head, rows "▁x" and the EOS step, columns "▁a" "b"
    layers = [torch.tensor([[[0.5, 0.5], [1.0, 0.0]]]), torch.tensor([[[0.2, 0.8], [0, 1.0]]])]
    record = AttentionRecord({"cross": layers}, {"cross": (["▁x", "</s>"], ["▁a", "b"])})

    class Decoded:  # an application's result: the core knows it only by attention_record()
        def attention_record(self, hypothesis=0):
            return record

    one = torch.ones(1, 1, dtype=torch.float64)  # one word each side: all its attention
    for given_ in (record, Decoded(), [Decoded()]):
        torch.testing.assert_close(word_attention(given_, "layer0.cross"), one)
        torch.testing.assert_close(word_attention(given_, "layer1.cross"), one)
    with pytest.raises(ValueError, match=r"named 'cross'; layers by stack: \{'cross': 2\}"):
        word_attention(record, "cross")  # two layers: say which
    pieces = AttentionRecord({"cross": layers[:1]}, {"cross": (["▁x", "y"], ["▁a", "b"])})
    torch.testing.assert_close(  # no EOS row: both rows are pieces of word 0, averaged
        word_attention(pieces, "cross"), one
    )
    with pytest.raises(ValueError, match="no labelled attention named 'self'"):
        word_attention(pieces, "self")


def test_alignment_keeps_sure_inside_possible():
    a = Alignment(frozenset({(0, 0)}), frozenset({(1, 1)}))
    assert a.possible == a.links == {(0, 0), (1, 1)}


def test_pharaoh_line_parsing():
    a = parse_pharaoh_line("1-1 2p3  3-2\n", one_based=True)
    assert a.sure == {(0, 0), (2, 1)}
    assert a.possible == {(0, 0), (2, 1), (1, 2)}
    assert parse_pharaoh_line("0-0 1p2").sure == {(0, 0)}
    assert parse_pharaoh_line("   ") == Alignment()


def test_pharaoh_round_trip(tmp_path):
    sentences = [
        Alignment(frozenset({(0, 0), (2, 1)}), frozenset({(1, 2)})),
        Alignment(),  # a sentence without links stays an empty line
        Alignment(frozenset({(10, 12)})),
    ]
    for one_based in (False, True):
        path = tmp_path / f"a{int(one_based)}.txt"
        write_pharaoh(path, sentences, one_based=one_based)
        assert read_pharaoh(path, one_based=one_based) == sentences
    assert (tmp_path / "a1.txt").read_text() == "1-1 2p3 3-2\n\n11-13\n"
    assert format_pharaoh_line({(1, 0), (0, 1)}) == "0-1 1-0"


def test_pharaoh_errors_name_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("0-0 1-1\n2-2 3:3\n")
    with pytest.raises(AlignmentFormatError, match=r"bad.txt:2: bad link '3:3'"):
        read_pharaoh(path)
    path.write_text("1-1\n0-1\n")
    with pytest.raises(AlignmentFormatError, match=r"bad.txt:2: .*index 0 .*1-based"):
        read_pharaoh(path, one_based=True)
    for token in ("1-", "-1", "1p", "a-b", "1-2-3", "1p2p3", "١-٢"):
        with pytest.raises(AlignmentFormatError, match="expected i-j or ipj"):
            parse_pharaoh_line(token)
    path.write_bytes(b"0-0\n1-1 \xff\n")
    with pytest.raises(AlignmentFormatError, match=r"bad.txt:2: not UTF-8"):
        read_pharaoh(path)
    with pytest.raises(AlignmentFormatError, match="no such file"):
        read_pharaoh(tmp_path / "missing.txt")


def test_pharaoh_trailing_empty_lines(tmp_path):
    path = tmp_path / "gold.talp"
    path.write_text("1-1\n\n2-2\n\n")
    assert len(read_pharaoh(path, one_based=True)) == 4
    assert len(read_pharaoh(path, one_based=True, drop_trailing_empty=True)) == 3


def test_wordpiece_and_byte_level_pieces_merge_to_their_words():
    """The issue's case: a WordPiece input merged into one wrong word when only "▁" was known."""
    wordpiece = ["un", "##bel", "##ie", "##va", "##bly", "token", "##ization"]
    assert piece_word_ids(wordpiece) == [0, 0, 0, 0, 0, 1, 1]
    assert merge_pieces(wordpiece) == ["unbelievably", "tokenization"]
    byte_level = ["The", "Ġcat", "Ġunbeliev", "ably", "Ġsat"]
    assert piece_word_ids(byte_level) == [0, 1, 2, 2, 3]
    assert merge_pieces(byte_level) == ["The", "cat", "unbelievably", "sat"]
    assert merge_pieces(["##", "a"]) == ["##a"]  # a bare "##" token is no continuation mark
    w = torch.softmax(torch.randn(2, 7), -1)  # (T_out, S): two target pieces, one word
    merged = merge_subwords(w, wordpiece, ["Ġsat", "Ġdown"])
    torch.testing.assert_close(merged[:, 0], w[:, :5].sum(-1).double())
