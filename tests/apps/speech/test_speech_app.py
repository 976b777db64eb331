"""The speech application through the command line: a tiny FSDD run trained by ``attnkit
train``, evaluated (every prediction in evaluation-SPLIT.json), used by ``predict`` with a
picture and by ``load_run(...).transcribe``; bad audio is one line naming the file, exit 2."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile
import yaml
from matplotlib.image import imread
from typer.testing import CliRunner

import attnkit
from attnkit.apps.speech.digits import fsdd_dir
from attnkit.cli import app

runner = CliRunner()
TINY = {
    "name": "tiny", "task": "speech", "data": {"counts": [16, 4, 4]},
    "model": {"d_listener": 8, "pyramid": 2, "d_embed": 8, "d_decoder": 16, "d_attention": 8,
              "conv_channels": 2, "conv_width": 3},
    "train": {"epochs": 1, "batch_size": 8, "beam": 2, "max_len": 10, "warmup_steps": 3},
}  # fmt: skip
WAV = fsdd_dir() / "3_george_0.wav"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("speech")
    config = root / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY), encoding="utf-8")
    result = runner.invoke(app, ["train", str(config), "-o", str(root / "run")])
    assert result.exit_code == 0, result.output
    return root / "run"


def test_evaluate_writes_every_prediction(run):
    result = runner.invoke(app, ["evaluate", str(run), "--split", "test-long", "--json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["count"] == 4 and set(scores["metrics"]) >= {"wer", "cer", "der"}
    record = json.loads((run / "evaluation-test-long.json").read_text(encoding="utf-8"))
    assert len(record["predictions"]) == 4
    assert all(5 <= len(p["truth"].split()) <= 7 for p in record["predictions"])
    assert record["wer"] == scores["metrics"]["wer"]
    # attention against the digits' own frames: teacher forced, and with the count given
    assert 0 <= scores["metrics"]["forced_alignment_accuracy"] <= 1
    assert record["fixed_length"]["der"] == scores["metrics"]["fixed_length_der"]
    fixed = [p["fixed_length"].split() for p in record["predictions"]]
    assert [len(f) for f in fixed] == [len(p["truth"].split()) for p in record["predictions"]]


def test_predict_with_a_picture(run, tmp_path):
    picture = tmp_path / "attention.png"
    result = runner.invoke(app, ["predict", str(run), str(WAV), "--picture", str(picture)])
    assert result.exit_code == 0, result.output
    assert str(WAV) in result.output
    pixels = imread(picture)
    assert pixels.ndim == 3 and float(pixels.std()) > 0.01


def test_load_run_transcribes_wavs_and_features(run):
    loaded = attnkit.load_run(run)
    (from_wav,) = loaded.transcribe([WAV], beam=1, attention=True)
    (from_features,) = loaded.transcribe([loaded.features(WAV)], beam=1, attention=True)
    assert from_wav.text == from_features.text
    assert np.allclose(from_wav.attention, from_features.attention)
    assert from_wav.attention.shape[1] == len(loaded.features(WAV)) // 4  # pyramid 2


def _bad(tmp_path, kind: str):
    path = tmp_path / f"{kind}.wav"
    if kind == "empty":
        soundfile.write(path, np.zeros(0, dtype=np.float32), 8000)
    elif kind == "rate":
        soundfile.write(path, np.zeros(1600, dtype=np.float32), 16000)
    else:
        soundfile.write(path, np.zeros((800, 2), dtype=np.float32), 8000)
    return path


@pytest.mark.parametrize("kind", ["empty", "rate", "stereo"])
def test_bad_audio_is_one_line_naming_the_file(run, tmp_path, kind):
    path = _bad(tmp_path, kind)
    result = runner.invoke(app, ["predict", str(run), str(path)])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and str(path) in errors[0], result.output
    assert "Traceback" not in result.output
