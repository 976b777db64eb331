"""The attention explorer: a local web server (standard library only) and its JSON API.

``attnkit serve RUN_DIR`` translates typed sentences with a trained run and shows the attention;
``attnkit serve --demo`` serves only the lecture's worked examples. Routes:

- ``GET /`` and ``GET /static/NAME``: the page, its vanilla JS and CSS (vendored in
  ``attnkit/apps/translation/explorer/static``; nothing is fetched from elsewhere).
- ``GET /api/info``: demo or run mode, the model's architecture, limits and default beam.
- ``GET /api/examples``: the worked examples step by step (:mod:`attnkit.interpret.explain`).
- ``POST /api/translate`` ``{"text": str, "beam": int}``: the translation and its attention
  (see :mod:`attnkit.apps.translation.explorer.api` for the payload). 404 in demo mode.

Every error is answered as JSON ``{"error": message}``: 400 for bad input (empty text, more than
``max_chars`` characters, malformed JSON), 404, 405, 413, 415; an exception in a handler is
logged and answered 500, and the server goes on serving. The server binds 127.0.0.1 by default,
accepts only loopback ``Host`` headers while bound to loopback (against DNS rebinding), and
requires ``Content-Type: application/json`` on POST (so other sites cannot post to it without
a CORS preflight, which it never grants).
"""

from __future__ import annotations

import json
import logging
import threading
import traceback
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

from attnkit.apps.translation.explorer import api

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024  # bytes of a POST body
STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def static_files() -> dict[str, bytes]:
    """The vendored page files, ``{name: bytes}`` (read once, when the server is made)."""
    root = resources.files("attnkit.apps.translation.explorer") / "static"
    return {
        entry.name: entry.read_bytes()
        for entry in root.iterdir()
        if entry.is_file() and Path(entry.name).suffix in STATIC_TYPES
    }


@dataclass
class Explorer:
    """What the handlers share: the loaded run (None in demo mode) and the static files.

    ``translate`` turns a checked :class:`api.Request` into the JSON payload; tests may
    replace it. A lock runs one translation at a time (the model is shared).
    """

    run_dir: Path | None
    max_chars: int
    cfg: object = None
    tokenizer: object = None
    model: object = None
    files: dict[str, bytes] = field(default_factory=static_files)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def translate(self, request: api.Request) -> dict:
        with self.lock:
            return api.translate_payload(self.cfg, self.tokenizer, self.model, request)

    def info(self) -> dict:
        return api.info_payload(self.cfg, self.run_dir, self.max_chars)


class ExplorerServer(ThreadingHTTPServer):
    """A threading HTTP server that carries an :class:`Explorer` as ``.explorer``."""

    daemon_threads = True
    explorer: Explorer

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}/"


