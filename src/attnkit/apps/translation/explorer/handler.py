"""The explorer's request handler: routes, and every error answered as JSON.

Even the standard library's own refusals (a garbage or HTTP/0.9 request line, an unknown
method, a request line or header over its limits) go through :meth:`Handler.send_error`, which
answers ``{"error": "FIELD: what is wrong", "status": N}`` and never an HTML page. Each read or
write on the connection waits at most ``Limits.timeout`` seconds.
"""

from __future__ import annotations

import json
import logging
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

from attnkit.apps.translation.explorer import api
from attnkit.apps.translation.explorer.limits import RequestError, load_json, shown

log = logging.getLogger(__name__)

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
TRANSLATE = "/api/translate"
LIBRARY_FIELDS = {400: "request line", 414: "request line", 431: "headers", 505: "request line"}


def encode_json(payload: dict) -> bytes:
    """Compact UTF-8 JSON (a lone surrogate in a message is escaped, never an error)."""
    try:
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:
        return json.dumps(payload, separators=(",", ":")).encode()


def allowed_methods(path: str) -> str:
    """The ``Allow`` header of ``path``: POST for the translation, GET and HEAD elsewhere."""
    return "POST" if path == TRANSLATE else "GET, HEAD"


class Handler(BaseHTTPRequestHandler):
    """Routes requests; every answer is JSON except the static files."""

    server_version = "attnkit-explorer"
    answered = False  # set once an error has been sent for this request

    def setup(self) -> None:
        self.timeout = self.server.explorer.limits.timeout  # each read and write on the socket
        super().setup()

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (the base class's name)
        log.debug("%s %s", self.address_string(), format % args)

    # ------------------------------------------------------------------ answers

    def _send(self, status: int, body: bytes, content_type: str, headers=None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", CSP)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, payload: dict | bytes, headers=None) -> None:
        body = payload if isinstance(payload, bytes) else encode_json(payload)
        self._send(status, body, "application/json; charset=utf-8", headers)

    def _error(self, status: int, message: str, headers=None) -> None:
        self._json(status, {"error": message, "status": int(status)}, headers)

    def send_error(self, code: int, message: str | None = None, explain=None) -> None:
        """The standard library's errors as JSON: an unknown method is a 405 with ``Allow``, an
        HTTP version it refuses a 400; each message names the part of the request at fault."""
        self.answered = self.close_connection = True
        if self.request_version == "HTTP/0.9":  # else no status line or headers would go out
            self.request_version = "HTTP/1.0"
        headers = {"Connection": "close"}
        if code == HTTPStatus.NOT_IMPLEMENTED:  # no do_<METHOD>
            path = self._path(fallback="")
            headers["Allow"] = allowed_methods(path)
            text = f"method: {shown(self.command)} is not allowed; allowed: {headers['Allow']}"
            self._error(HTTPStatus.METHOD_NOT_ALLOWED, text, headers)
            return
        if code == HTTPStatus.REQUEST_URI_TOO_LONG and message is None:
            message = "longer than 65,536 bytes"
        field = LIBRARY_FIELDS.get(code, "request")
        text = message or self.responses.get(code, ("error",))[0]
        status = HTTPStatus.BAD_REQUEST if code == HTTPStatus.HTTP_VERSION_NOT_SUPPORTED else code
        self._error(status, f"{field}: {text[:200]}", headers)

    def parse_request(self) -> bool:
        """The standard library's parsing, with an answer for an empty request line and a
        refusal of HTTP/0.9 (no version: its answers would carry no status, and the base class
        would wait for headers that never come)."""
        if len(self.raw_requestline.split()) == 2:
            self.command, self.request_version = None, "HTTP/1.0"
            self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
            self.send_error(HTTPStatus.BAD_REQUEST, "HTTP/0.9 is not served; send HTTP/1.x")
            return False
        if not super().parse_request():
            if not self.answered:  # an empty line: the base class closes without a word
                self.send_error(HTTPStatus.BAD_REQUEST, "empty")
            return False
        return True

    def _guarded(self, route) -> None:
        """Run ``route``; a :class:`RequestError` is its status, anything else a 500."""
        try:
            if not self._host_allowed():
                self._error(HTTPStatus.FORBIDDEN, "Host: requests must use the loopback name")
                return
            route()
        except RequestError as err:
            self._error(err.status, str(err), err.headers)
        except TimeoutError:  # the client stalled mid-body: drop it
            self.close_connection = True
            log.debug("%s %s: the client stalled", self.command, shown(self.path))
        except ConnectionError:  # the browser went away mid-answer: nobody to tell
            log.debug("%s %s: connection closed by the client", self.command, shown(self.path))
        except Exception as err:  # keep serving whatever went wrong
            log.error("%s %s failed:\n%s", self.command, shown(self.path), traceback.format_exc())
            what = type(err).__name__ + (f": {str(err).splitlines()[0]}" if str(err) else "")
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"internal error: {what}")

    def _host_allowed(self) -> bool:
        bound = self.server.server_address[0]
        if bound not in LOOPBACK:
            return True  # the user chose to listen beyond this machine
        try:
            host = urlsplit(f"//{self.headers.get('Host', '')}").hostname or ""
        except ValueError:  # "[" and other malformed names
            return False
        return host in LOOPBACK

    def _path(self, fallback: str | None = None) -> str:
        """The path of the request's target; a malformed target is a 400 (or ``fallback``)."""
        try:
            return urlsplit(self.path or "").path
        except (ValueError, AttributeError):
            if fallback is not None:
                return fallback
            raise RequestError(f"path: malformed target {shown(self.path)}") from None

    # ------------------------------------------------------------------- routes

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self._guarded(self._get)

    def do_HEAD(self) -> None:  # noqa: N802
        self._guarded(self._get)

    def do_POST(self) -> None:  # noqa: N802
        self._guarded(self._post)

    def _get(self) -> None:
        path = self._path()
        explorer = self.server.explorer
        if path in ("/", "/index.html"):
            self._static("index.html")
        elif path.startswith("/static/"):
            self._static(path.removeprefix("/static/"))
        elif path == "/api/info":
            self._json(HTTPStatus.OK, explorer.info())
        elif path == "/api/examples":
            self._json(HTTPStatus.OK, api.examples_payload())
        elif path == TRANSLATE:
            raise RequestError(
                "method: use POST for /api/translate",
                HTTPStatus.METHOD_NOT_ALLOWED,
                {"Allow": allowed_methods(path)},
            )
        else:
            raise RequestError(f"path: no such page: {shown(path)}", HTTPStatus.NOT_FOUND)

    def _static(self, name: str) -> None:
        body = self.server.explorer.files.get(name)  # only the vendored names: no traversal
        if body is None:
            raise RequestError(f"path: no such file: {shown(name)}", HTTPStatus.NOT_FOUND)
        self._send(HTTPStatus.OK, body, STATIC_TYPES[Path(name).suffix])

    def _post(self) -> None:
        path = self._path()
        if path != TRANSLATE:
            if not path.startswith("/api/"):
                raise RequestError(f"path: no such page: {shown(path)}", HTTPStatus.NOT_FOUND)
            allow = {"Allow": allowed_methods(path)}
            raise RequestError(f"method: no POST route {shown(path)}", 405, allow)
        explorer = self.server.explorer
        body = self._read_json()
        if explorer.model is None:
            raise RequestError(
                "path: no model loaded: the explorer runs in demo mode (worked examples only); "
                "start it with `attnkit serve RUN_DIR` to translate",
                HTTPStatus.NOT_FOUND,
            )
        limits = explorer.limits
        default_beam = min(explorer.cfg.decode.beam_size, limits.max_beam)
        request = api.parse_request(body, limits, default_beam, explorer.shape)
        self._json(HTTPStatus.OK, explorer.answer(request))

    def _read_json(self) -> object:
        kind = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise RequestError(
                f"Content-Type: send application/json, not {shown(kind or 'nothing')}",
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
            )
        self.close_connection = True  # an unread or half-read body would confuse the next one
        if "Transfer-Encoding" in self.headers:
            raise RequestError("Transfer-Encoding: not served; send the body with Content-Length")
        limit = self.server.explorer.limits.max_body
        raw_length = self.headers.get("Content-Length")
        if raw_length is None:
            raise RequestError("Content-Length: missing", HTTPStatus.LENGTH_REQUIRED)
        digits = raw_length.strip()
        if not (digits.isascii() and digits.isdigit()):
            raise RequestError(f"Content-Length: not a number of bytes: {shown(raw_length)}")
        length = int(digits) if len(digits) <= 18 else limit + 1  # no 5,000-digit int()
        if length > limit:
            raise RequestError(
                f"body: {digits if len(digits) <= 18 else 'over 10**18'} bytes; the limit is "
                f"{limit}",
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
            )
        raw = self.rfile.read(length)
        if len(raw) < length:
            raise RequestError(f"body: ended after {len(raw)} of {length} bytes")
        return load_json(raw, self.server.explorer.limits)
