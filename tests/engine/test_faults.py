"""Damaged, mismatched and half-written checkpoints; full and unwritable disks; NaN losses;
a run directory that would need unpickling. Each error must name the file and the damage."""

import errno
import pickle
from collections import namedtuple

import pytest
import torch
from safetensors.torch import load_file, save_file

import attnkit.apps.translation.training as loop
from attnkit.apps.translation.decode.run import load_run
from attnkit.apps.translation.models.recurrent import RNNSeq2Seq
from attnkit.engine import snapshots
from attnkit.engine.checkpoint import CheckpointError, load_model, load_trainer, save_model, verify
from attnkit.engine.rundir import RunDir
from attnkit.engine.trainer import TrainingDiverged


def _model(hidden=8):
    return RNNSeq2Seq(30, 30, embed_dim=8, hidden_dim=hidden, attention="luong-general")


def _snapshot(run, model, step):
    opt = torch.optim.Adam(model.parameters())
    model(
        torch.randint(4, 30, (2, 5)),
        torch.ones(2, 5, dtype=torch.bool),
        torch.randint(4, 30, (2, 4)),
    ).logits.sum().backward()
    opt.step()
    return snapshots.write(
        run,
        model=model,
        optimizer=opt,
        scheduler=None,
        step=step,
        epoch=0,
        extra={},
        rng=[],
        keep=2,
    )


def test_damaged_and_mismatched_model_files_are_named(tmp_path):
    torch.manual_seed(0)
    path = tmp_path / "m.safetensors"
    save_model(_model(), path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # truncated
    with pytest.raises(CheckpointError, match=r"m\.safetensors: damaged checkpoint"):
        load_model(_model(), path)
    path.write_bytes(data)
    with pytest.raises(CheckpointError, match=r"m\.safetensors: wrong shapes for .*\(model "):
        load_model(_model(hidden=16), path)
    tensors = load_file(str(path))
    name = sorted(tensors)[0]
    del tensors[name]
    save_file(tensors, str(path))
    with pytest.raises(KeyError, match=rf"m\.safetensors: missing parameters {name}"):
        load_model(_model(), path)


def test_another_models_weights_are_named_in_one_short_line(tmp_path):
    path = tmp_path / "m.safetensors"
    save_file({f"other.layer{i}.weight": torch.zeros(2) for i in range(40)}, str(path))
    with pytest.raises(KeyError) as caught:
        load_model(_model(), path)
    message = str(caught.value)
    assert "other.layer0.weight, other.layer1.weight, other.layer10.weight and 37 more" in message
    assert len(message) < 200  # was every parameter's name, 40 of them


def test_checkpoints_are_verified_and_a_damaged_one_is_skipped(tmp_path, caplog):
    torch.manual_seed(0)
    run = RunDir(tmp_path)
    model = _model()
    first = _snapshot(run, model, 1)
    second = _snapshot(run, model, 2)
    assert run.last.resolve() == second and snapshots.latest(run) == second
    raw = bytearray((second / "trainer.safetensors").read_bytes())
    raw[-1] ^= 0xFF  # one flipped bit: still a valid safetensors file, but not the one written
    (second / "trainer.safetensors").write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match=r"step-00000002/trainer\.safetensors: damaged"):
        verify(second)
    assert snapshots.latest(run) == first  # the previous, complete one
    assert "skipping checkpoint" in caplog.text and "checksum differs" in caplog.text
    (first / "trainer.json").write_text("{not json")
    with pytest.raises(CheckpointError, match=r"step-00000001/trainer.json: damaged training"):
        verify(first)
    with pytest.raises(CheckpointError, match=r"no usable .*step-00000002/trainer.safetensors"):
        snapshots.latest(run)  # every one damaged: the newest one's error
    third = _snapshot(run, model, 3)  # keep=2: only the two newest remain
    assert [p.name for p in snapshots.step_dirs(run)] == ["step-00000002", "step-00000003"]
    opt = torch.optim.Adam(_model(hidden=16).parameters())
    with pytest.raises(CheckpointError, match="optimizer state does not fit"):
        load_trainer(
            third, optimizer=torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))]), scheduler=None
        )
    del opt


def test_a_failed_write_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    torch.manual_seed(0)
    run = RunDir(tmp_path)
    model = _model()
    good = _snapshot(run, model, 1)

    def disk_full(path, **kwargs):
        (path / "trainer.safetensors").write_bytes(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(snapshots, "save_trainer", disk_full)
    with pytest.raises(
        OSError,
        match=r"step-00000002 failed \(No space left on device\); "
        r"the previous checkpoint .*step-00000001 is intact",
    ):
        _snapshot(run, model, 2)
    assert snapshots.latest(run) == good and run.last.resolve() == good
    assert (
        not list(run.checkpoints.glob(".tmp-*"))
        and not (run.checkpoints / "step-00000002").exists()
    )
    load_model(_model(), run.last / "model.safetensors")


def test_unwritable_or_full_disk_is_found_before_training(tmp_path, monkeypatch, fast_config):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(OSError, match="run directory is not writable"):
        snapshots.check_writable(blocker / "run")
    with pytest.raises(OSError, match="not writable"):
        loop.train(fast_config(), blocker / "run", progress=False)
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(snapshots.shutil, "disk_usage", lambda p: usage(10**9, 10**9, 1000))
    # 36,396 fp32 parameters: 3 copies (weights, 2 Adam moments) x (2 kept + 1 being written)
    # + best + 2 per-epoch + averaged = 13 x 145,584 bytes = 1.8 MiB
    with pytest.raises(OSError, match=r"only 0\.0 MiB free .* need about 1\.8 MiB; free some"):
        loop.train(fast_config(), tmp_path / "run", progress=False)
    assert not (tmp_path / "run" / "checkpoints" / "last").exists()


def test_nan_loss_stops_at_its_update_and_resuming_never_unpickles(
    tmp_path, monkeypatch, fast_config
):
    cfg = fast_config(checkpoint_every=2)
    real, calls = loop.token_cross_entropy, []

    def poisoned(logits, *args, **kwargs):
        calls.append(1)
        loss, n = real(logits, *args, **kwargs)
        return (loss * float("nan"), n) if len(calls) == 5 else (loss, n)

    monkeypatch.setattr(loop, "token_cross_entropy", poisoned)
    with pytest.raises(
        TrainingDiverged,
        match=r"update 5 \(epoch 1\): the training loss is "
        r"nan; .*last good checkpoint is .*step-00000004",
    ):
        loop.train(cfg, tmp_path / "run", progress=False)
    run = RunDir(tmp_path / "run")
    assert snapshots.latest(run).name == "step-00000004"
    assert verify(run.last)["step"] == 4
    monkeypatch.setattr(loop, "token_cross_entropy", real)

    def refuse(*args, **kwargs):
        raise AssertionError("unpickling attempted")

    for module, name in ((torch, "load"), (pickle, "load"), (pickle, "loads")):
        monkeypatch.setattr(module, name, refuse)
    result = loop.train(cfg, run.root, resume=True, progress=False)  # from update 4 on
    assert result.epochs_run == 2 and len(result.step_losses) == 16 - 4
    load_run(run.root, "last")
    # no pickles anywhere (TensorBoard's event files are protocol buffers, never executed)
    files = [p for p in run.root.rglob("*") if p.is_file() and "tensorboard" not in p.parts]
    suffixes = {p.suffix for p in files}
    assert suffixes <= {".safetensors", ".json", ".yaml", ".model", ".vocab", ".log", ""}, suffixes
