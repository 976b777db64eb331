"""A bound server and its life: bind, serve until stopped, close.

:class:`Server` binds its socket when made (``port=0``: any free port, read from
:attr:`Server.url`), serves an ASGI application with uvicorn on the h11 protocol of
:mod:`.protocol`, and runs blocking work (a model) on one worker thread, one call at a time
(the model is shared, and its memory stays in one malloc arena). :func:`serve_until_stopped`
prints the address and serves until Ctrl-C, which stops it every time (:mod:`.ctrl_c`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import uvicorn

from attnkit.runtime import malloc_trim
from attnkit.server.ctrl_c import leave_ctrl_c_to_main, watch_ctrl_c
from attnkit.server.limits import Limits
from attnkit.server.protocol import MAX_HEAD, protocol_for
from attnkit.server.web import web_app

CLOSE_WAIT_S = 2.0  # how long a stop waits for the answers in the making
logging.getLogger("uvicorn.error").setLevel(logging.ERROR)  # we answer what it warns of


class _Uvicorn(uvicorn.Server):
    """uvicorn's server, also stopped by a Ctrl-C the interpreter lost (:mod:`.ctrl_c`)."""

    ctrl_c = None

    async def on_tick(self, counter: int) -> bool:
        if self.ctrl_c is not None and self.ctrl_c.pressed():
            self.should_exit = True
        return await super().on_tick(counter)


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (``port=0``: any free port)."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)  # clients queue from now on, before the loop starts serving
    except OSError:
        sock.close()
        raise
    return sock


class Server:
    """A socket bound to ``host:port`` serving the routes given to :meth:`mount`:
    :meth:`serve_forever` (blocking, in any thread), :meth:`shutdown` (from another thread)
    and :meth:`server_close`."""

    def __init__(self, host: str, port: int, limits: Limits) -> None:
        self.limits = limits
        self.socket = bind(host, port)
        self.server_address = self.socket.getsockname()
        config = uvicorn.Config(
            None,  # the routes come with mount()
            http=protocol_for(limits),
            ws="none",
            lifespan="off",
            log_config=None,
            access_log=False,
            server_header=False,
            backlog=128,  # a burst of clients is queued, not dropped
            timeout_keep_alive=max(1, int(limits.timeout)),
            timeout_graceful_shutdown=int(CLOSE_WAIT_S),
            h11_max_incomplete_event_size=MAX_HEAD,
        )
        self.uvicorn = _Uvicorn(config)
        self.worker = ThreadPoolExecutor(1, "attnkit-model", initializer=leave_ctrl_c_to_main)
        self.stopped = threading.Event()
        self.started = False

    def mount(self, routes: list) -> None:
        """Serve ``routes`` (Starlette routes) behind the checks of :mod:`.web`."""
        self.uvicorn.config.app = web_app(routes, self.loopback)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}/"

    @property
    def loopback(self) -> bool:
        return ipaddress.ip_address(self.server_address[0]).is_loopback

    async def run(self, function, *args):
        """``function(*args)`` on the worker thread (one at a time), awaited; the memory it
        freed is given back to the system afterwards (about 3 ms)."""

        def call():
            try:
                return function(*args)
            finally:
                malloc_trim()

        return await asyncio.get_running_loop().run_in_executor(self.worker, call)

    def serve_forever(self) -> None:
        self.started = True
        try:
            asyncio.run(self.uvicorn.serve(sockets=[self.socket]))
        finally:
            self.stopped.set()

    def shutdown(self) -> None:
        """Stop :meth:`serve_forever` and wait for it (answers in the making are finished)."""
        self.uvicorn.should_exit = True
        if self.started:
            self.stopped.wait(CLOSE_WAIT_S + 10)

    def server_close(self) -> None:
        self.socket.close()
        self.worker.shutdown(wait=False, cancel_futures=True)


def serve_until_stopped(server: Server, echo, what: str, open_browser: bool = False) -> None:
    """Print ``attnkit WHAT on URL`` once bound (with ``port=0`` the only way to learn the
    port), then serve until Ctrl-C (blocking)."""
    echo(f"attnkit {what} on {server.url}  (Ctrl-C stops)")
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        with watch_ctrl_c() or nullcontext() as server.uvicorn.ctrl_c:
            server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
