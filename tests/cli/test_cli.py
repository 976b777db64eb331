"""The ``attnkit`` command line, through typer's CliRunner."""

import json
import math

import pytest
from typer.testing import CliRunner

from attnkit.cli import app
from attnkit.interpret.explain import ExplainInputError

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args))


def test_explain_runs_both_built_in_examples():
    result = invoke("explain")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Thinking Machines" in out and "The cat sat on the mat (dot)" in out
    assert "The cat sat on the mat (scaled_dot)" in out
    for digits in ("112", "96", "14", "12", "0.88", "0.12"):
        assert f" {digits} " in out
    assert "4e9" not in out  # the cost table only with --cost


def test_explain_is_a_subcommand():
    result = invoke("--help")
    assert result.exit_code == 0 and "explain" in result.stdout


def test_json_output_has_the_numbers():
    result = invoke("explain", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    two_word, dot, scaled = data["walkthroughs"]
    assert two_word["scores"] == [[112.0, 96.0]] and two_word["scaled_scores"] == [[14.0, 12.0]]
    assert [round(w, 2) for w in two_word["weights"][0]] == [0.88, 0.12]
    assert dot["score"] == "dot" and scaled["score"] == "scaled_dot"
    assert dot["key_tokens"] == ["The", "cat", "sat", "on", "the", "mat"]
    assert math.isclose(dot["scores"][5][5], 1.6**2 + 1.7**2 + 1.8**2)
    assert all(math.isclose(sum(row), 1.0) for row in scaled["weights"])
    assert "cost" not in data


def test_example_selects_one():
    data = json.loads(invoke("explain", "--example", "sentence", "--json").stdout)
    assert [w["score"] for w in data["walkthroughs"]] == ["dot", "scaled_dot"]
    data = json.loads(invoke("explain", "-e", "sentence", "--score", "dot", "--json").stdout)
    assert [w["score"] for w in data["walkthroughs"]] == ["dot"]


def test_cost_table():
    result = invoke("explain", "--cost")
    assert result.exit_code == 0
    assert "4e9" in result.stdout and "16e9" in result.stdout
    assert "n > 4000" in result.stdout and "Thinking" not in result.stdout
    data = json.loads(invoke("explain", "--cost", "--json").stdout)
    flops = {row["layer"]: row["flops"] for row in data["cost"]["layers"]}
    assert flops["self-attention"] == 4_000_000_000
    assert flops["recurrent (LSTM)"] == 16_000_000_000
    assert data["walkthroughs"] == []


def test_cost_with_length_and_width():
    result = invoke("explain", "--cost", "--length", "5000", "--width", "1000", "--json")
    layers = json.loads(result.stdout)["cost"]["layers"]
    assert layers[0]["flops"] == 4 * 5000**2 * 1000 and layers[1]["flops"] == 16 * 5000 * 1000**2


def test_user_vectors_from_the_command_line():
    args = ["--vector", "1,0", "--vector", "0 1", "--vector", "1,1", "--tokens", "a,b,c"]
    result = invoke("explain", *args, "--score", "dot", "--normaliser", "sparsemax", "--json")
    assert result.exit_code == 0, result.output
    (walk,) = json.loads(result.stdout)["walkthroughs"]
    assert walk["key_tokens"] == ["a", "b", "c"]
    assert walk["weights"] == [[0.5, 0.0, 0.5], [0.0, 0.5, 0.5], [0.0, 0.0, 1.0]]


def test_user_vectors_from_a_file(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("big 3 0\nsmall 1 0\n")
    result = invoke("explain", "--vectors", str(path), "--normaliser", "hard")
    assert result.exit_code == 0, result.output
    assert "big" in result.stdout and "Thinking" not in result.stdout
    data = json.loads(invoke("explain", "--vectors", str(path), "--json").stdout)
    scaled = data["walkthroughs"][0]["scaled_scores"]
    r = math.sqrt(2)
    assert scaled[0] == pytest.approx([9 / r, 3 / r]) and scaled[1] == pytest.approx([3 / r, 1 / r])


@pytest.mark.parametrize(
    ("content", "expected"),
    [("1 2\n3\n", "v.txt, line 2: 1 numbers, but line 1 has 2"), ("1 2\n3 b\n", "line 2: 'b'")],
)
def test_bad_file_is_one_line_and_exit_code_2(tmp_path, content, expected):
    path = tmp_path / "v.txt"
    path.write_text(content)
    result = invoke("explain", "--vectors", str(path))
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("attnkit explain: error: ")
    assert expected in lines[0] and "Traceback" not in result.stderr


def test_missing_file_and_bad_choice(tmp_path):
    result = invoke("explain", "--vectors", str(tmp_path / "missing.txt"))
    assert result.exit_code == 2 and "missing.txt: no such file" in result.stderr
    result = invoke("explain", "--normaliser", "gumbel")
    assert result.exit_code == 2 and "--normaliser 'gumbel' is not one of" in result.stderr
    result = invoke("explain", "--vectors", "x.txt", "--vector", "1,2")
    assert result.exit_code == 2 and "not both" in result.stderr


def test_debug_shows_the_exception(tmp_path):
    result = invoke("explain", "--vectors", str(tmp_path / "missing.txt"), "--debug")
    assert result.exit_code != 0 and isinstance(result.exception, ExplainInputError)


def test_experiment_positions_names_an_unknown_scheme(tmp_path):
    result = invoke(
        "translation", "experiment", "positions", "-o", str(tmp_path), "--scheme", "learned"
    )
    assert result.exit_code == 2
    assert "unknown position schemes ['learned']" in result.output
    assert not (tmp_path / "data").exists()  # refused before any work


def test_experiment_positions_reuses_trained_runs(tmp_path, monkeypatch):
    """The command trains, prints both tables and draws both figures (a tiny corpus here)."""
    from attnkit.apps.translation.experiments import positions

    real = positions.run_positions
    monkeypatch.setattr(
        positions, "run_positions", lambda *a, **k: real(*a, **k | {"sizes": (200, 10, 40)})
    )
    tiny = ["--set", "train.epochs=1", "--set", "model.d_model=32", "--set", "model.d_ff=64"]
    args = [
        "translation",
        "experiment",
        "positions",
        "-o",
        str(tmp_path),
        "--scheme",
        "rope",
        *tiny,
    ]
    result = invoke(*args, "--scheme", "none", "--set", "data.vocab_size=200")
    assert result.exit_code == 0, result.output
    assert "BLEU by source length" in result.output and "Cost (this run)" in result.output
    assert "Output / reference length" in result.output
    assert (tmp_path / "bleu_by_length.png").stat().st_size > 0
    assert (tmp_path / "position_terms.png").stat().st_size > 0  # rope's row; none has none
