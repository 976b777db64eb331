"""Whether bfloat16 pays on this CPU, measured: float32 against bfloat16 matrix products.

A CPU that has AVX-512 BF16 may still multiply bfloat16 matrices slower than float32: on a
2-core Xeon with AVX-512 BF16 and no AMX, oneDNN's bf16 GEMM ran at 83 GFLOP/s against 161 in
float32 (n = 2048, one thread), and training and decoding under autocast were 1.2-1.7x slower
(issue 34). On the project's AMD EPYC, with the same instruction set flag, bf16 ran ~4x faster.
So ``precision: auto`` on the CPU decides by measuring: :func:`measure` times ``n x n`` products
in both types (median of a few, after a warm-up) at this process's thread count, and
:func:`probe` keeps the result per machine in ``precision.json`` under the cache folder
(``$ATTNKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/attnkit``, else ``~/.cache/attnkit``), keyed
by the CPU's model name, torch's version and the thread count, so it runs once per machine.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path

import torch

SIZE = 1024  # the product's n: large enough for the GEMM kernels' steady rate, ~0.1 s in all
REPEATS = 5
FASTER = 1.1  # bf16 is chosen where its rate is at least this many times float32's


def cache_dir() -> Path:
    """Where attnkit keeps what it measured about this machine."""
    env = os.environ.get("ATTNKIT_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "attnkit"


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``; elsewhere ``platform.processor()``)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def machine_key() -> str:
    return f"{cpu_name()} | torch {torch.__version__} | {torch.get_num_threads()} threads"


def _rate(dtype: torch.dtype, n: int, repeats: int) -> float:
    """GFLOP/s of an ``n x n`` by ``n x n`` product in ``dtype`` (median of ``repeats``)."""
    g = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=g).to(dtype)
    b = torch.randn(n, n, generator=g).to(dtype)
    torch.mm(a, b)  # warm-up: kernel selection, first-touch of the output
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        times.append(time.perf_counter() - start)
    return 2 * n**3 / statistics.median(times) / 1e9


def measure(n: int = SIZE, repeats: int = REPEATS) -> dict:
    """float32 and bfloat16 matrix-product rates here, and whether bf16 is measurably faster."""
    fp32 = _rate(torch.float32, n, repeats)
    bf16 = _rate(torch.bfloat16, n, repeats)
    return {
        "fp32_gflops": round(fp32, 1),
        "bf16_gflops": round(bf16, 1),
        "n": n,
        "bf16_faster": bf16 >= FASTER * fp32,
    }


def probe() -> tuple[dict, bool]:
    """This machine's measurement (from the cache when it holds one), and whether it was
    measured just now."""
    key, path = machine_key(), cache_dir() / "precision.json"
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if isinstance(known, dict) and isinstance(known.get(key), dict):
        return known[key], False
    found = measure()
    known = known if isinstance(known, dict) else {}
    known[key] = found
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known, indent=1), encoding="utf-8")
        tmp.replace(path)
    except OSError:  # a read-only home: measure again next time
        pass
    return found, True
