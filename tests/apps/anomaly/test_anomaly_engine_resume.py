"""Per-series detectors are engine runs: one interrupted after a step checkpoint and resumed
ends bit for bit where an uninterrupted one ends (weights, and the VRAE's KL annealing and
sampling across the break), and a killed ``train_experiment`` continues with ``resume=True``:
finished series are loaded, not refitted, the interrupted one resumes from its checkpoint; a
first run that failed before any series had weights does not block a fresh start."""

import json
from dataclasses import replace

import pytest
import torch
from safetensors.torch import load_file

from attnkit.apps.anomaly import experiment
from attnkit.apps.anomaly.config import AnomalyConfig, AnomalyData, DetectorConfig
from attnkit.apps.anomaly.detector import fit_detector, load_detector
from attnkit.apps.anomaly.solar import generate_solar
from attnkit.apps.anomaly.training import SeriesTask
from attnkit.engine import snapshots
from attnkit.engine.rundir import RunDir

TINY = DetectorConfig(
    model="vrae",
    window=8,
    hidden=4,
    latent=2,
    steps=12,
    batch_size=8,
    kl_anneal_steps=10,
    checkpoint_every=1,
    samples=1,
)


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny models: one thread (two made these tests 3-4x slower on a loaded 2-core CPU)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class Killed(RuntimeError):
    """Stands for a SIGKILL: raised from inside the training loop."""


def kill_after(monkeypatch, updates: int) -> None:
    """Make the engine stop with :class:`Killed` after ``updates`` more updates (counted from
    now, across series): the update is applied but not yet checkpointed."""
    count = [0]

    def after_update(self, stats):
        count[0] += 1
        if count[0] == updates:
            raise Killed(f"killed after update {updates}")

    monkeypatch.setattr(SeriesTask, "after_update", after_update, raising=False)


def weights(directory) -> dict[str, torch.Tensor]:
    return load_file(str(directory / "model.safetensors"))


def assert_bitwise_equal(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


@pytest.mark.parametrize("model", ["vrae", "transformer"])
def test_a_series_killed_after_a_checkpoint_resumes_bitwise(tmp_path, monkeypatch, model):
    cfg = replace(TINY, model=model)
    values = generate_solar(
        days=8, steps_per_day=24, clean_days=6, anomalies=("spike",), seed=3
    ).values
    straight = fit_detector(values, cfg, train_rows=96, run_dir=tmp_path / "a")
    kill_after(monkeypatch, 5)
    with pytest.raises(Killed):
        fit_detector(values, cfg, train_rows=96, run_dir=tmp_path / "b")
    run = RunDir(tmp_path / "b")
    assert snapshots.latest(run).name == "step-00000004"  # update 5 applied, not checkpointed
    assert not (run.root / "detector.json").exists()  # an unfinished series is not a detector
    monkeypatch.delattr(SeriesTask, "after_update")
    resumed = fit_detector(values, cfg, train_rows=96, run_dir=tmp_path / "b", resume=True)
    assert len(resumed.losses) == cfg.steps - 4  # only the updates after the checkpoint ran
    assert resumed.losses == straight.losses[4:]
    assert_bitwise_equal(weights(tmp_path / "a"), weights(tmp_path / "b"))
    for name, p in straight.model.state_dict().items():
        assert torch.equal(p, resumed.model.state_dict()[name]), name
    a, b = (json.loads((tmp_path / d / "detector.json").read_text()) for d in "ab")
    assert a == b
    reloaded = load_detector(tmp_path / "b").model.state_dict()
    assert all(torch.equal(v, reloaded[k]) for k, v in straight.model.state_dict().items())


def small_experiment() -> AnomalyConfig:
    data = AnomalyData(source="solar", series=3, days=16, steps_per_day=12, clean_days=5)
    return AnomalyConfig(name="tiny", data=data, detector=replace(TINY, train_fraction=0.3))


def test_a_killed_train_run_loads_finished_series_and_resumes_the_interrupted_one(
    tmp_path, monkeypatch
):
    cfg = small_experiment()
    experiment.train_experiment(cfg, tmp_path / "straight")
    kill_after(monkeypatch, cfg.detector.steps + 7)  # during the second series
    with pytest.raises(Killed):
        experiment.train_experiment(cfg, tmp_path / "killed")
    series = tmp_path / "killed" / "series"
    assert (series / "solar-seed0" / "detector.json").is_file()
    assert not (series / "solar-seed1" / "detector.json").exists()
    changed = replace(cfg, detector=replace(cfg.detector, steps=13))
    with pytest.raises(FileExistsError, match="unfinished .* --resume"):  # another config
        experiment.train_experiment(changed, tmp_path / "killed")
    monkeypatch.delattr(SeriesTask, "after_update")
    calls = []
    fit = experiment.fit_detector
    monkeypatch.setattr(
        experiment, "fit_detector", lambda *a, **k: calls.append(k["resume"]) or fit(*a, **k)
    )
    experiment.train_experiment(cfg, tmp_path / "killed")  # the same config: as --resume
    assert calls == [True, False]  # seed0 loaded, seed1 resumed, seed2 fitted
    for name in ("solar-seed0", "solar-seed1", "solar-seed2"):
        assert_bitwise_equal(
            weights(tmp_path / "straight" / "series" / name), weights(series / name)
        )
    a, b = (json.loads((tmp_path / d / "metrics.json").read_text()) for d in ("straight", "killed"))
    assert a["nab"] == b["nab"] and a["threshold"] == b["threshold"]
    with pytest.raises(ValueError, match="differs"):
        experiment.train_experiment(changed, tmp_path / "killed", resume=True)


def test_a_first_run_that_failed_before_any_weights_can_be_started_again(tmp_path, monkeypatch):
    cfg = small_experiment()

    def fails(*args, **kwargs):
        raise Killed("the first series failed before its first checkpoint")

    monkeypatch.setattr(experiment, "fit_detector", fails)
    with pytest.raises(Killed):
        experiment.train_experiment(cfg, tmp_path / "run")
    assert (tmp_path / "run" / "config.yaml").is_file()
    (tmp_path / "run" / "series" / "solar-seed0").mkdir(parents=True)  # left empty
    (tmp_path / "run" / "train.log").write_text("a failed start\n")
    monkeypatch.undo()
    experiment.train_experiment(cfg, tmp_path / "run")  # no --resume needed
    assert (tmp_path / "run" / "series" / "solar-seed2" / "detector.json").is_file()
    with pytest.raises(FileExistsError, match="--resume"):  # a run with weights is kept
        experiment.train_experiment(cfg, tmp_path / "run")
