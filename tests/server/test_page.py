"""The generic page of ``attnkit serve`` (attnkit.server.page) against real servers on
127.0.0.1: a text application and an image application, each a small App whose ``show``
returns a known attention record, so the answer's weights are checked against it."""

from __future__ import annotations

import base64
import io
import json
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import torch

from attnkit.application import App
from attnkit.interpret.structure import AttentionRecord
from attnkit.results import Shown
from attnkit.server import Limits, make_page_server

TOKENS = ["the", "cat", "sat"]


def _record(n: int) -> AttentionRecord:
    """Two layers of two heads over ``n`` tokens, rows summing to 1."""
    gen = torch.Generator().manual_seed(n)
    layers = [torch.rand(2, n, n, generator=gen).softmax(-1) for _ in range(2)]  # (H, T, T)
    labels = [f"t{i}" for i in range(n)]
    return AttentionRecord({"self": layers}, {"self": (labels, labels)})


class TextApp(App):
    name, title, serve_input = "toy-text", "Toy text", "text"

    def open(self, run_dir, checkpoint="best", device="auto"):
        return {"run": str(run_dir)}

    def show(self, run, inputs):
        return [
            Shown(text, text.upper(), _record(len(text.split())), details={"p": 0.25})
            for text in inputs
        ]


def _png(width: int = 3, height: int = 2) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), (255, 0, 0)).save(out, format="PNG")
    return out.getvalue()


class ImageApp(App):
    name, title, serve_input = "toy-image", "Toy image", "image"

    def open(self, run_dir, checkpoint="best", device="auto"):
        return "opened"

    def show(self, run, inputs):
        from PIL import Image

        (path,) = inputs
        with Image.open(path) as image:
            size = f"{image.width}x{image.height}"
        return [Shown(Path(path).suffix, size, picture=_png(4, 4), details={"run": run})]


@pytest.fixture
def served(tmp_path, request):
    app = request.param()
    server = make_page_server(app, tmp_path, port=0, limits=Limits(max_chars=40, max_upload=4096))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(10)


