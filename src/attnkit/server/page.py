"""The generic page: ``attnkit serve RUN`` for any application that takes an input to show.

The App says what it takes (:attr:`~attnkit.application.App.serve_input`: ``"text"``,
``"image"`` or ``"csv"``) and shows it (:meth:`~attnkit.application.App.show` ->
:class:`~attnkit.results.Shown`); this module never names an application. Routes:

- ``GET /``, ``GET /static/NAME``: the page and its vanilla JS and CSS (vendored in
  ``attnkit/server/static``; nothing is fetched from elsewhere).
- ``GET /api/info``: the application, the run, what it takes and the limits.
- ``POST /api/show``: a text as ``{"text": str}`` (``Content-Type: application/json``), or a
  file's bytes as the body (any other ``Content-Type``; ``?name=FILE`` gives its suffix). The
  answer::

    {"input": str, "output": str, "details": {name: value},
     "attention": [{"stack": name, "rows": [Tq labels], "cols": [Tk labels],
                    "first_layer": the record's index of the first layer sent,
                    "layers": [Tq x Tk weights, the mean over heads, a layer each],
                    "heads": [H x Tq x Tk weights (every head) or null, a layer each]}],
     "picture": base64 PNG or null}

The attention holds at most ``Limits.max_weights`` weights: first the means (the layers nearest
the output first; ``"layers_left_out"`` says how many did not fit), then the heads of the
layers sent with what is left (``"heads_left_out"``: how many layers are sent as their mean
only). A count of zero is left out of the answer.
"""

from __future__ import annotations

import base64
import json
import re
import tempfile
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.routing import Route

from attnkit.results import Shown, as_json
from attnkit.server.limits import Limits, RequestError, checked_body, checked_text
from attnkit.server.running import Server, serve_until_stopped
from attnkit.server.web import json_answer, read_body, read_json, static_files, static_routes