class Handler(BaseHTTPRequestHandler):
    """Routes requests; every answer is JSON except the static files."""

    server: ExplorerServer
    server_version = "attnkit-explorer"

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (the base class's name)
        log.debug("%s %s", self.address_string(), format % args)

    # ------------------------------------------------------------------ answers

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", CSP)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, payload: dict) -> None:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message, "status": status})

    def _guarded(self, route) -> None:
        """Run ``route``; a :class:`api.RequestError` is its status, anything else a 500."""
        try:
            if not self._host_allowed():
                self._error(HTTPStatus.FORBIDDEN, "requests must use the loopback host name")
                return
            route()
        except api.RequestError as err:
            self._error(err.status, str(err))
        except ConnectionError:  # the browser went away mid-answer: nobody to tell
            log.debug("%s %s: connection closed by the client", self.command, self.path)
        except Exception as err:  # keep serving whatever went wrong
            log.error("%s %s failed:\n%s", self.command, self.path, traceback.format_exc())
            what = type(err).__name__ + (f": {str(err).splitlines()[0]}" if str(err) else "")
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"internal error: {what}")

    def _host_allowed(self) -> bool:
        bound = self.server.server_address[0]
        if bound not in LOOPBACK:
            return True  # the user chose to listen beyond this machine
        host = urlsplit(f"//{self.headers.get('Host', '')}").hostname or ""
        return host in LOOPBACK

    # ------------------------------------------------------------------- routes

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self._guarded(self._get)

    def do_HEAD(self) -> None:  # noqa: N802
        self._guarded(self._get)

    def do_POST(self) -> None:  # noqa: N802
        self._guarded(self._post)

    def _get(self) -> None:
        path = urlsplit(self.path).path
        explorer = self.server.explorer
        if path in ("/", "/index.html"):
            self._static("index.html")
        elif path.startswith("/static/"):
            self._static(path.removeprefix("/static/"))
        elif path == "/api/info":
            self._json(HTTPStatus.OK, explorer.info())
        elif path == "/api/examples":
            self._json(HTTPStatus.OK, api.examples_payload())
        elif path == "/api/translate":
            raise api.RequestError("use POST for /api/translate", HTTPStatus.METHOD_NOT_ALLOWED)
        else:
            raise api.RequestError(f"no such page: {path}", HTTPStatus.NOT_FOUND)

    def _static(self, name: str) -> None:
        body = self.server.explorer.files.get(name)  # only the vendored names: no traversal
        if body is None:
            raise api.RequestError(f"no such file: {name}", HTTPStatus.NOT_FOUND)
        self._send(HTTPStatus.OK, body, STATIC_TYPES[Path(name).suffix])

    def _post(self) -> None:
        path = urlsplit(self.path).path
        if path != "/api/translate":
            status = HTTPStatus.METHOD_NOT_ALLOWED if path.startswith("/api/") else 404
            raise api.RequestError(f"no POST route {path}", status)
        explorer = self.server.explorer
        body = self._read_json()
        if explorer.model is None:
            raise api.RequestError(
                "no model loaded: the explorer runs in demo mode (worked examples only); "
                "start it with `attnkit serve RUN_DIR` to translate",
                HTTPStatus.NOT_FOUND,
            )
        default_beam = min(explorer.cfg.decode.beam_size, api.MAX_BEAM)
        request = api.parse_request(body, explorer.max_chars, default_beam)
        self._json(HTTPStatus.OK, explorer.translate(request))

    def _read_json(self) -> object:
        kind = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise api.RequestError(
                "send the body as Content-Type: application/json",
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
            )
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            raise api.RequestError(
                "missing or bad Content-Length", HTTPStatus.LENGTH_REQUIRED
            ) from None
        if not 0 <= length <= MAX_BODY:
            self.close_connection = True  # the unread body would confuse the next request
            raise api.RequestError(
                f"body of {length} bytes; the limit is {MAX_BODY}",
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
            )
        raw = self.rfile.read(length)
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise api.RequestError(f"malformed JSON body: {err}") from None


def make_server(
    run_dir: str | Path | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    max_chars: int = 500,
    checkpoint: str = "best",
) -> ExplorerServer:
    """Load ``run_dir`` (None: demo mode, worked examples only) and bind ``host:port``.

    ``port=0`` picks a free port (read it from ``server.server_address`` or ``server.url``).
    Raises :class:`FileNotFoundError` for a missing run directory, like
    :func:`attnkit.apps.translation.run.load_run`. Call ``serve_forever()`` (perhaps in a thread)
    and
    ``shutdown()`` / ``server_close()`` to stop.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    explorer = Explorer(Path(run_dir) if run_dir is not None else None, max_chars)
    if run_dir is not None:
        from attnkit.apps.translation.run import load_run

        explorer.cfg, explorer.tokenizer, explorer.model = load_run(run_dir, checkpoint)
    server = ExplorerServer((host, port), Handler)
    server.explorer = explorer
    return server


def serve(
    run_dir: str | Path | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_chars: int = 500,
    checkpoint: str = "best",
    open_browser: bool = False,
    echo=None,
) -> None:
    """Serve the explorer until Ctrl-C (blocking).

    ``echo`` (default: print to stdout, flushed) receives one line with the address, once the
    port is bound: with ``port=0`` it is the only way to learn which port was chosen.
    """
    echo = echo or (lambda line: print(line, flush=True))
    server = make_server(run_dir, host, port, max_chars, checkpoint)
    what = f"run {run_dir}" if run_dir is not None else "demo: worked examples only"
    echo(f"attnkit explorer ({what}) on {server.url}  (Ctrl-C stops)")
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
