"""One grammar for every run: `attnkit.load_run` from Python, and `evaluate | predict | report
| serve` dispatched on the run's task, refusing in one line what a task does not support."""

import torch
import yaml
from typer.testing import CliRunner

import attnkit
from attnkit.apps.translation.decode.records import plot_translation
from attnkit.apps.translation.decode.run import TranslationRun, load_run
from attnkit.apps.translation.decode.translate import translate_texts
from attnkit.cli import app


def test_load_run_translates_with_attention_that_plots(trained_run, tmp_path):
    run_dir, _ = trained_run
    run = attnkit.load_run(run_dir)
    assert isinstance(run, TranslationRun) and run.task == "translation"
    (t,) = run.translate(["the black cat sleeps ."], beam=1, attention=True)
    cfg, tok, model = load_run(run_dir)
    (want,) = translate_texts(model, tok, ["the black cat sleeps ."], cfg.decode, beam_size=1)
    assert t.text == want.text
    cross = t.attention[0]["cross"]  # (H, T_out, S)
    assert torch.allclose(cross.sum(-1), torch.ones(cross.shape[:-1]), atol=1e-5)
    assert plot_translation(t, "cross", tmp_path / "map.png").stat().st_size > 0


def test_predict_is_translate_for_translation_runs(trained_run, tmp_path):
    run_dir, _ = trained_run
    source = tmp_path / "in.txt"
    source.write_text("the black cat sleeps .\na dog runs .\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["predict", str(run_dir), str(source)])
    assert result.exit_code == 0, result.output
    run = attnkit.load_run(run_dir)
    want = [t.text for t in run.translate(["the black cat sleeps .", "a dog runs ."])]
    assert result.stdout.splitlines() == want


def test_a_command_or_option_a_run_lacks_is_refused_naming_its_kind(tmp_path, monkeypatch):
    from attnkit.apps import app_named

    other = tmp_path / "anomalies"
    other.mkdir()
    (other / "config.yaml").write_text(yaml.safe_dump({"task": "anomaly-detection"}))
    result = CliRunner().invoke(app, ["evaluate", str(other), "--beam", "3"])
    assert result.exit_code == 2
    assert result.stderr.strip().endswith("--beam: not taken by anomaly-detection runs")
    # an application that shows no input to a page does not serve one
    monkeypatch.setattr(type(app_named("anomaly-detection")), "serve_input", None)
    result = CliRunner().invoke(app, ["serve", str(other)])
    line = result.stderr.strip()
    assert result.exit_code == 2 and "\n" not in line and "anomaly-detection run" in line
    assert "supports: train, evaluate, predict, report)" in line


def test_not_a_run_directory_is_one_line(tmp_path):
    for command in ("evaluate", "predict", "report"):
        result = CliRunner().invoke(app, [command, str(tmp_path / "nothing")])
        assert result.exit_code == 2 and "no such run directory" in result.stderr


def test_a_failed_train_leaves_no_half_made_run_directory(tmp_path, fast_config):
    from attnkit.config import save_yaml

    cfg = fast_config()
    cfg.data.max_len = 1  # every training pair is dropped: refused before any update
    save_yaml(cfg, tmp_path / "c.yaml")
    result = CliRunner().invoke(app, ["train", str(tmp_path / "c.yaml"), "-o", str(tmp_path / "r")])
    assert result.exit_code == 2 and "no training pairs left" in result.stderr, result.output
    assert not (tmp_path / "r").exists()


def test_version():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"attnkit {attnkit.__version__}"


def test_help_lists_commands_in_learning_order():
    text = CliRunner().invoke(app, ["--help"]).stdout
    names = ("explain", "demo", "train", "evaluate", "predict", "translation", "classification")
    order = [text.index(f"\n  {c} ") for c in names]
    assert order == sorted(order), text
    assert "<bool>" not in text and "translate " not in text  # moved names are hidden aliases


def test_help_imports_no_torch():
    """``attnkit --help`` lists every application's group without importing torch (an App's
    methods import what they need when called)."""
    import subprocess
    import sys

    code = "import sys, attnkit.cli; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
