"""Timing and memory: interleaved repeats, a resident-memory high-water mark, the matmul peak.

**Time.** :func:`interleave` runs every implementation once per repeat, in a rotated order, so
that a burst of load from other processes hits all of them alike; each gets ``warmup`` untimed
calls first. Medians and min-max over the repeats are reported (:mod:`.report`).

**Memory.** ``tracemalloc`` does not see PyTorch's allocations. :func:`peak_rss` runs the
function once while a thread reads ``/proc/self/statm`` every ``interval`` seconds and reports
the highest resident size above the size before the call, after ``malloc_trim(0)`` has
returned freed heap memory to the system. It counts everything the call touches (outputs,
temporaries, the autograd graph); an allocation that lives shorter than the interval can be
missed, so the figure is a lower bound at that resolution.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from attnkit.runtime import malloc_trim

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes() -> int:
    """The resident set size of this process now (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except OSError:
        return 0


def peak_rss(fn: Callable[[], object], interval: float = 0.0005) -> int:
    """Bytes of resident memory above the starting size at the peak of one ``fn()`` call."""
    malloc_trim()
    base = rss_bytes()
    peak, done = [base], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss_bytes())
            time.sleep(interval)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        result = fn()
        peak[0] = max(peak[0], rss_bytes())
        del result
    finally:
        done.set()
        thread.join()
    return max(peak[0] - base, 0)


def interleave(
    fns: dict[str, Callable[[], object]], repeats: int, warmup: int = 1
) -> dict[str, list[float]]:
    """Seconds per call of each function over ``repeats`` rounds, the order rotated each round."""
    names = list(fns)
    for _ in range(warmup):
        for name in names:
            fns[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - start)
    return times


def matmul_peak(dtype, n: int = 2048, repeats: int = 5, device="cpu") -> list[float]:
    """GFLOP/s of an ``n x n`` by ``n x n`` matrix product (``2 n^3`` FLOPs) per repeat: the
    device's practical peak in ``dtype`` (on the CPU: at the current thread count)."""
    import torch

    a = torch.randn(n, n).to(device, dtype)
    b = torch.randn(n, n).to(device, dtype)
    cuda = torch.device(device).type == "cuda"

    def mm():
        a @ b
        if cuda:
            torch.cuda.synchronize()

    times = interleave({"mm": mm}, repeats, warmup=2)["mm"]
    return [2 * n**3 / t / 1e9 for t in times]
