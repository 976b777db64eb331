"""attnkit train / translation translate / evaluate through the command line on a tiny run."""

import json

from typer.testing import CliRunner

from attnkit.apps.translation.decode.run import load_run
from attnkit.apps.translation.decode.translate import translate_texts
from attnkit.cli import app
from attnkit.config import save_yaml
from attnkit.interpret.record import load_attention

runner = CliRunner()


def test_translate_matches_the_library_and_saves_attention(trained_run, tmp_path):
    run_dir = trained_run[0]
    sentences = ["The red dog sleeps.", "The small cat sees the big blue table."]
    source = tmp_path / "in.txt"
    source.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    result = runner.invoke(
        app,
        [
            "translation",
            "translate",
            str(run_dir),
            "--input",
            str(source),
            "--beam",
            "2",
            "--save-attention",
            str(tmp_path / "att"),
        ],
    )
    assert result.exit_code == 0, result.output
    cfg, tokenizer, model = load_run(run_dir)
    expected = translate_texts(model, tokenizer, sentences, cfg.decode, beam_size=2)
    assert result.output.splitlines() == [t.text for t in expected]
    for i, t in enumerate(expected):
        record, meta = load_attention(tmp_path / "att", i)
        weights = record["cross"][-1]  # the last layer: (H, T_out, S)
        steps = len(t.tgt_pieces[0]) + t.finished[0]  # one more row for the EOS step
        assert weights.shape == (1, steps, len(t.src_pieces))
        assert meta["outputs"][0] == t.text and meta["src_pieces"] == t.src_pieces


def test_evaluate_prints_bleu_and_signature(trained_run, tmp_path):
    out = tmp_path / "hyp.txt"
    args = ["evaluate", str(trained_run[0]), "--split", "test", "--beam", "1"]
    result = runner.invoke(app, [*args, "--output", str(out)])
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"{trained_run[0]} test: bleu ") and "sentences)" in first
    assert "nrefs:1|case:mixed|eff:no|tok:13a" in result.stdout
    assert "BLEU by source length" in result.stdout and f"wrote {out}" in result.stdout
    n = int(first.rsplit("(", 1)[1].split()[0])
    assert len(out.read_text(encoding="utf-8").splitlines()) == n


def test_evaluate_json_has_the_scores(trained_run):
    args = ["evaluate", str(trained_run[0]), "--split", "test", "--beam", "1", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["unit"] == "sentences" and scores["count"] > 0
    metrics = scores["metrics"]
    assert set(metrics) == {"bleu", "chrf", "beam", "bleu_signature", "chrf_signature"}
    assert 0 <= metrics["bleu"] <= 100 and 0 <= metrics["chrf"] <= 100 and metrics["beam"] == 1
    assert "tok:13a" in metrics["bleu_signature"]
    (table,) = scores["tables"]
    assert table["title"] == "BLEU by source length"
    assert sum(row[1] for row in table["rows"]) == scores["count"]


def test_a_run_of_another_kind_is_refused_in_one_line(tmp_path):
    other = tmp_path / "mycls"
    other.mkdir()
    (other / "config.yaml").write_text("name: c\ntask: text-classification\n")
    text = tmp_path / "s.txt"
    text.write_text("a b\n", encoding="utf-8")
    commands = {
        "translation translate": [str(other)],
        "translation align extract": [str(other), str(text), str(text), "-o", "x.align"],
    }
    for command, rest in commands.items():
        result = runner.invoke(app, [*command.split(), *rest], input="hello\n")
        assert result.exit_code == 2, result.output
        assert result.stderr.strip() == (
            f"attnkit {command}: error: {other} is a text-classification run; "
            f"attnkit {command} needs a translation run"
        )


def test_train_command_and_bad_config(tmp_path, tiny_config):
    config = tmp_path / "tiny.yaml"
    save_yaml(tiny_config(), config)
    text = config.read_text().replace("epochs: 2", "epochs: 1")
    config.write_text(text)
    result = runner.invoke(app, ["train", str(config), "--run-dir", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "run" / "model.safetensors").exists()
    assert (tmp_path / "run" / "train.log").read_text().count("epoch 1") == 1
    config.write_text(text.replace("epochs: 1", "epochs: 1\n  epoch: 3"))
    result = runner.invoke(app, ["train", str(config), "--run-dir", str(tmp_path / "run2")])
    assert result.exit_code == 2
    assert "unknown key 'epoch' in section 'train'" in result.stderr
    assert "Traceback" not in result.output


def test_translate_missing_run_is_one_line(tmp_path):
    args = ["translation", "translate", str(tmp_path / "none")]
    result = runner.invoke(app, args, input="hello\n")
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and "no such run directory" in result.stderr


def test_the_old_command_name_still_works_and_says_where_it_moved(tmp_path):
    result = runner.invoke(app, ["translate", str(tmp_path / "none")], input="hello\n")
    assert result.exit_code == 2
    assert "`attnkit translate` moved to `attnkit translation translate`" in result.stderr


def test_resume_auto_starts_then_continues(tmp_path, tiny_config):
    """``--resume-auto`` starts a fresh run, and on a second call continues it (what a job
    restarted by ``torchrun --max-restarts`` needs); ``--resume`` with it is an error."""
    config = tmp_path / "tiny.yaml"
    save_yaml(tiny_config(), config)
    text = config.read_text()
    config.write_text(text.replace("epochs: 2", "epochs: 1"))
    run = tmp_path / "run"
    result = runner.invoke(app, ["train", str(config), "-o", str(run), "--resume-auto"])
    assert result.exit_code == 0, result.output
    assert [h["epoch"] for h in json.loads((run / "metrics.json").read_text())["history"]] == [1]
    config.write_text(text)  # now 2 epochs: the second call adds epoch 2 only
    result = runner.invoke(app, ["train", str(config), "-o", str(run), "--resume-auto"])
    assert result.exit_code == 0, result.output
    history = json.loads((run / "metrics.json").read_text())["history"]
    assert [h["epoch"] for h in history] == [1, 2]
    both = ["train", str(config), "-o", str(run), "--resume", "--resume-auto"]
    result = runner.invoke(app, both)
    assert result.exit_code == 2 and "give one of --resume, --resume-auto" in result.stderr
