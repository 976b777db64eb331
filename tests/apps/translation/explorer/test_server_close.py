"""Closing the explorer leaves no connection thread running.

A daemon thread still alive at interpreter exit is stopped where it next takes the GIL; when
that is inside a tensor's deallocation the process aborts (CI saw ``attnkit serve`` end with
SIGABRT, "terminate called without an active exception", after Ctrl-C).
"""

import os
import signal
import socket
import threading
import time

import pytest
from explorer_helpers import start, stop

from attnkit.apps.translation.explorer.app import serve
from attnkit.server import running


def _mask() -> set:
    return signal.pthread_sigmask(signal.SIG_BLOCK, set())


def test_close_waits_for_a_lingering_connection():
    server, thread = start(None)
    before = set(threading.enumerate())
    with socket.create_connection(server.server_address[:2], timeout=10) as client:
        client.sendall(b"GET /api/info HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        assert client.recv(65536).startswith(b"HTTP/1.1 200")
        # answered, and the client keeps its end open: the server's close lingers (up to 1 s)
        stop(server, thread)
        left = [t for t in threading.enumerate() if t.daemon and t not in before]
    assert left == []


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no per-thread signal masks")
def test_ctrl_c_is_left_to_the_main_thread(rnn_server, rnn_client, monkeypatch):
    """The model's worker thread blocks SIGINT: in CPython 3.11 a Ctrl-C caught by a thread
    that then runs Python code can be lost, and ``attnkit serve`` then never stops."""
    masks = {}
    explorer = rnn_server.explorer
    translate = explorer.translate

    def recorded(request):
        masks["worker"] = _mask()
        return translate(request)

    monkeypatch.setattr(explorer, "translate", recorded)
    answer = rnn_client.post("/api/translate", {"text": "The dog sleeps."})
    assert answer.status == 200 and set(masks) == {"worker"}
    assert signal.SIGINT in masks["worker"]
    assert signal.SIGINT not in _mask()  # ours is clear


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no per-thread signal masks")
def test_the_worker_blocks_ctrl_c_when_started_from_the_main_thread():
    """Called from the Python API, the worker is started by the main thread, whose mask it
    would inherit: it blocks SIGINT itself."""
    import asyncio

    server = running.Server("127.0.0.1", 0, running.Limits())
    try:
        blocked = asyncio.run(server.run(lambda: signal.SIGINT in _mask()))
        assert blocked is True
    finally:
        server.server_close()


@pytest.mark.skipif(os.name != "posix", reason="the wakeup pipe is installed on POSIX only")
def test_a_ctrl_c_the_interpreter_lost_still_stops_serve(monkeypatch):
    """A SIGINT whose Python-level handlers never run (as when CPython 3.11 loses it) still
    stops :func:`serve`, through the signal wakeup pipe read on each tick of the loop."""
    lines, calls = [], []
    monkeypatch.setattr(running._Uvicorn, "handle_exit", lambda self, sig, frame: None)

    def handler(*_) -> None:  # does nothing the first time; the second is the guard
        calls.append(1)
        if len(calls) > 1:  # the fallback failed: stop the server the ordinary way, and fail
            raise KeyboardInterrupt

    def press() -> None:
        os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGINT, handler)
    timers = [threading.Timer(t, press) for t in (1.0, 15.0)]
    try:
        for timer in timers:
            timer.start()
        started = time.monotonic()
        serve(None, port=0, echo=lines.append)
        took = time.monotonic() - started
    finally:
        for timer in timers:
            timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert lines and "explorer" in lines[0] and took < 10
