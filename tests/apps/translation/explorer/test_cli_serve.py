"""``attnkit serve``: the command starts the explorer, answers on 127.0.0.1 and stops on Ctrl-C."""

import json
import os
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pytest
from typer.testing import CliRunner

from attnkit.cli import app

COMMANDS = {c.name or c.callback.__name__ for c in app.registered_commands}
pytestmark = pytest.mark.skipif(
    "serve" not in COMMANDS, reason="the serve command is not in attnkit.cli yet"
)
runner = CliRunner()
# Ctrl-C must reach the server even where the test runner's SIGINT is ignored (a background job)
CHILD = (
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from attnkit.cli import app; app()"
)


def _first_line(process, timeout: float = 60) -> str:
    """The first line the server prints (its address), or fail after ``timeout`` seconds."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    assert lines and lines[0], f"no address printed; stderr: {process.stderr.read()!r}"
    return lines[0]


def _call(url: str, body=None):
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if data else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data, headers), timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _serve(*args):
    command = [sys.executable, "-c", CHILD, "serve", *args]
    env = os.environ | {"OMP_NUM_THREADS": "1"}
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    line = _first_line(process)
    assert "http://127.0.0.1:" in line
    return process, line.split(" on ", 1)[1].split()[0]


def _stop(process) -> int:
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(timeout=30)
    finally:
        process.kill()
        process.stdout.close()
        process.stderr.close()


def test_serve_demo_answers_and_stops_on_ctrl_c():
    process, url = _serve("--demo", "--port", "0")
    try:
        assert _call(url + "api/info") == (200, {"mode": "demo", "max_chars": 500, "max_beam": 16})
        status, body = _call(url + "api/translate", {"text": "The dog."})
        assert status == 404 and "demo mode" in body["error"]
    finally:
        assert _stop(process) == 0


def test_serve_a_run(rnn_run):
    process, url = _serve(str(rnn_run), "--port", "0", "--max-chars", "40")
    try:
        status, body = _call(url + "api/translate", {"text": "The red dog sleeps.", "beam": 2})
        assert status == 200 and body["src_pieces"] and "cross" in body["attention"]
        status, body = _call(url + "api/translate", {"text": "x" * 41})
        assert status == 400 and "limit is 40" in body["error"]
    finally:
        assert _stop(process) == 0


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "give a RUN_DIR"),
        (["--demo", "somewhere"], "not both"),
        (["/nonexistent/run"], "no such run directory"),
    ],
)
def test_serve_errors_are_one_line(args, message):
    result = runner.invoke(app, ["serve", *args])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
