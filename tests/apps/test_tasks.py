"""The task registry behind ``attnkit train`` / ``attnkit evaluate``."""

import pytest

from attnkit.apps import TASKS, app_named, task_of
from attnkit.config import ConfigError


def test_task_defaults_to_translation_and_reads_the_key(tmp_path):
    plain = tmp_path / "a.yaml"
    plain.write_text("name: a\ntrain:\n  epochs: 1\n")
    assert task_of(plain) == "translation"
    named = tmp_path / "b.yaml"
    named.write_text("name: b\ntask: translation\n")
    assert task_of(named) == "translation"


def test_unknown_task_names_file_line_and_choices(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\n\ntask: summarise\n")
    with pytest.raises(
        ConfigError, match=r"bad.yaml, line 3: unknown task 'summarise'.*translation"
    ):
        task_of(bad)
    with pytest.raises(FileNotFoundError, match="missing.yaml"):
        task_of(tmp_path / "missing.yaml")


def test_translation_app_has_the_interface():
    translation = app_named("translation")
    assert translation.name == translation.group == "translation"
    assert all(translation.supports(c) for c in ("train", "evaluate", "predict", "report"))
    assert translation.supports("serve") and translation.serves_demo
    assert translation.checkpoints == ("best", "averaged", "last")
    assert set(TASKS) >= {"translation", "text-classification", "anomaly-detection"}


@pytest.mark.parametrize("name", list(TASKS))
def test_every_app_refuses_to_open_a_run_of_another_kind(name, tmp_path):
    """``App.open`` (and so every command that opens a run) names the run's kind in one
    line before reading its config, whichever application is asked."""
    from attnkit.application import WrongRunKind

    other = next(n for n in TASKS if n != name)
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(f"name: x\ntask: {other}\nnot_a_field: 1\n")
    with pytest.raises(WrongRunKind) as caught:
        app_named(name).open(run)
    assert caught.value.found == other and caught.value.needed == name


def test_train_reports_the_scores_and_the_device_the_engine_used(monkeypatch, tmp_path):
    """``App.train`` turns the engine's result into ``Trained``: the monitored best score,
    the task's final scores, and the device the engine trained on (not assumed)."""
    from attnkit.engine import trainer
    from attnkit.engine.results import TrainResult

    history = [{"epoch": 1, "seconds": 2.0, "valid_loss": 0.5}]
    result = TrainResult.from_history(tmp_path, history, 10)
    result.final, result.device = {"test_accuracy": 0.9}, "cuda:0"
    monkeypatch.setattr(trainer, "fit", lambda task, run_dir, **kwargs: result)
    app = app_named("image-classification")
    monkeypatch.setattr(
        type(app),
        "task",
        lambda self, cfg: type("T", (), {"monitor": "valid_loss", "mode": "min"})(),
    )
    trained = app.train(None, tmp_path)
    assert trained.device == "cuda:0" and trained.seconds == 2.0
    assert trained.metrics == {"valid_loss": 0.5, "test_accuracy": 0.9}
