"""The attention explorer: a local web server (standard library only) and its JSON API.

``attnkit serve RUN_DIR`` translates typed sentences with a trained run and shows the attention;
``attnkit serve --demo`` serves only the lecture's worked examples. Routes:

- ``GET /`` and ``GET /static/NAME``: the page, its vanilla JS and CSS (vendored in
  ``attnkit/apps/translation/explorer/static``; nothing is fetched from elsewhere).
- ``GET /api/info``: demo or run mode, the model's architecture, limits and default beam.
- ``GET /api/examples``: the worked examples step by step (:mod:`attnkit.interpret.explain`).
- ``POST /api/translate`` ``{"text": str, "beam": int, "n_best": int, "layers": [int],
  "heads": [int]}`` (only ``text`` required, :mod:`.request`): the translation and its
  attention (see :mod:`attnkit.apps.translation.explorer.api` for the payload). 404 in demo
  mode.

Every error is answered as JSON ``{"error": "FIELD: message", "status": N}``, the standard
library's own included (:mod:`.handler`): 400 for bad input (empty text, more than
``max_chars`` characters, a lone surrogate, malformed or deeply nested JSON, an over-long
number, a garbage request line), 404, 405 with an ``Allow`` header (PUT, DELETE, OPTIONS and
any other method), 411, 413 (body too large), 414 / 431 (request line or headers too long), 415
(not ``application/json``) and 503 (too many connections); an exception in a handler is logged
and answered 500, and the server goes on serving. The server binds 127.0.0.1 by default,
accepts only loopback ``Host`` headers while bound to loopback (against DNS rebinding), and
requires ``Content-Type: application/json`` on POST (so other sites cannot post to it without
a CORS preflight, which it never grants).

Limits (:class:`~.limits.Limits`, defaults; ``make_server(..., limits=...)`` sets others):

- ``text`` at most 500 characters (``max_chars``, also ``--max-chars``); ``beam`` 1 to 16,
  and smaller for a long text: ``beam`` x the attention one hypothesis records in the search
  is at most 4,000,000 weights (``max_search_weights``); ``n_best`` at most 4 and at most the
  beam; ``layers`` and ``heads`` only the model's own.
- One answer holds at most 500,000 attention weights (``max_weights``; about 9 bytes each in
  the JSON, so at most about 5 MB; the best hypothesis's weights count twice, as it is also
  the top level): without ``n_best``, as many hypotheses as fit are returned; otherwise a request
  beyond it is refused with a 400 naming the field (``text`` when even the best one does not
  fit: shorten it, or choose ``layers`` and ``heads``).
- A body of at most 64 KiB, numbers of at most 20 digits; each read or write on a connection
  waits at most 5 s (``timeout``: a stalled client is dropped and its thread freed); at most
  32 connections at once (``max_connections``; the next is answered 503 and closed).
  Translations run one at a time, on one worker thread (the model is shared, and its memory
  stays in one malloc arena: the load test's resident size stays flat).
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from http.server import ThreadingHTTPServer
from importlib import resources
from pathlib import Path

from attnkit.apps.translation.explorer import api, budget
from attnkit.apps.translation.explorer.ctrl_c import CtrlC, leave_ctrl_c_to_main, watch_ctrl_c
from attnkit.apps.translation.explorer.handler import STATIC_TYPES, Handler, encode_json
from attnkit.apps.translation.explorer.limits import LIMITS, Limits
from attnkit.runtime import malloc_trim

log = logging.getLogger(__name__)

MAX_BODY = LIMITS.max_body  # bytes of a POST body (the default; see Limits)
LINGER_S, LINGER_BYTES = 1.0, 1 << 20  # what a closing connection still reads and drops
CLOSE_WAIT_S = 2 * LINGER_S  # how long server_close waits for the connections' threads


def static_files() -> dict[str, bytes]:
    """The vendored page files, ``{name: bytes}`` (read once, when the server is made)."""
    root = resources.files("attnkit.apps.translation.explorer") / "static"
    return {
        entry.name: entry.read_bytes()
        for entry in root.iterdir()
        if entry.is_file() and Path(entry.name).suffix in STATIC_TYPES
    }


def _one_worker() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(1, "explorer-translate", initializer=leave_ctrl_c_to_main)


@dataclass
class Explorer:
    """What the handlers share: the loaded run (None in demo mode), the limits, the model's
    attention shape (:func:`budget.probe`) and the static files.

    ``translate`` turns a checked :class:`api.Request` into the JSON payload; tests may
    replace it. :meth:`answer` runs it on one worker thread, one translation at a time (the
    model is shared).
    """

    run_dir: Path | None
    limits: Limits = LIMITS
    cfg: object = None
    tokenizer: object = None
    model: object = None
    shape: budget.AttentionShape | None = None
    files: dict[str, bytes] = field(default_factory=static_files)
    worker: ThreadPoolExecutor = field(default_factory=_one_worker)

    @property
    def max_chars(self) -> int:
        return self.limits.max_chars

    def translate(self, request: api.Request) -> dict:
        return api.translate_payload(
            self.cfg, self.tokenizer, self.model, request, self.limits, self.shape
        )

    def answer(self, request: api.Request) -> bytes:
        """The translation as JSON bytes, made on the worker thread. One thread does every
        translation's large allocations (the search, the payload's nested lists, the JSON), so
        they reuse one malloc arena: spread over the connections' threads, each kept its own
        and the resident size grew with the number of threads (290 to 900 MB in the load
        test). A waiting connection holds only the bytes."""
        return self.worker.submit(self._answer, request).result()

    def _answer(self, request: api.Request) -> bytes:
        body = encode_json(self.translate(request))  # the payload's lists are freed here
        malloc_trim()  # and given back to the system (about 3 ms)
        return body

    def info(self) -> dict:
        return api.info_payload(self.cfg, self.run_dir, self.max_chars, self.limits.max_beam)


class ExplorerServer(ThreadingHTTPServer):
    """A threading HTTP server that carries an :class:`Explorer` as ``.explorer`` and serves
    at most ``limits.max_connections`` connections at once (a thread each); the next one is
    answered 503 and closed at once."""

    daemon_threads = True
    request_queue_size = 128  # the listen backlog (socketserver's 5 drops a burst of clients)
    explorer: Explorer
    slots: threading.BoundedSemaphore
    handlers: list[threading.Thread]  # the connections' threads (the finished ones reaped)
    ctrl_c: CtrlC | None = None  # set by serve(): a SIGINT the interpreter lost still stops it

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}/"

    def process_request(self, request, client_address) -> None:
        if not self.slots.acquire(blocking=False):
            self._refuse(request)
            return
        try:  # a daemon thread, which frees the slot; server_close waits for it
            thread = threading.Thread(
                target=self.process_request_thread, args=(request, client_address), daemon=True
            )
            self.handlers = [t for t in self.handlers if t.is_alive()] + [thread]
            thread.start()
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request, client_address) -> None:
        leave_ctrl_c_to_main()
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def _refuse(self, request) -> None:
        """Answer 503 in JSON without reading the request (a few hundred bytes, which a new
        socket's send buffer takes at once), then close."""
        most = self.explorer.limits.max_connections
        message = f"connections: at most {most} at once; try again in a moment"
        body = json.dumps({"error": message, "status": 503}).encode()
        head = (
            "HTTP/1.0 503 Service Unavailable\r\n"
            "Content-Type: application/json; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
        )
        try:
            request.settimeout(0.1)
            request.sendall(head.encode() + body)
            request.setblocking(False)
            request.recv(65536)  # what already came: left unread, closing would reset
            request.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        self.close_request(request)

    def shutdown_request(self, request) -> None:
        """A lingering close: end the sending side, then read and drop what the client still
        sends (at most :data:`LINGER_BYTES` for :data:`LINGER_S` seconds) before closing, so
        that a refused request's unread body does not turn the close into a reset that loses
        the answer (a 413 before the body was read)."""
        try:
            request.shutdown(socket.SHUT_WR)
            request.settimeout(LINGER_S)
            end, drained = time.monotonic() + LINGER_S, 0
            while drained < LINGER_BYTES and time.monotonic() < end:
                chunk = request.recv(65536)
                if not chunk:
                    break
                drained += len(chunk)
        except OSError:
            pass
        self.close_request(request)

    def service_actions(self) -> None:  # after each poll of serve_forever
        if self.ctrl_c is not None and self.ctrl_c.pressed():
            raise KeyboardInterrupt

    def server_close(self) -> None:
        """Close the socket and wait, at most :data:`CLOSE_WAIT_S`, for the connections'
        threads (a closing one lingers up to :data:`LINGER_S`). A daemon thread still running
        at interpreter exit is stopped where it next takes the GIL; inside a tensor's
        deallocation (its reference to the server can be the model's last) that aborts the
        process: "terminate called without an active exception" after Ctrl-C."""
        super().server_close()
        self.explorer.worker.shutdown(wait=False, cancel_futures=True)
        end = time.monotonic() + CLOSE_WAIT_S
        for thread in self.handlers:
            thread.join(max(0.0, end - time.monotonic()))

    def handle_error(self, request, client_address) -> None:
        """A connection that failed outside a route (the client went away mid-answer): logged,
        not printed."""
        log.debug("connection from %s failed:\n%s", client_address, traceback.format_exc())


def make_server(
    run_dir: str | Path | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    max_chars: int | None = None,
    checkpoint: str = "best",
    limits: Limits | None = None,
) -> ExplorerServer:
    """Load ``run_dir`` (None: demo mode, worked examples only) and bind ``host:port``.

    ``port=0`` picks a free port (read it from ``server.server_address`` or ``server.url``).
    ``limits`` (default :data:`~.limits.LIMITS`) bounds requests, answers and connections;
    ``max_chars``, when given, replaces its ``max_chars``. Raises :class:`FileNotFoundError`
    for a missing run directory, like :func:`attnkit.apps.translation.run.load_run`. Call
    ``serve_forever()`` (perhaps in a thread) and ``shutdown()`` / ``server_close()`` to stop.
    """
    limits = limits or LIMITS
    if max_chars is not None:
        if max_chars < 1:
            raise ValueError(f"max_chars must be at least 1, got {max_chars}")
        limits = replace(limits, max_chars=max_chars)
    explorer = Explorer(Path(run_dir) if run_dir is not None else None, limits)
    if run_dir is not None:
        from attnkit.apps.translation.run import load_run

        explorer.cfg, explorer.tokenizer, explorer.model = load_run(run_dir, checkpoint)
        explorer.shape = budget.probe(explorer.model, explorer.tokenizer, explorer.cfg.decode)
    server = ExplorerServer((host, port), Handler)
    server.explorer = explorer
    server.slots = threading.BoundedSemaphore(limits.max_connections)
    server.handlers = []
    return server


def serve(
    run_dir: str | Path | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_chars: int = 500,
    checkpoint: str = "best",
    open_browser: bool = False,
    echo=None,
    limits: Limits | None = None,
) -> None:
    """Serve the explorer until Ctrl-C (blocking).

    ``echo`` (default: print to stdout, flushed) receives one line with the address, once the
    port is bound: with ``port=0`` it is the only way to learn which port was chosen.
    """
    echo = echo or (lambda line: print(line, flush=True))
    server = make_server(run_dir, host, port, max_chars, checkpoint, limits)
    what = f"run {run_dir}" if run_dir is not None else "demo: worked examples only"
    echo(f"attnkit explorer ({what}) on {server.url}  (Ctrl-C stops)")
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        with watch_ctrl_c() or nullcontext() as server.ctrl_c:
            server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        server.explorer.model = None  # freed here, not by a connection thread that outlived us