def _call(server, method, path, body=None, headers=None):
    request = urllib.request.Request(
        server.url.rstrip("/") + path, body, headers or {}, method=method
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read()


def _json_error(answer, status):
    code, headers, body = answer
    assert code == status, body
    assert headers["Content-Type"].startswith("application/json")
    error = json.loads(body)
    assert error["status"] == status
    return error["error"]


JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize("served", [TextApp], indirect=True)
def test_a_text_is_shown_with_its_attention(served):
    code, _, body = _call(served, "POST", "/api/show", b'{"text": " the  cat sat "}', JSON)
    assert code == 200, body
    got = json.loads(body)
    assert got["input"] == "the cat sat" and got["output"] == "THE CAT SAT"
    assert got["details"] == {"p": 0.25} and got["picture"] is None
    (stack,) = got["attention"]
    want = _record(3)
    assert stack["stack"] == "self" and stack["rows"] == stack["cols"] == ["t0", "t1", "t2"]
    assert len(stack["layers"]) == 2
    for layer, weights in zip(want["self"], stack["layers"], strict=True):
        mean = layer.mean(dim=0).double()  # the mean over heads, (T, T)
        assert torch.allclose(torch.tensor(weights, dtype=torch.float64), mean, atol=1e-6)


@pytest.mark.parametrize("served", [TextApp], indirect=True)
def test_the_page_info_and_static_files(served):
    code, headers, body = _call(served, "GET", "/")
    assert code == 200 and headers["Content-Type"].startswith("text/html")
    assert b'src="/static/page.js"' in body
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    for name in ("page.js", "heatmap.js", "svg.js", "page.css"):
        assert _call(served, "GET", f"/static/{name}")[0] == 200, name
    info = json.loads(_call(served, "GET", "/api/info")[2])
    assert info["input"] == "text" and info["app"] == "toy-text" and info["max_chars"] == 40


@pytest.mark.parametrize("served", [TextApp], indirect=True)
@pytest.mark.parametrize(
    "method, path, body, headers, status, start",
    [
        ("POST", "/api/show", b'{"text": ""}', JSON, 400, "text: empty"),
        ("POST", "/api/show", b'{"text": "' + b"a " * 30 + b'"}', JSON, 400, "text: 59 char"),
        ("POST", "/api/show", b'{"text": "x", "beam": 2}', JSON, 400, "body: unknown field"),
        ("POST", "/api/show", b'{"text": 3}', JSON, 400, "text: must be a string"),
        ("POST", "/api/show", b'{"text": "x"', JSON, 400, "body: malformed JSON"),
        ("POST", "/api/show", b"text=x", {"Content-Type": "text/plain"}, 415, "Content-Type"),
        ("POST", "/api/show", b"x" * 70000, JSON, 413, "body: 70000 bytes"),
        ("GET", "/api/show", None, None, 405, "method: use POST for /api/show"),
        ("PUT", "/api/info", b"{}", JSON, 405, "method: use GET, HEAD for /api/info"),
        ("GET", "/nowhere", None, None, 404, "path: no such page"),
        ("GET", "/static/../page.py", None, None, 404, "path: no such file"),
        ("GET", "/api/info", None, {"Host": "attacker.example"}, 403, "Host: "),
    ],
)
def test_errors_are_json_with_their_status(served, method, path, body, headers, status, start):
    assert _json_error(_call(served, method, path, body, headers), status).startswith(start)
    assert _call(served, "GET", "/api/info")[0] == 200  # and the server goes on


@pytest.mark.parametrize("served", [TextApp], indirect=True)
def test_an_exception_in_show_is_a_500_and_the_server_goes_on(served, monkeypatch):
    def broken(run, inputs):
        raise RuntimeError("the model fell over")

    monkeypatch.setattr(served.page.app, "show", broken)
    answer = _call(served, "POST", "/api/show", b'{"text": "the cat"}', JSON)
    assert _json_error(answer, 500) == "internal error: RuntimeError: the model fell over"
    monkeypatch.undo()
    assert _call(served, "POST", "/api/show", b'{"text": "the cat"}', JSON)[0] == 200


@pytest.mark.parametrize("served", [ImageApp], indirect=True)
def test_an_image_is_shown_as_its_picture(served):
    from PIL import Image

    headers = {"Content-Type": "image/png"}
    code, _, body = _call(served, "POST", "/api/show?name=cat.png", _png(3, 2), headers)
    assert code == 200, body
    got = json.loads(body)
    assert got["input"] == ".png" and got["output"] == "3x2" and got["attention"] == []
    assert got["details"] == {"run": "opened"}
    picture = Image.open(io.BytesIO(base64.b64decode(got["picture"])))
    assert picture.size == (4, 4) and picture.convert("RGB").getpixel((1, 1)) == (255, 0, 0)


@pytest.mark.parametrize("served", [ImageApp], indirect=True)
@pytest.mark.parametrize(
    "path, body, kind, status, start",
    [
        ("/api/show?name=cat.png", b"x" * 5000, "image/png", 413, "body: 5000 bytes"),
        ("/api/show?name=cat.exe", b"x", "image/png", 400, "name: a image file"),
        ("/api/show", b"", "image/png", 400, "body: empty"),
        ("/api/show", b'{"text": "x"}', "application/json", 415, "Content-Type: send the file"),
    ],
)
def test_a_bad_upload_is_refused(served, path, body, kind, status, start):
    answer = _call(served, "POST", path, body, {"Content-Type": kind})
    assert _json_error(answer, status).startswith(start)


def test_an_app_without_an_input_is_not_served(tmp_path):
    class Quiet(TextApp):
        serve_input = None

    with pytest.raises(ValueError, match="does not apply"):
        make_page_server(Quiet(), tmp_path)
    assert not Quiet().supports("serve")
