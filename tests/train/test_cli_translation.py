"""attnkit train / translate / evaluate through the command line on a tiny run."""

import json

from safetensors.torch import load_file
from typer.testing import CliRunner

from attnkit.apps.translation.run import load_run
from attnkit.apps.translation.translate import translate_texts
from attnkit.cli import app
from attnkit.config import save_yaml

runner = CliRunner()


def test_translate_matches_the_library_and_saves_attention(trained_run, tmp_path):
    run_dir = trained_run[0]
    sentences = ["The red dog sleeps.", "The small cat sees the big blue table."]
    source = tmp_path / "in.txt"
    source.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    result = runner.invoke(
        app,
        [
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
        weights = load_file(str(tmp_path / "att" / f"{i:06d}.safetensors"))["hyp0/cross"]
        meta = json.loads((tmp_path / "att" / f"{i:06d}.json").read_text(encoding="utf-8"))
        steps = len(t.tgt_pieces[0]) + t.finished[0]  # one more row for the EOS step
        assert weights.shape == (1, steps, len(t.src_pieces))
        assert meta["outputs"][0] == t.text and meta["src_pieces"] == t.src_pieces


def test_evaluate_prints_bleu_and_signature(trained_run):
    result = runner.invoke(app, ["evaluate", str(trained_run[0]), "--split", "test", "--beam", "1"])
    assert result.exit_code == 0, result.output
    assert "BLEU" in result.output and "nrefs:1|case:mixed|eff:no|tok:13a" in result.output
    assert "BLEU by source length" in result.output


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
    result = runner.invoke(app, ["translate", str(tmp_path / "none")], input="hello\n")
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and "not a run directory" in result.stderr


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
