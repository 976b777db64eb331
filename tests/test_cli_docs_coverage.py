"""The documented commands that no other test ran, run for real on tiny inputs (seconds each):
``attnkit translation experiment bottleneck`` (two tiny configs trained, evaluated and plotted),
``attnkit translation data download`` (a corpus served from 127.0.0.1, its checksum checked),
and ``attnkit demo`` (on the demo's two runs trained tiny, reused as the demo reuses runs).
tests/test_doc_commands.py finds these invocations by scanning this file.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import shutil
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from matplotlib.image import imread
from typer.testing import CliRunner

from attnkit.cli import app
from test_readme import tiny_demo_runs

# the module (the package `attnkit.apps.translation.data` re-exports its function `download`)
download_module = importlib.import_module("attnkit.apps.translation.data.download")
runner = CliRunner()

TINY_CONFIG = """\
name: tiny-{attention}
data:
  corpus: default
  generated_sizes: [300, 20, 20]
  vocab_size: 200
  max_len: 60
model:
  arch: rnn
  attention: {attention}
  embed_dim: 16
  hidden_dim: 32
train:
  epochs: 1
  max_tokens: 2000
  valid_bleu: false
"""


def _is_a_picture(path) -> bool:
    pixels = imread(path)
    return pixels.ndim == 3 and min(pixels.shape[:2]) > 100 and float(np.std(pixels)) > 0.01


def test_experiment_bottleneck_trains_evaluates_and_plots(tmp_path):
    configs = []
    for attention in ("none", "bahdanau"):
        configs += ["--config", str(tmp_path / f"{attention}.yaml")]
        (tmp_path / f"{attention}.yaml").write_text(TINY_CONFIG.format(attention=attention))
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["translation", "experiment", "bottleneck", "-o", str(out), *configs]
    )
    assert result.exit_code == 0, result.output
    assert "BLEU by source length" in result.output and "tiny-bahdanau" in result.output
    results = json.loads((out / "results.json").read_text())
    assert list(results) == ["tiny-none", "tiny-bahdanau"]
    for scores in results.values():
        assert sum(b["n"] for b in scores["by_length"]) == 20  # every test sentence, bucketed
    assert (out / "tiny-bahdanau" / "model.safetensors").is_file()
    assert _is_a_picture(out / "bleu_by_length.png")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no request lines on stderr, where the CLI's error goes
        pass


@pytest.fixture
def corpus_server(tmp_path, monkeypatch):
    """A one-file corpus "tiny-corpus" in the registry, served over HTTP from 127.0.0.1."""
    served = tmp_path / "served"
    served.mkdir()
    (served / "pairs.tsv").write_text("a dog runs .\tein Hund läuft .\n", encoding="utf-8")
    sha = hashlib.sha256((served / "pairs.tsv").read_bytes()).hexdigest()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(served)))
    url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    source = download_module.Source(
        url, (download_module.RemoteFile("pairs.tsv", "tiny-corpus/pairs.tsv", sha),)
    )
    monkeypatch.setitem(download_module.REGISTRY, "tiny-corpus", source)
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield served, url
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def test_data_download_fetches_verifies_and_refuses_a_bad_checksum(corpus_server, tmp_path):
    served, url = corpus_server
    to = tmp_path / "data"
    result = runner.invoke(app, ["translation", "data", "download", "tiny-corpus", "--to", str(to)])
    assert result.exit_code == 0, result.output
    target = to / "tiny-corpus" / "pairs.tsv"
    assert target.read_bytes() == (served / "pairs.tsv").read_bytes()
    assert str(target) in result.stdout
    (served / "pairs.tsv").write_text("a cat runs .\tein Hund läuft .\n", encoding="utf-8")
    other = tmp_path / "other"
    args = ["translation", "data", "download", "tiny-corpus", "--to", str(other), "--base-url", url]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "sha256 mismatch" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (other / "tiny-corpus" / "pairs.tsv").exists()


def test_demo_reuses_its_runs_and_draws_the_heatmap(tmp_path_factory, tmp_path):
    out = tmp_path / "demo"
    shutil.copytree(tiny_demo_runs(tmp_path_factory), out)
    result = runner.invoke(app, ["demo", "-o", str(out)])
    assert result.exit_code == 0, result.output
    for words in ("Test translations", "BLEU by source length", "bahdanau: BLEU"):
        assert words in result.stdout, result.stdout
    flat = " ".join(result.stdout.split())  # the console wraps long lines at its width
    assert "Try next" in flat and "attnkit translation translate" in flat
    assert _is_a_picture(out / "heatmap.png") and _is_a_picture(out / "bleu_by_length.png")
