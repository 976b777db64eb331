"""The place a benchmark runs in: the machine (CPU model, usable CPUs, ISA flags), the versions of
Python, PyTorch, NumPy and attnkit, the thread and allocator settings that change CPU timings,
and the load average. :class:`~benchmarks.suites.report.Report` records them with its results."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

_ENV_KEYS = (
    "OMP_NUM_THREADS",
    "OMP_WAIT_POLICY",
    "MKL_NUM_THREADS",
    "MALLOC_MMAP_THRESHOLD_",
    "MALLOC_TRIM_THRESHOLD_",
    "ATTNKIT_MALLOPT",
)
_FLAGS = ("avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile")


def machine() -> dict:
    """CPU model, logical CPUs, the CPUs this process may use, the relevant ISA flags."""
    model, flags = platform.processor() or "unknown", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and model in ("unknown", platform.processor()):
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu_model": model,
        "logical_cpus": os.cpu_count(),
        "usable_cpus": usable,
        "cpu_flags": sorted(flags & set(_FLAGS)),
        "platform": platform.platform(),
    }


def versions(extra: dict | None = None) -> dict:
    import numpy
    import torch

    import attnkit

    found = {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "attnkit": attnkit.__version__,
    }
    return {**found, **(extra or {})}


def settings() -> dict:
    """Thread count and the environment variables that change CPU timings."""
    import torch

    from attnkit.runtime import malloc_settings

    return {
        "torch_threads": torch.get_num_threads(),
        "env": {key: os.environ.get(key) for key in _ENV_KEYS},
        "malloc": malloc_settings(),
    }


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]
