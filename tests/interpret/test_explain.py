"""Worked examples to the printed digits, the torch path as a check, and input errors."""

import io
import json
import math
import re

import numpy as np
import pytest
import torch
from rich.console import Console

from attnkit.attention import attend
from attnkit.interpret import explain as ex


def rendered(walk) -> str:
    console = Console(file=io.StringIO(), width=120, color_system=None)
    ex.render(walk, console)
    return console.file.getvalue()


def table_after(text: str, heading: str) -> list[list[str]]:
    """The body rows of the first table printed after ``heading``: cells as strings."""
    block = text[text.index(heading) :].split("└", 1)[0]
    rows = [line for line in block.splitlines() if line.startswith("│")]
    return [[cell.strip() for cell in row.strip("│").split("│")] for row in rows]


def test_two_word_example_prints_the_published_digits():
    walk = ex.two_word_example()
    text = rendered(walk)
    assert table_after(text, "Step 1.") == [["Thinking", "112", "96"]]
    assert table_after(text, "Step 2.") == [["Thinking", "14", "12"]]
    assert table_after(text, "Step 3.") == [["Thinking", "0.88", "0.12"]]
    assert table_after(text, "Step 4.") == [["Thinking", "1.76", "0.24", "1.00"]]
    assert "√64 = 8" in text
    np.testing.assert_array_equal(walk.steps.scores, [[112.0, 96.0]])  # exact, by construction
    np.testing.assert_array_equal(walk.steps.scaled_scores, [[14.0, 12.0]])
    p = 1 / (1 + math.exp(-2))  # softmax(14, 12) = (e^2, 1) / (e^2 + 1)
    np.testing.assert_allclose(walk.steps.weights, [[p, 1 - p]], rtol=1e-13)


def sentence_weights_by_hand(scale: float) -> list[list[float]]:
    """Softmax of scaled dot products, with plain Python loops (no NumPy, no torch)."""
    x = [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9], [1.0, 1.1, 1.2], [1.3, 1.4, 1.5]]
    x.append([1.6, 1.7, 1.8])
    out = []
    for q in x:
        scores = [scale * sum(a * b for a, b in zip(q, k, strict=True)) for k in x]
        exps = [math.exp(s) for s in scores]
        out.append([e / sum(exps) for e in exps])
    return out


@pytest.mark.parametrize(("score", "scale"), [("dot", 1.0), ("scaled_dot", 1 / math.sqrt(3))])
def test_sentence_weights_match_a_hand_computation(score, scale):
    walk = ex.sentence_example(score)
    expected = sentence_weights_by_hand(scale)
    np.testing.assert_allclose(walk.steps.weights, expected, rtol=1e-12)
    assert walk.inputs.query_tokens == ["The", "cat", "sat", "on", "the", "mat"]
    # The printed table shows the same numbers to three decimals.
    printed = table_after(rendered(walk), "normalise each row")
    assert [row[0] for row in printed] == walk.inputs.query_tokens
    assert [[float(c) for c in row[1:]] for row in printed] == [
        [float(f"{w:.3f}") for w in row] for row in expected
    ]
    first_row = {"dot": "0.101 0.121 0.145 0.174 0.208 0.249"}
    first_row["scaled_dot"] = "0.127 0.140 0.156 0.173 0.192 0.213"
    assert printed[0][1:] == first_row[score].split()


@pytest.mark.parametrize("normaliser", ["softmax", "sparsemax", "entmax15", "hard"])
def test_every_shown_number_equals_the_torch_path(normaliser):
    walks = ex.builtin_examples(normaliser=normaliser)
    assert [w.steps.score for w in walks] == ["scaled_dot", "dot", "scaled_dot"]
    for walk in walks:
        i = walk.inputs
        q, k, v = (torch.from_numpy(a)[None] for a in (i.queries, i.keys, i.values))  # (1, T, D)
        out = attend(q, k, v, score=walk.steps.score, normaliser=normaliser, return_scores=True)
        np.testing.assert_allclose(walk.steps.scaled_scores, out.scores[0].numpy(), rtol=1e-13)
        np.testing.assert_allclose(walk.steps.weights, out.weights[0].numpy(), atol=1e-13)
        np.testing.assert_allclose(walk.steps.context, out.context[0].numpy(), atol=1e-13)


