"""Training, evaluating and explaining from the CLI and the Python API on generated data."""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

from attnkit.apps.classification.classifier import TextClassifier
from attnkit.cli import app

runner = CliRunner()


def test_trained_rnn_learns_the_rule_and_saves_a_run(rnn_run):
    names = {p.name for p in rnn_run.iterdir()}
    assert {"config.yaml", "model.safetensors", "vocab.json", "metrics.json"} <= names
    metrics = json.loads((rnn_run / "metrics.json").read_text())
    assert metrics["best_valid_accuracy"] >= 0.9 and len(metrics["history"]) == 4
    best = max(h["valid_accuracy"] for h in metrics["history"])
    assert metrics["best_valid_accuracy"] == best
    row = metrics["history"][metrics["best_epoch"] - 1]
    assert row["valid_accuracy"] == best  # the kept model is the best by dev accuracy
    assert 0.9 <= metrics["test_accuracy"] <= 1 and metrics["device"] == "cpu"
    assert (rnn_run / "checkpoints" / "last" / "model.safetensors").is_file()
    clf = TextClassifier.load(rnn_run)
    labels, weights = clf.predict(["the film was not great", "the plot was never dull"])
    assert labels == [0, 1]
    for pairs in weights:
        assert abs(sum(w for _, w in pairs) - 1) < 1e-5


def test_evaluate_and_faithfulness_commands(rnn_run, tmp_path):
    result = runner.invoke(app, ["evaluate", str(rnn_run), "--split", "test"])
    assert result.exit_code == 0, result.output
    assert "accuracy" in result.output and "TF-IDF + logistic regression test" in result.output
    result = runner.invoke(app, ["evaluate", str(rnn_run), "--split", "valid"])
    assert result.exit_code == 0 and "dev: accuracy" in result.output, result.output
    out = tmp_path / "f.json"
    args = ["classification", "faithfulness", str(rnn_run), "--split", "test", "--limit", "40"]
    args += ["--output", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = {r["measure"]: r["value"] for r in json.loads(out.read_text())["rows"]}
    # the known truth: attention of a model that learned the rule finds the rationale words
    # far above chance (uniform), and above static TF-IDF weights
    assert rows["rationale mass: attention"] > rows["rationale mass: uniform"] + 0.1
    assert rows["rationale mass: attention"] > rows["rationale mass: TF-IDF"]
    assert rows["erasure flip rate: most-attended token"] >= rows["erasure flip rate: random token"]
    assert "Kendall tau" in result.output and "permutation" in result.output


def test_token_weights_view_and_classify(rnn_run, tmp_path):
    html, png = tmp_path / "v.html", tmp_path / "v.png"
    args = ["classification", "token-weights", str(rnn_run), "the acting was superb"]
    result = runner.invoke(app, [*args, "--html", str(html), "--png", str(png)])
    assert result.exit_code == 0, result.output
    assert "TF-IDF" in html.read_text() and png.stat().st_size > 1000
    result = runner.invoke(app, ["classification", "classify", str(rnn_run), "the film was awful"])
    assert result.exit_code == 0 and result.output.startswith("0\t")
    lines = tmp_path / "in.txt"
    lines.write_text("the film was awful\n\nthe plot was never dull\n", encoding="utf-8")
    result = runner.invoke(app, ["predict", str(rnn_run), str(lines)])
    assert result.exit_code == 0, result.output
    rows = [row.split("\t") for row in result.output.splitlines()]
    assert [r[:2] for r in rows] == [["0", "the film was awful"], ["1", "the plot was never dull"]]
    assert rows[1][2].split()[-1].startswith("dull:")
    result = runner.invoke(app, ["predict", str(rnn_run), str(lines), "--json"])
    predicted = json.loads(result.output)
    assert predicted["columns"] == ["label", "text", "attention"] and len(predicted["rows"]) == 2


def test_evaluate_prints_json_and_old_names_still_work(rnn_run):
    result = runner.invoke(app, ["evaluate", str(rnn_run), "--split", "dev", "--json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    assert scores["split"] == "dev" and 0.9 <= scores["metrics"]["accuracy"] <= 1
    assert scores["count"] == 120 and "TF-IDF + logistic regression" in scores["baselines"]
    result = runner.invoke(app, ["classify", str(rnn_run), "the film was awful"])
    assert result.exit_code == 0 and result.stdout.startswith("0\t")
    assert "moved to `attnkit classification classify`" in result.stderr


def test_a_run_of_another_kind_is_named_before_its_config_is_read(rnn_run, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.yaml").write_text("name: x\ntask: captioning\nunknown: 1\n")
    result = runner.invoke(app, ["classification", "classify", str(other), "a text"])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"attnkit classification classify: error: {other} is a captioning run; "
        "attnkit classification classify needs a text-classification run"
    )


def test_transformer_trains_saves_and_reloads_identically(tmp_path, write_config):
    from attnkit.apps.classification.app import APP

    config = write_config(tmp_path, kind="transformer", epochs=1, lr=0.002)
    trained = APP.train(APP.load_config(config), tmp_path / "tf", resume=False, progress=False)
    assert {"valid_accuracy", "test_accuracy"} <= set(trained.metrics)
    texts = ["the film was great", "the plot seemed really dull and the cast was old"]
    first = TextClassifier.load(tmp_path / "tf")
    second = TextClassifier.load(tmp_path / "tf")
    np.testing.assert_allclose(
        first.probabilities(first.encode(texts)), second.probabilities(second.encode(texts))
    )
    assert len(first.predict(texts)[1][1]) == len(texts[1].split())


def test_config_and_data_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntask: text-classification\nmodel:\n  kind: rnn\n  hiden_dim: 3\n")
    result = runner.invoke(app, ["train", str(bad), "-o", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert "bad.yaml, line 5: unknown key 'hiden_dim'" in result.output
    result = runner.invoke(app, ["evaluate", str(tmp_path / "nowhere"), "--split", "dev"])
    assert result.exit_code == 2


def test_resume_continues_from_the_last_epoch(rnn_run, tmp_path, write_config):
    import shutil

    from attnkit.apps.classification.app import APP

    run_dir = tmp_path / "resumed"
    shutil.copytree(rnn_run, run_dir)
    before = json.loads((run_dir / "metrics.json").read_text())["history"]
    APP.train(
        APP.load_config(write_config(tmp_path, epochs=5)), run_dir, resume=True, progress=False
    )
    after = json.loads((run_dir / "metrics.json").read_text())["history"]
    assert [h["epoch"] for h in after] == [1, 2, 3, 4, 5] and after[:4] == before