DIGITS = 6
SUFFIXES = {
    "image": (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp"),
    "csv": (".csv",),
    "audio": (".wav", ".flac"),
}
SAFE_NAME = re.compile(r"[^\w.-]")
FORM = "application/x-www-form-urlencoded"


def _rounded(weights: Any) -> list:
    """A tensor's weights as nested lists of floats, ``DIGITS`` digits after the point."""

    def walk(values: list) -> list:
        if values and isinstance(values[0], list):
            return [walk(part) for part in values]
        return [round(w, DIGITS) for w in values]

    return walk(weights.tolist())


def attention_json(record: Any, max_weights: int) -> tuple[list[dict], dict[str, int]]:
    """A core attention record as the answer's ``attention``: per stack, the mean over heads
    of each layer and every head of it, with the labels; and what did not fit ``max_weights``.

    The means come first (the layers nearest the output first, as many as fit), then the heads
    of the layers sent, nearest the output first, with what the means left. Returns the stacks
    and ``{"layers_left_out": layers not sent, "heads_left_out": layers sent as their mean
    only}`` (zeros left out; a one-head layer is its mean and counts as neither)."""
    stacks, left = [], {"layers_left_out": 0, "heads_left_out": 0}
    if record is None:
        return stacks, {}
    budget, sent = max_weights, []
    for name in record.names:
        layers = record[name]  # one (H, Tq, Tk) per layer
        fits = 0
        for weights in reversed(layers):  # the layers nearest the output first
            if weights[0].numel() > budget:
                break
            budget -= weights[0].numel()
            fits += 1
        left["layers_left_out"] += len(layers) - fits
        sent.append((name, layers[len(layers) - fits :], len(layers) - fits))
    for name, layers, first in sent:
        heads = [None] * len(layers)
        for i in reversed(range(len(layers))):
            if layers[i].shape[0] < 2:
                continue
            if layers[i].numel() > budget:
                left["heads_left_out"] += 1
                continue
            budget -= layers[i].numel()
            heads[i] = _rounded(layers[i].double())  # (H, Tq, Tk)
        if layers:
            stacks.append(_stack_json(record, name, layers, first, heads))
    return stacks, {k: n for k, n in left.items() if n}


def _stack_json(record: Any, name: str, layers: list, first: int, heads: list) -> dict:
    """One stack of the answer: labels, ``first_layer`` (the record's index of the first layer
    sent), the means over heads and the heads (``None`` where they did not fit)."""
    tq, tk = layers[0].shape[-2:]
    numbers = ([str(i) for i in range(tq)], [str(j) for j in range(tk)])
    rows, cols = record.labels.get(name, numbers)
    means = [_rounded(w.float().mean(dim=0).double()) for w in layers]  # (Tq, Tk) each
    return {
        "stack": name,
        "rows": list(rows),
        "cols": list(cols),
        "first_layer": first,
        "layers": means,
        "heads": heads,
    }


def shown_json(shown: Shown, limits: Limits) -> dict:
    """One :class:`~attnkit.results.Shown` as the answer of ``POST /api/show``."""
    attention, left_out = attention_json(shown.record, limits.max_weights)
    picture = base64.b64encode(shown.picture).decode() if shown.picture else None
    return {
        "input": shown.input,
        "output": shown.output,
        "details": json.loads(as_json(shown.details)),
        "attention": attention,
        "picture": picture,
        **left_out,
    }


class Page:
    """What the routes share: the App, its opened run and the server's limits. The page names
    what it serves as the App's ``source`` (default ``"run"``) and the folder."""

    def __init__(self, app: Any, run_dir: Path, run: Any, limits: Limits) -> None:
        self.app, self.run_dir, self.run, self.limits = app, run_dir, run, limits
        self.server: Server | None = None

    def info(self) -> dict:
        return {
            "app": self.app.name,
            "title": self.app.title,
            "run": str(self.run_dir),
            "source": f"{getattr(self.app, 'source', 'run')} {self.run_dir}",
            "input": self.app.serve_input,
            "max_chars": self.limits.max_chars,
            "max_upload": self.limits.max_upload,
            "max_weights": self.limits.max_weights,
        }

    def show(self, item: Any) -> dict:
        """The App's :meth:`show` of one input, as JSON (on the worker thread)."""
        (shown,) = self.app.show(self.run, [item])
        return shown_json(shown, self.limits)

    async def answer(self, request: Request) -> Any:
        if self.app.serve_input != "text":
            return json_answer(await self._upload(request))
        body = await read_json(request, self.limits)
        text = checked_body(body, ("text",), '{"text": "..."}').get("text")
        text = checked_text(text, self.limits.max_chars)
        return json_answer(await self.server.run(self.show, text))

    async def _upload(self, request: Request) -> dict:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind in ("", "application/json", FORM, "multipart/form-data"):
            message = f"Content-Type: send the file's bytes as the body, not {kind or 'nothing'}"
            raise RequestError(message, 415)
        suffix = _suffix(request.query_params.get("name", ""), self.app.serve_input)
        data = await read_body(request, self.limits.max_upload)
        if not data:
            raise RequestError("body: empty; choose a file to show")
        with tempfile.TemporaryDirectory(prefix="attnkit-serve-") as folder:
            path = Path(folder) / f"input{suffix}"
            path.write_bytes(data)
            return await self.server.run(self.show, path)

    def routes(self) -> list[Route]:
        async def info(request: Request):
            return json_answer(self.info())

        return [
            Route("/api/info", info, methods=["GET"]),
            Route("/api/show", self.answer, methods=["POST"]),
            *static_routes(static_files()),
        ]


def _suffix(name: str, kind: str) -> str:
    """The uploaded file's suffix, one the input kind takes; else a 400 naming ``name``."""
    allowed = SUFFIXES.get(kind, ())
    suffix = Path(SAFE_NAME.sub("_", name)).suffix.lower() or allowed[0]
    if suffix not in allowed:
        raise RequestError(f"name: a {kind} file is one of {', '.join(allowed)}, not {suffix!r}")
    return suffix


def make_page_server(
    app: Any,
    run_dir: str | Path,
    host: str = "127.0.0.1",
    port: int = 0,
    limits: Limits | None = None,
    checkpoint: str = "best",
    device: str = "auto",
) -> Server:
    """Open the run (``app.open``, its model on ``device``) and bind the generic page to
    ``host:port``."""
    if app.serve_input is None:
        raise ValueError(f"`attnkit serve` does not apply to {app.name} runs")
    limits = limits or Limits()
    page = Page(app, Path(run_dir), app.open(Path(run_dir), checkpoint, device), limits)
    server = Server(host, port, limits)
    server.mount(page.routes())
    page.server = server
    server.page = page
    return server


def serve_app(app: Any, run_dir: Path, options: Any, echo) -> None:
    """``attnkit serve RUN``: the generic page on this run until Ctrl-C (``options``: an
    :class:`~attnkit.application.ServeOptions`)."""
    from dataclasses import replace

    limits = replace(Limits(), max_chars=options.max_chars)
    o = options
    server = make_page_server(app, run_dir, o.host, o.port, limits, o.checkpoint, o.device)
    serve_until_stopped(server, echo, f"{app.title} ({run_dir})", options.open_browser)
