"""Training end to end on a tiny corpus: files, resume, averaging, refusing to overwrite."""

import json
from dataclasses import replace

import pytest
import torch
from safetensors.torch import load_file

from attnkit.apps.translation.config import load_experiment
from attnkit.apps.translation.decode.run import load_run
from attnkit.apps.translation.training import train
from attnkit.engine.rundir import RunDir


def test_run_directory_holds_everything(trained_run, tiny_config):
    run_dir, result = trained_run
    run = RunDir(run_dir)
    for path in (run.config, run.model, run.averaged, run.metrics, run.last / "trainer.json"):
        assert path.exists(), path
    assert (run_dir / "spm.model").exists() and any(run.tensorboard.iterdir())
    assert load_experiment(run.config) == tiny_config()  # the config round-trips
    history = json.loads(run.metrics.read_text())["history"]
    assert len(history) == 2 and result.epochs_run == 2
    assert history[1]["train_loss"] < history[0]["train_loss"]
    assert {"valid_loss", "valid_bleu", "valid_chrf", "lr", "seconds"} <= set(history[0])
    # best = highest validation BLEU, ties broken by the lower validation loss
    best = max(history, key=lambda h: (h["valid_bleu"], -h["valid_loss"]))
    assert result.best_epoch == best["epoch"]


def test_averaged_checkpoint_is_the_mean_of_the_last_epochs(trained_run):
    run = RunDir(trained_run[0])
    e1, e2 = load_file(str(run.epoch_checkpoint(1))), load_file(str(run.epoch_checkpoint(2)))
    averaged = load_file(str(run.averaged))
    for name, value in averaged.items():
        torch.testing.assert_close(value, (e1[name] + e2[name]) / 2)


def test_load_run_and_errors(trained_run, tmp_path):
    cfg, tokenizer, model = load_run(trained_run[0])
    assert not model.training and tokenizer.pad_id == 0
    with pytest.raises(FileNotFoundError, match="not a run directory"):
        load_run(tmp_path / "nothing")
    with pytest.raises(ValueError, match="unknown checkpoint"):
        load_run(trained_run[0], "middle")


def test_refuses_to_overwrite_a_trained_run(trained_run, tiny_config):
    with pytest.raises(FileExistsError, match="--resume"):
        train(tiny_config(), trained_run[0], progress=False)


def test_resume_equals_uninterrupted_training(tmp_path, tiny_config):
    three = replace(tiny_config(), train=replace(tiny_config().train, epochs=3))
    straight = train(three, tmp_path / "straight", progress=False)
    train(tiny_config(), tmp_path / "resumed", progress=False)  # epochs 1-2
    resumed = train(three, tmp_path / "resumed", resume=True, progress=False)  # epoch 3
    assert straight.epochs_run == 3 and resumed.epochs_run == 3
    a = load_file(str(RunDir(tmp_path / "straight").last / "model.safetensors"))
    b = load_file(str(RunDir(tmp_path / "resumed").last / "model.safetensors"))
    for name in a:
        torch.testing.assert_close(a[name], b[name], atol=1e-6, rtol=1e-5)


def test_resume_without_state_is_a_clear_error(tmp_path, tiny_config):
    with pytest.raises(FileNotFoundError, match="no saved training state to resume from"):
        train(tiny_config(), tmp_path / "never", resume=True, progress=False)
