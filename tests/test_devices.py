"""``device: auto | cpu | cuda | cuda:N | mps`` (issue 34): resolved as documented, with CUDA
and MPS availability mocked for the decision only; a device torch cannot use is one line and
exit status 2 on the command line; a loaded run's modules follow the device asked for."""

import logging

import pytest
import torch
import yaml
from torch import nn
from typer.testing import CliRunner

from attnkit import devices
from attnkit.apps.translation.config import load_experiment
from attnkit.cli import app
from attnkit.config import ConfigError
from attnkit.engine.settings import TrainSettings


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(devices, "_said", set())


def _cuda(monkeypatch, count: int) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: f"Fake GPU {i}")


def test_auto_is_cuda_then_mps_then_cpu_and_says_why(monkeypatch, caplog):
    _cuda(monkeypatch, 0)
    monkeypatch.setattr(devices, "_mps_available", lambda: False)
    assert devices.resolve("auto") == (
        torch.device("cpu"),
        "auto: torch sees no CUDA GPU and no MPS",
    )
    monkeypatch.setattr(devices, "_mps_available", lambda: True)
    assert devices.resolve("auto")[0] == torch.device("mps")
    _cuda(monkeypatch, 2)
    with caplog.at_level(logging.INFO, logger="attnkit.devices"):
        assert devices.pick("auto", field="train.device") == torch.device("cuda", 0)
    assert "train.device: cuda:0 (auto: CUDA is available (Fake GPU 0))" in caplog.text
    assert devices.resolve("cuda:1")[0] == torch.device("cuda", 1)
    assert devices.resolve("cpu") == (torch.device("cpu"), "cpu")


def test_a_device_torch_cannot_use_is_refused_in_one_line(monkeypatch):
    _cuda(monkeypatch, 0)
    monkeypatch.setattr(devices, "_mps_available", lambda: False)
    with pytest.raises(devices.DeviceUnavailable, match=r"^train.device: cuda, but this torch"):
        devices.resolve("cuda", field="train.device")
    with pytest.raises(devices.DeviceUnavailable, match="mps, but this torch has no usable MPS"):
        devices.resolve("mps")
    _cuda(monkeypatch, 2)
    with pytest.raises(devices.DeviceUnavailable, match=r"sees 2 CUDA device\(s\): cuda:0..cuda:1"):
        devices.resolve("cuda:2")


@pytest.mark.parametrize("bad", ["gpu", "cuda:", "cuda:x", "CPU", ""])
def test_other_names_are_refused_at_their_line(bad, tmp_path):
    assert not devices.valid(bad)
    with pytest.raises(ValueError, match="device must be auto, cpu, cuda, cuda:N or mps"):
        TrainSettings(device=bad)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"data": {}, "model": {}, "train": {"device": bad}}))
    with pytest.raises(ConfigError, match=r"c.yaml, line \d+: train.device must be auto"):
        load_experiment(path)


def test_cuda_without_cuda_is_exit_2_from_every_command(monkeypatch, tmp_path, trained_run):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    run_dir, _ = trained_run
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"data": {"generated_sizes": [30, 5, 5]}, "model": {}}))
    for args in (
        ["train", str(config), "-o", str(tmp_path / "new"), "--device", "cuda"],
        ["evaluate", str(run_dir), "--device", "cuda"],
        ["predict", str(run_dir), "--device", "cuda"],
        ["translation", "translate", str(run_dir), "--device", "cuda"],
    ):
        result = CliRunner().invoke(app, args, input="a cat .\n")
        assert result.exit_code == 2, (args, result.output)
        assert "device: cuda, but this torch" in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "new").exists()  # nothing half-made is left


def test_a_run_and_its_modules_move_to_the_device_asked_for():
    class Run:
        def __init__(self):
            self.model, self.heads = nn.Linear(2, 2), [nn.Linear(2, 1), nn.Linear(2, 1)]
            self.device, self.name = torch.device("cpu"), "kept"

    run = devices.move(Run(), torch.device("meta"))
    assert devices.of(run.model).type == "meta" and run.device == torch.device("meta")
    assert all(devices.of(h).type == "meta" for h in run.heads) and run.name == "kept"
    assert devices.of(nn.Module()) == torch.device("cpu")


def test_load_run_puts_the_model_where_asked(trained_run):
    import attnkit

    run_dir, _ = trained_run
    run = attnkit.load_run(run_dir, device="cpu")
    assert devices.of(run.model) == torch.device("cpu")
    (t,) = run.translate(["a cat ."], beam=2, attention=True)
    assert t.attention[0]["cross"].device.type == "cpu"
