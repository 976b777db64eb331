"""The summarization application through the command line, on the generated copy task: a
pointer-generator learns to copy unknown names and numbers (a decoder without the pointer
cannot), evaluate scores ROUGE against the references, predict writes the attention picture,
load_run summarises, and bad input is one line naming the file and line (exit 2)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from matplotlib.image import imread
from typer.testing import CliRunner

import attnkit
from attnkit.apps.summarization.copytask import write_copy_task
from attnkit.cli import app

runner = CliRunner()


def _config(root, paths, copy: bool) -> str:
    config = root / f"c-{copy}.yaml"
    config.write_text(
        f"""name: copy
task: summarization
data: {{train_path: {paths["train"]}, valid_path: {paths["valid"]}, test_path: {paths["test"]},
        min_count: 3, max_source: 40, max_target: 12}}
model: {{embed_dim: 16, hidden_dim: 16, attention_dim: 16, copy: {str(copy).lower()},
         coverage: {str(copy).lower()}}}
train: {{epochs: 10, batch_size: 16, learning_rate: 0.01, threads: 1, tensorboard: false,
         beam: 2, max_len: 10, valid_papers: 10}}
""",
        encoding="utf-8",
    )
    return str(config)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("sum")
    paths = write_copy_task(root / "data", sizes=(300, 20, 20))
    found = {}
    for copy in (True, False):
        out = root / ("pointer" if copy else "seq2seq")
        result = runner.invoke(app, ["train", _config(root, paths, copy), "-o", str(out)])
        assert result.exit_code == 0, result.output
        found[copy] = out
    return found


def _evaluate(run) -> dict:
    result = runner.invoke(app, ["evaluate", str(run), "--split", "test", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["metrics"]


def test_the_pointer_copies_what_the_vocabulary_lacks(runs):
    pointer, plain = _evaluate(runs[True]), _evaluate(runs[False])
    assert pointer["rougeL"] > 90 and pointer["p_gen"] < 0.5  # names copied, not generated
    assert plain["rougeL"] < pointer["rougeL"] - 20  # <unk> where the name should be
    record = json.loads((runs[True] / "evaluation-test.json").read_text(encoding="utf-8"))
    assert record["rougeL"] == pointer["rougeL"] and len(record["predictions"]) == 20


def test_predict_writes_the_summary_and_its_attention_picture(runs, tmp_path):
    abstract = tmp_path / "abstract.txt"
    abstract.write_text(
        "we study the model of zuzuzu . it finds 777 cases in all . the results are good .",
        encoding="utf-8",
    )
    picture = tmp_path / "summary.png"
    args = ["predict", str(runs[True]), str(abstract), "--picture", str(picture), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["rows"]
    assert row[1].startswith("zuzuzu finds 777")
    pixels = imread(picture)
    assert pixels.shape[0] > 50 and float(pixels.std()) > 0.01


def test_load_run_summarizes_with_attention_p_gen_and_coverage(runs):
    run = attnkit.load_run(runs[True])
    (s,) = run.summarize(["we study the method of kalomi . it reports 42 cases in all ."])
    assert s.words[:3] == ["kalomi", "reports", "42"] and s.copied[0]
    peak = s.source[int(np.argmax(s.attention[0]))]
    assert peak == "kalomi"  # the first word is copied from where the name is
    np.testing.assert_allclose(s.coverage, s.attention.sum(0), atol=1e-6)


@pytest.mark.parametrize(
    "line, words",
    [
        ('{"paper_id": "a", "source": [" "], "target": ["x"]}', "empty"),
        ('{"paper_id": "a", "source": ["an abstract ."]}', "target"),
        ('{"paper_id": "a", "source": ["an abstract ."], "target": ["x"]', "JSON"),
    ],
)
def test_bad_training_files_are_one_line_naming_file_and_line(runs, tmp_path, line, words):
    paths = write_copy_task(tmp_path / "data", sizes=(5, 2, 2))
    good = paths["train"].read_text(encoding="utf-8")
    paths["train"].write_text(good + line + "\n", encoding="utf-8")
    config = _config(tmp_path, paths, True)
    result = runner.invoke(app, ["train", config, "-o", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    errors = [x for x in result.output.splitlines() if "error" in x]
    assert len(errors) == 1 and str(paths["train"]) in errors[0] and "line 6" in errors[0]
    assert words.lower() in errors[0].lower()
    assert not list(tmp_path.rglob("model.safetensors"))


def test_an_empty_abstract_to_predict_is_one_line(runs, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n", encoding="utf-8")
    result = runner.invoke(app, ["predict", str(runs[True]), str(empty)])
    assert result.exit_code == 2
    errors = [x for x in result.output.splitlines() if "error" in x]
    assert len(errors) == 1 and str(empty) in errors[0] and "empty" in errors[0]


def test_evaluate_output_writes_one_summary_a_line(runs, tmp_path):
    out = tmp_path / "sub" / "summaries.txt"
    args = ["evaluate", str(runs[True]), "--split", "test", "--output", str(out), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert str(out) in json.loads(result.stdout)["written"]
    record = json.loads((runs[True] / "evaluation-test.json").read_text(encoding="utf-8"))
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines == [p["prediction"] for p in record["predictions"]] and len(lines) == 20
