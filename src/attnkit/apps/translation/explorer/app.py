"""The attention explorer: translation's routes on the core web server (:mod:`attnkit.server`).

``attnkit serve RUN_DIR`` translates typed sentences with a trained run and shows the attention;
``attnkit serve --demo`` serves only the lecture's worked examples. Routes:

- ``GET /`` and ``GET /static/NAME``: the page, its vanilla JS and CSS (vendored in
  ``attnkit/apps/translation/explorer/static``, beside the core's heatmap in
  ``attnkit/server/static``; nothing is fetched from elsewhere).
- ``GET /api/info``: demo or run mode, the model's architecture, limits and default beam.
- ``GET /api/examples``: the worked examples step by step (:mod:`attnkit.interpret.explain`).
- ``POST /api/translate`` ``{"text": str, "beam": int, "n_best": int, "layers": [int],
  "heads": [int]}`` (only ``text`` required, :mod:`.request`): the translation and its
  attention (see :mod:`attnkit.apps.translation.explorer.api` for the payload). 404 in demo
  mode.

The transport is the core server's: loopback by default with the ``Host`` check, JSON errors
with their status codes (400, 403, 404, 405 with ``Allow``, 411, 413, 415, 431, 500, 503),
the body, time and connection limits, and Ctrl-C. What a translation may ask for is bounded by
:class:`~.limits.ExplorerLimits` (:mod:`.budget`). Translations run one at a time, on the
server's one worker thread (the model is shared, and its memory stays in one malloc arena:
the load test's resident size stays flat).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from starlette.requests import Request
from starlette.routing import Route

from attnkit import devices
from attnkit.apps.translation.explorer import api, budget
from attnkit.apps.translation.explorer.limits import LIMITS, ExplorerLimits, RequestError
from attnkit.server.running import Server, serve_until_stopped
from attnkit.server.web import encode_json, json_answer, read_json, static_files, static_routes

DEMO = (
    "path: no model loaded: the explorer runs in demo mode (worked examples only); start it "
    "with `attnkit serve RUN_DIR` to translate"
)


@dataclass
class Explorer:
    """What the routes share: the loaded run (None in demo mode), the limits and the model's
    attention shape (:func:`budget.probe`). ``translate`` turns a checked
    :class:`api.Request` into the JSON payload; tests may replace it."""

    run_dir: Path | None
    limits: ExplorerLimits = LIMITS
    cfg: object = None
    tokenizer: object = None
    model: object = None
    shape: budget.AttentionShape | None = None
    server: Server | None = None

    @property
    def max_chars(self) -> int:
        return self.limits.max_chars

    def translate(self, request: api.Request) -> dict:
        return api.translate_payload(
            self.cfg, self.tokenizer, self.model, request, self.limits, self.shape
        )

    def answer(self, request: api.Request) -> bytes:
        """The translation as JSON bytes (on the worker thread: the payload's nested lists
        are made and freed there)."""
        return encode_json(self.translate(request))

    def info(self) -> dict:
        return api.info_payload(self.cfg, self.run_dir, self.max_chars, self.limits.max_beam)

    async def translate_route(self, request: Request):
        body = await read_json(request, self.limits)
        if self.model is None:
            raise RequestError(DEMO, 404)
        default_beam = min(self.cfg.decode.beam_size, self.limits.max_beam)
        checked = api.parse_request(body, self.limits, default_beam, self.shape)
        return json_answer(await self.server.run(self.answer, checked))

    def routes(self) -> list[Route]:
        async def info(request: Request):
            return json_answer(self.info())

        async def examples(request: Request):
            return json_answer(api.examples_payload())

        return [
            Route("/api/info", info, methods=["GET"]),
            Route("/api/examples", examples, methods=["GET"]),
            Route("/api/translate", self.translate_route, methods=["POST"]),
            *static_routes(static_files("attnkit.apps.translation.explorer")),
        ]


def make_server(
    run_dir: str | Path | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    max_chars: int | None = None,
    checkpoint: str = "best",
    limits: ExplorerLimits | None = None,
    device: str = "auto",
) -> Server:
    """Load ``run_dir`` (None: demo mode, worked examples only) and bind ``host:port``.

    ``port=0`` picks a free port (read it from ``server.url``). ``limits`` (default
    :data:`~.limits.LIMITS`) bounds requests, answers and connections; ``max_chars``, when
    given, replaces its ``max_chars``. Raises :class:`FileNotFoundError` for a missing run
    directory. Call ``serve_forever()`` (perhaps in a thread) and ``shutdown()`` /
    ``server_close()`` to stop; ``server.explorer`` is the :class:`Explorer`.
    """
    limits = limits or LIMITS
    if max_chars is not None:
        if max_chars < 1:
            raise ValueError(f"max_chars must be at least 1, got {max_chars}")
        limits = replace(limits, max_chars=max_chars)
    explorer = Explorer(Path(run_dir) if run_dir is not None else None, limits)
    if run_dir is not None:
        from attnkit.apps.translation.decode.run import load_run

        explorer.cfg, explorer.tokenizer, model = load_run(run_dir, checkpoint)
        explorer.model = model.to(devices.pick(device))
        explorer.shape = budget.probe(explorer.model, explorer.tokenizer, explorer.cfg.decode)
    server = Server(host, port, limits)
    server.mount(explorer.routes())
    explorer.server, server.explorer = server, explorer
    return server


def serve(
    run_dir: str | Path | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_chars: int = 500,
    checkpoint: str = "best",
    open_browser: bool = False,
    echo=None,
    limits: ExplorerLimits | None = None,
    device: str = "auto",
) -> None:
    """Serve the explorer until Ctrl-C (blocking).

    ``echo`` (default: print to stdout, flushed) receives one line with the address, once the
    port is bound: with ``port=0`` it is the only way to learn which port was chosen.
    """
    echo = echo or (lambda line: print(line, flush=True))
    server = make_server(run_dir, host, port, max_chars, checkpoint, limits, device)
    what = f"run {run_dir}" if run_dir is not None else "demo: worked examples only"
    try:
        serve_until_stopped(server, echo, f"explorer ({what})", open_browser)
    finally:
        server.explorer.model = None  # freed here, not by a thread that outlived us
