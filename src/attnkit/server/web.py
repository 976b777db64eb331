"""The web application around a server's routes (Starlette): every answer but the static files
is JSON, every error ``{"error": "FIELD: what is wrong", "status": N}``.

- The ``Host`` header must name the loopback interface while the server is bound to it
  (against DNS rebinding: another site's page cannot talk to it through a name it controls):
  403 otherwise. Bound elsewhere, the user chose to listen beyond this machine.
- 404 for an unknown path, 405 with ``Allow`` for a method a path does not take, 500 (logged)
  for an exception in a route, after which the server goes on serving; a route refuses with
  :class:`~attnkit.server.limits.RequestError`.
- A JSON body (:func:`read_json`) must say ``Content-Type: application/json`` (415: other
  sites cannot post to the server without a CORS preflight, which it never grants), give its
  ``Content-Length`` (411) of at most ``Limits.max_body`` bytes (413), and arrive whole.
- Static files are the names vendored in a package folder, read once (no path traversal);
  pages carry a Content-Security-Policy that fetches nothing from elsewhere.
"""

from __future__ import annotations

import json
import logging
import traceback
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from attnkit.server.limits import Limits, RequestError, load_json, shown

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
SECURITY = [
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"content-security-policy", CSP.encode()),
]
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
MAX_HEADERS = 100


def encode_json(payload: dict) -> bytes:
    """Compact UTF-8 JSON (a lone surrogate in a message is escaped, never an error)."""
    try:
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:
        return json.dumps(payload, separators=(",", ":")).encode()


def json_answer(payload: dict | bytes, status: int = 200, headers=None) -> Response:
    body = payload if isinstance(payload, bytes) else encode_json(payload)
    return Response(body, status, headers, "application/json; charset=utf-8")


def error_answer(status: int, message: str, headers=None) -> Response:
    return json_answer({"error": message, "status": int(status)}, status, headers)


def static_files(*packages: str) -> dict[str, bytes]:
    """The page files vendored in ``packages``' ``static`` folders, ``{name: bytes}`` (the
    core's first; a later package's file of the same name replaces it)."""
    files = {"": b""}
    for package in ("attnkit.server", *packages):
        root = resources.files(package) / "static"
        for entry in root.iterdir():
            if entry.is_file() and Path(entry.name).suffix in STATIC_TYPES:
                files[entry.name] = entry.read_bytes()
    del files[""]
    return files


def static_routes(files: dict[str, bytes]) -> list[Route]:
    """``GET /`` (``index.html``) and ``GET /static/NAME`` for the vendored names only."""

    def answer(name: str) -> Response:
        if name not in files:
            raise RequestError(f"path: no such file: {shown(name)}", 404)
        return Response(files[name], 200, media_type=STATIC_TYPES[Path(name).suffix])

    async def page(request: Request) -> Response:
        return answer("index.html")

    async def static(request: Request) -> Response:
        return answer(request.path_params["name"])

    return [
        Route("/", page, methods=["GET"]),
        Route("/index.html", page, methods=["GET"]),
        Route("/static/{name:path}", static, methods=["GET"]),
    ]


async def read_json(request: Request, limits: Limits) -> object:
    """The request's JSON body, refused as the module docstring says."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise RequestError(
            f"Content-Type: send application/json, not {shown(kind or 'nothing')}", 415
        )
    return load_json(await read_body(request, limits.max_body), limits)


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, given with a ``Content-Length`` of at most ``limit`` bytes."""
    if "transfer-encoding" in request.headers:
        raise RequestError("Transfer-Encoding: not served; send the body with Content-Length")
    raw_length = request.headers.get("content-length")
    if raw_length is None:
        raise RequestError("Content-Length: missing", 411)
    length = int(raw_length)  # h11 checked its digits (and refused one too long for int)
    if length > limit:
        raise RequestError(f"body: {length} bytes; the limit is {limit}", 413)
    return await request.body()  # h11 ends the body at Content-Length


class Guard:
    """ASGI middleware: the ``Host`` check and the security headers of every answer."""

    def __init__(self, app, loopback: bool) -> None:
        self.app, self.loopback = app, loopback

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def secured(message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY]}
            await send(message)

        if self.loopback and not _loopback_host(scope):
            answer = error_answer(403, "Host: requests must use the loopback name")
            return await answer(scope, receive, secured)
        if len(scope["headers"]) > MAX_HEADERS:
            answer = error_answer(431, f"headers: more than {MAX_HEADERS}")
            return await answer(scope, receive, secured)
        try:
            await self.app(scope, receive, secured)
        except Exception:  # answered 500 and logged (_crashed); Starlette raises it again
            pass


def _loopback_host(scope) -> bool:
    host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
    try:
        return (urlsplit(f"//{host}").hostname or "") in LOOPBACK
    except ValueError:  # "[" and other malformed names
        return False


async def _refused(request: Request, err: RequestError) -> Response:
    return error_answer(err.status, str(err), err.headers)


async def _http_error(request: Request, err: HTTPException) -> Response:
    path = shown(request.url.path)
    if err.status_code == 405:
        allow = ", ".join(sorted(m.strip() for m in err.headers["Allow"].split(",")))
        where = request.url.path[:100]
        return error_answer(405, f"method: use {allow} for {where}", {"Allow": allow})
    if err.status_code == 404:
        return error_answer(404, f"path: no such page: {path}")
    return error_answer(err.status_code, f"request: {err.detail}", err.headers)


async def _crashed(request: Request, err: Exception) -> Response:
    if isinstance(err, ClientDisconnect | ConnectionError):  # nobody left to tell
        log.debug("%s %s: the client went away", request.method, shown(request.url.path))
        return Response(status_code=400)
    log.error("%s %s failed:\n%s", request.method, shown(request.url.path), traceback.format_exc())
    what = type(err).__name__ + (f": {str(err).splitlines()[0]}" if str(err) else "")
    return error_answer(500, f"internal error: {what}")


def web_app(routes: list[Route], loopback: bool) -> Guard:
    """The routes as one ASGI application: JSON errors, the Host check, security headers."""
    handlers = {RequestError: _refused, HTTPException: _http_error, Exception: _crashed}
    return Guard(Starlette(routes=routes, exception_handlers=handlers), loopback)
