"""SciTLDR files, the tokenizer, the vocabulary and the extended vocabulary of the pointer."""

from __future__ import annotations

import json

import pytest

from attnkit.apps.summarization.data import (
    BOS,
    EOS,
    PAD,
    SPECIALS,
    UNK,
    Paper,
    Vocabulary,
    decode_extended,
    encode_target,
    extend,
    load_split,
    read_papers,
    scitldr_path,
    tokenize,
)
from attnkit.errors import DataError

GOOD = [
    {
        "paper_id": "a1",
        "title": "ignored",
        "source": ["We study X.", "It works."],
        "source_labels": [1, 0],
        "target": ["X works.", "A study of X."],
    },
    {"paper_id": "b2", "source": ["Only one sentence."], "target": "One TLDR as a string."},
]


def write(tmp_path, lines: list[str], name: str = "papers.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_good_file_reads_every_paper_and_skips_blank_lines(tmp_path):
    path = write(tmp_path, [json.dumps(GOOD[0]), "", "   ", json.dumps(GOOD[1])])
    papers = read_papers(path)
    assert papers == [
        Paper("a1", ["We study X.", "It works."], ["X works.", "A study of X."]),
        Paper("b2", ["Only one sentence."], ["One TLDR as a string."]),
    ]
    assert papers[0].abstract == "We study X. It works."


BAD = {
    "not JSON": ('{"source": ["a"], "target": ["b"]', "not valid JSON"),
    "a list": ('["source", "target"]', "expected a JSON object, got list"),
    "no source": ('{"target": ["b"]}', "no 'source' key"),
    "no target": ('{"source": ["a"]}', "no 'target' key"),
    "blank abstract": ('{"source": ["", "  "], "target": ["b"]}', "an empty abstract"),
    "no sentences": ('{"source": [], "target": ["b"]}', "an empty abstract"),
    "number target": ('{"source": ["a"], "target": 3}', "'target' must be a string or a list"),
    "mixed target": ('{"source": ["a"], "target": ["b", 3]}', "'target' must be a string or a"),
    "source dict": ('{"source": {"a": 1}, "target": ["b"]}', "'source' must be a string or a"),
    "no targets": ('{"source": ["a"], "target": []}', "an empty 'target' list"),
    "blank target": ('{"source": ["a"], "target": ["b", " "]}', "a blank TLDR"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_each_bad_line_is_a_data_error_naming_the_file_and_the_line(tmp_path, case):
    line, message = BAD[case]
    # the bad record on line 3, after a good one and a blank line
    path = write(tmp_path, [json.dumps(GOOD[0]), "", line, json.dumps(GOOD[1])])
    with pytest.raises(DataError) as err:
        read_papers(path)
    text = str(err.value)
    assert text.startswith(f"{path}, line 3: ") and message in text
    assert "\n" not in text


def test_an_empty_file_a_missing_file_and_bad_utf8_are_data_errors(tmp_path):
    for lines in ([], ["", "  "]):
        with pytest.raises(DataError, match="an empty file"):
            read_papers(write(tmp_path, lines))
    with pytest.raises(DataError, match="file not found"):
        read_papers(tmp_path / "missing.jsonl")
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(json.dumps(GOOD[0]).encode() + b"\n\xff\n")
    with pytest.raises(DataError, match=r"line 2: invalid UTF-8"):
        read_papers(bad)


def test_split_names_map_to_the_scitldr_files(tmp_path):
    assert scitldr_path("train", tmp_path) == tmp_path / "scitldr/SciTLDR-A/train.jsonl"
    assert scitldr_path("valid", tmp_path) == tmp_path / "scitldr/SciTLDR-A/dev.jsonl"
    assert scitldr_path("test", tmp_path) == tmp_path / "scitldr/SciTLDR-A/test.jsonl"
    with pytest.raises(ValueError, match="split must be one of train, valid, test"):
        scitldr_path("dev", tmp_path)


DEV = scitldr_path("valid")


@pytest.mark.skipif(not DEV.is_file(), reason=f"SciTLDR-A's dev.jsonl not found at {DEV}")
def test_the_real_dev_file_has_the_published_counts():
    papers = load_split("valid")
    assert len(papers) == 619 and sum(len(p.targets) for p in papers) == 1_453
    assert len({p.paper_id for p in papers}) == 619
    assert papers[0].source[0].startswith("Mixed precision training (MPT)")


def test_tokenize_lowercases_and_splits_words_from_punctuation():
    text = "Get 3.5x faster, e.g. on State-of-the-Art BLEU (don't) 1,000 $\\alpha$."
    assert tokenize(text) == [
        "get", "3.5x", "faster", ",", "e.g", ".", "on", "state-of-the-art", "bleu",
        "(", "don't", ")", "1", ",", "000", "$", "\\", "alpha", "$", ".",
    ]  # fmt: skip
    assert tokenize("Naïve_Bayes  ends.") == ["naïve", "_", "bayes", "ends", "."]
    assert tokenize("   ") == []


TEXTS = [["the", "cat", "sat"], ["the", "cat", "ran"], ["the", "dog"]]


def test_the_vocabulary_orders_by_count_keeps_specials_first_and_cuts():
    vocab = Vocabulary.build(TEXTS)
    # specials, then "the" (3), "cat" (2), then the ones by the word: dog, ran, sat
    assert vocab.words == [*SPECIALS, "the", "cat", "dog", "ran", "sat"]
    assert (PAD, UNK, BOS, EOS) == (0, 1, 2, 3) and SPECIALS[UNK] == "<unk>"
    assert len(Vocabulary.build(TEXTS, min_count=2)) == 6  # the, cat
    assert Vocabulary.build(TEXTS, max_size=5).words[4:] == ["the"]
    assert vocab.encode(["the", "bird", "sat"]) == [4, UNK, 8]
    assert vocab.decode([2, 4, 5, 3]) == ["<s>", "the", "cat", "</s>"]
    with pytest.raises(ValueError, match="outside the vocabulary"):
        vocab.decode([9])
    with pytest.raises(ValueError, match="max_size must be >= 4"):
        Vocabulary.build(TEXTS, max_size=3)


def test_the_vocabulary_round_trips_through_a_dict_and_a_file(tmp_path):
    vocab = Vocabulary.build(TEXTS + [["naïve", "x"]])
    again = Vocabulary.from_dict(json.loads(json.dumps(vocab.to_dict())))
    assert again.words == vocab.words and again.encode(["cat", "naïve"]) == [
        5,
        7,
    ]  # the, cat, dog, naïve
    vocab.save(tmp_path / "vocab.json")
    assert Vocabulary.load(tmp_path / "vocab.json").words == vocab.words
    with pytest.raises(DataError, match="expected the specials"):
        Vocabulary.from_dict({"specials": ["<unk>"], "words": []})
    with pytest.raises(DataError, match="repeated words"):
        Vocabulary.from_dict({"specials": list(SPECIALS), "words": ["a", "a"]})
    (tmp_path / "bad.json").write_text('{"specials": [\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.json, line 2: not valid JSON"):
        Vocabulary.load(tmp_path / "bad.json")


def test_the_extended_vocabulary_numbers_source_oovs_in_order_of_appearance():
    vocab = Vocabulary.build([["we", "train", "a", "model"]])  # 4 specials + 4 words: V = 8
    source = ["we", "train", "xlnet", "on", "a", "model", "xlnet"]
    ids, oovs = extend(source, vocab)
    # xlnet is the first unknown word (8), on the second (9); the repeated xlnet keeps 8
    assert oovs == ["xlnet", "on"]
    assert ids == [vocab.ids["we"], vocab.ids["train"], 8, 9, vocab.ids["a"], vocab.ids["model"], 8]
    # a target's source OOV gets its extended id; an OOV not in the source is <unk>
    target = ["xlnet", "beats", "a", "model", "on"]
    target_ids = encode_target(target, vocab, oovs)
    assert target_ids == [8, UNK, vocab.ids["a"], vocab.ids["model"], 9]
    assert encode_target(target, vocab, []) == [UNK, UNK, vocab.ids["a"], vocab.ids["model"], UNK]
    # decode_extended inverts both
    assert decode_extended(ids, vocab, oovs) == source
    assert decode_extended(target_ids, vocab, oovs) == ["xlnet", "<unk>", "a", "model", "on"]
    with pytest.raises(ValueError, match="outside the extended vocabulary"):
        decode_extended([10], vocab, oovs)
