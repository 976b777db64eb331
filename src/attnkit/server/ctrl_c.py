"""Ctrl-C that stops ``attnkit serve`` every time.

Under CPython 3.11 a SIGINT can go unhandled while other threads run Python code: the main
thread went on polling and its Python-level handler never ran (seen about
once in 20-40 stops on a loaded 2-core machine). Our reading, not confirmed in a debugger: a
thread that cannot handle signals recomputes the interpreter's shared "eval breaker" without
the pending signal. Whatever the cause, the C-level handler also writes the signal's number
into the wakeup file descriptor (:func:`signal.set_wakeup_fd`), which does not depend on the
eval breaker: the server reads it on each tick of its loop (:mod:`attnkit.server.running`)
and stops.
"""

from __future__ import annotations

import os
import signal
import threading


class CtrlC:
    """A SIGINT wakeup pipe for the main thread; use as a context manager (it restores the
    previous wakeup descriptor on exit). :meth:`pressed` is True once a SIGINT has arrived."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self.write_fd, False)
        self.previous = -1

    def __enter__(self) -> CtrlC:
        self.previous = signal.set_wakeup_fd(self.write_fd, warn_on_full_buffer=False)
        return self

    def __exit__(self, *exc) -> None:
        signal.set_wakeup_fd(self.previous)
        os.close(self.read_fd)
        os.close(self.write_fd)

    def pressed(self) -> bool:
        """Whether a SIGINT arrived since the last call (other signals' bytes are dropped)."""
        try:
            data = os.read(self.read_fd, 512)  # one byte per signal, its number
        except BlockingIOError:
            return False
        return signal.SIGINT in data


def watch_ctrl_c() -> CtrlC | None:
    """A :class:`CtrlC` where one can be installed (POSIX, main thread), else None."""
    if os.name != "posix" or threading.current_thread() is not threading.main_thread():
        return None
    return CtrlC()


def leave_ctrl_c_to_main() -> None:
    """Block SIGINT in the calling thread (a connection's, the worker's), so that the kernel
    delivers Ctrl-C to the main thread, whose poll it interrupts: handled at once there."""
    if hasattr(signal, "pthread_sigmask"):  # not on Windows, where only the main thread gets it
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
