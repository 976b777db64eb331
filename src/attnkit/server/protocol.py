"""The HTTP/1.1 connection: uvicorn's h11 protocol with attnkit's transport limits.

What uvicorn answers itself, and what it would leave open, is changed here:

- a request h11 cannot parse (a garbage or HTTP/0.9 request line, a bad header, a request line
  or headers over :data:`MAX_HEAD` bytes, a ``Content-Length`` of thousands of digits) is
  answered ``{"error": "request: ...", "status": 400 or 431}`` in JSON, not uvicorn's text;
- a connection beyond ``Limits.max_connections`` is answered 503 in JSON at once and closed,
  before it says anything;
- a client that stays silent for ``Limits.timeout`` seconds while the server waits for its
  request (before the first byte, in the headers, in the body) is dropped; one whose request
  is being answered is not;
- a client that ends its sending side after its request (a half-close) still gets the answer;
  one that ends it in the middle of a request is answered 400.
"""

from __future__ import annotations

import asyncio
import json
import sys

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_HEAD = 64 * 1024  # bytes of a request line and headers (h11's buffer for one event)
H11_ERRORS = {  # h11's message -> ours, naming the part of the request at fault
    "illegal request line": "request line: not an HTTP/1.x request line",
    "no request line received": "request line: empty",
    "bad content-length": "Content-Length: not a number of bytes",
    "receive buffer too long": f"headers: the request line and headers are over {MAX_HEAD:,} bytes",
}
REASONS = {400: "Bad Request", 431: "Request Header Fields Too Large", 503: "Service Unavailable"}


def raw_answer(status: int, message: str, extra: str = "") -> bytes:
    """A whole ``HTTP/1.1`` JSON error answer that closes the connection, as bytes."""
    body = json.dumps({"error": message, "status": status}).encode()
    head = (
        f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\n"
        "Content-Type: application/json; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\n{extra}Connection: close\r\n\r\n"
    )
    return head.encode() + body


class LimitedH11Protocol(H11Protocol):
    """One connection; ``limits`` (a :class:`~attnkit.server.limits.Limits`) is set on the
    class the server makes (:func:`protocol_for`)."""

    limits = None

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.idle: asyncio.TimerHandle | None = None
        if len(self.connections) > self.limits.max_connections:
            most = self.limits.max_connections
            message = f"connections: at most {most} at once; try again in a moment"
            self._refuse(503, message, "Retry-After: 1\r\n")
            return
        self._wait()

    def connection_lost(self, exc) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._wait()
        try:
            super().data_received(data)
        except ValueError:  # int() of a Content-Length too long to convert
            self._refuse(400, "Content-Length: not a number of bytes (too many digits)")

    def eof_received(self) -> bool:
        """The client ended its sending side (asyncio would close the connection at once): a
        whole request still gets its answer, then the connection closes; a request cut short
        is answered 400."""
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            if cycle.more_body:
                self._refuse(400, "body: ended before the Content-Length it gave")
                return False
            cycle.keep_alive = False  # answer, then close
            return True
        if self.conn.trailing_data[0]:  # bytes h11 could not make a request of yet
            self._refuse(400, "request: ended before its headers did")
        return False

    def send_400_response(self, msg: str) -> None:
        err = sys.exception()  # called inside uvicorn's `except h11.RemoteProtocolError`
        status = 400
        if isinstance(err, h11.RemoteProtocolError):
            msg = str(err) or msg
            status = 431 if err.error_status_hint == 431 else 400
        ours = [text for start, text in H11_ERRORS.items() if msg.lower().startswith(start)]
        self._refuse(status, ours[0] if ours else f"request: {msg[:200]}")

    def _refuse(self, status: int, message: str, extra: str = "") -> None:
        if not self.transport.is_closing():
            self.transport.write(raw_answer(status, message, extra))
            self.transport.close()
        self._stop_waiting()

    # -- the silence timer ----------------------------------------------------------------
    def _wait(self) -> None:
        self._stop_waiting()
        self.idle = self.loop.call_later(self.limits.timeout, self._silent)

    def _stop_waiting(self) -> None:
        if getattr(self, "idle", None) is not None:
            self.idle.cancel()
            self.idle = None

    def _silent(self) -> None:
        """``timeout`` seconds without a byte: drop the client, unless its request is whole
        and being answered (the answer may take longer)."""
        self.idle = None
        cycle = self.cycle
        if cycle is not None and not cycle.more_body and not cycle.response_complete:
            self._wait()  # look again later: an answer in the making is not silence
            return
        if not self.transport.is_closing():
            self.transport.close()


def protocol_for(limits) -> type[LimitedH11Protocol]:
    """The protocol class of a server with ``limits``."""
    return type("Protocol", (LimitedH11Protocol,), {"limits": limits})