def test_to_dict_is_json_ready():
    data = json.loads(json.dumps(ex.two_word_example().to_dict()))
    assert data["scores"] == [[112.0, 96.0]] and data["scaled_scores"] == [[14.0, 12.0]]
    assert data["d_k"] == 64 and data["scale"] == 0.125
    assert [round(w, 2) for w in data["weights"][0]] == [0.88, 0.12]


def test_text_file_with_tokens_commas_and_comments(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("# my vectors\nThe: 1, 0\n\ncat 0 1  # a comment\n2 2\n")
    inputs = ex.read_vectors(path)
    np.testing.assert_array_equal(inputs.keys, [[1, 0], [0, 1], [2, 2]])
    assert inputs.key_tokens == ["The", "cat", "x3"] and inputs.queries is inputs.keys
    assert ex.read_vectors(path, tokens="a,b c").key_tokens == ["a", "b", "c"]


def test_json_cross_attention(tmp_path):
    path = tmp_path / "v.json"
    data = {"queries": [[1, 0]], "keys": [[1, 0], [0, 1]], "values": [[5], [7]], "tokens": ["y"]}
    path.write_text(json.dumps(data | {"key_tokens": ["a", "b"]}))
    inputs = ex.read_vectors(path)
    assert inputs.query_tokens == ["y"] and inputs.key_tokens == ["a", "b"]
    walk = ex.walkthrough(inputs, "dot", "hard")
    np.testing.assert_array_equal(walk.steps.weights, [[1, 0]])
    np.testing.assert_array_equal(walk.steps.context, [[5]])


def test_json_list_means_self_attention(tmp_path):
    path = tmp_path / "v.json"
    path.write_text("[[1, 2], [3, 4]]")
    inputs = ex.read_vectors(path, tokens="p q")
    assert inputs.keys is inputs.queries and inputs.query_tokens == ["p", "q"]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("v.txt", "1 2 3\n4 5\n", r"v\.txt, line 2: 2 numbers, but line 1 has 3"),
        ("v.txt", "1 2\n\n1 zz\n", r"v\.txt, line 3: 'zz' is not a finite number"),
        ("v.txt", "1 2\nnan 2\n", r"v\.txt, line 2: 'nan' is not a finite number"),
        ("v.txt", "cat\n", r"v\.txt, line 1: token 'cat' has no numbers"),
        ("v.txt", "# nothing\n\n", r"v\.txt: no vectors found"),
        ("v.json", '{"queries": [[1, 2],\n [3, 4, 5]]}', r"v\.json, line 2: 3 numbers, but line 1"),
        ("v.json", '{"queries": [[1, 2],\n\n [3, "a"]]}', r"v\.json, line 3: 'a' is not a number"),
        ("v.json", '{"queries": [[1, 2],\n [3 4]]}', r"v\.json, line 2: invalid JSON"),
        ("v.json", '{"query": [[1, 2]]}', r"v\.json: expected a list of vectors"),
    ],
)
def test_bad_files_name_the_file_and_line(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ex.ExplainInputError, match=message) as info:
        ex.read_vectors(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def test_missing_file_and_bad_options(tmp_path):
    with pytest.raises(ex.ExplainInputError, match=re.escape(f"{tmp_path / 'no.txt'}: no such")):
        ex.read_vectors(tmp_path / "no.txt")
    with pytest.raises(ex.ExplainInputError, match=r"--vector 2 \('1,x'\): 'x' is not"):
        ex.parse_vector_options(["1,2", "1,x"])
    with pytest.raises(ex.ExplainInputError, match="--tokens: 1 tokens for 2 vectors"):
        ex.parse_vector_options(["1,2", "3,4"], tokens="a")
    inputs = ex.parse_vector_options(["1,2", "3,4"])
    with pytest.raises(ex.ExplainInputError, match="--normaliser 'gumbel' is not one of"):
        ex.walkthrough(inputs, "dot", "gumbel")
    with pytest.raises(ex.ExplainInputError, match="--score 'general' is not one of"):
        ex.walkthrough(inputs, "general")
    with pytest.raises(ex.ExplainInputError, match="--example 'three'"):
        ex.builtin_examples("three")
