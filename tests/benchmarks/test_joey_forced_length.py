"""The JoeyNMT shim passes ``min_output_length`` on to ``joeynmt.search.search``.

JoeyNMT itself is not installed in the test environment: a stand-in package with the same
module layout (``prediction`` calls the ``search`` name it imported from ``search``) shows
what the shim changes, run as the benchmark runs it, in a separate interpreter."""

import os
import subprocess
import sys
import textwrap

from benchmarks.suites.joey import FORCED_LENGTH_SHIM


def _fake_joey(root):
    package = root / "joeynmt"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "search.py").write_text(
        "def search(model, batch, max_output_length, **kwargs):\n"
        "    return kwargs.get('min_output_length', 'missing')\n"
    )
    (package / "prediction.py").write_text(
        "from joeynmt.search import search\n"
        "def predict():\n"
        "    return search(None, None, max_output_length=30, beam_size=5)\n"
    )
    launcher = root / "run_joey.py"
    launcher.write_text(
        textwrap.dedent("""
        import sys
        from joeynmt.prediction import predict
        print(sys.argv[1:], predict())
        """)
    )
    return launcher


def _run(tmp_path, minimum):
    launcher = _fake_joey(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    env.pop("ATTNKIT_JOEY_MIN_OUTPUT", None)
    if minimum is not None:
        env["ATTNKIT_JOEY_MIN_OUTPUT"] = str(minimum)
    done = subprocess.run(
        [sys.executable, str(FORCED_LENGTH_SHIM), str(launcher), "test", "cfg.yaml"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    )
    return done.stdout.strip()


def test_shim_forwards_the_minimum_and_the_arguments(tmp_path):
    assert _run(tmp_path, 30) == "['test', 'cfg.yaml'] 30"


def test_without_the_variable_joey_runs_unchanged(tmp_path):
    assert _run(tmp_path, None) == "['test', 'cfg.yaml'] missing"
