"""Process-wide CPU settings that change timings: glibc's malloc thresholds and OpenMP waiting.

Fresh large allocations pay a page fault per 4 KB page the first time they are touched; glibc
returns freed memory above ``M_TRIM_THRESHOLD`` to the system and serves blocks above
``M_MMAP_THRESHOLD`` with their own ``mmap`` (unmapped again on free), so a training loop that
allocates the same big tensors every step faults on every step. Raising both keeps the memory
in the process. The environment variables ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_``
only act when set before the process starts; :func:`apply_mallopt` does the same from inside
a running process through ``mallopt(3)`` (glibc caps the mmap threshold at 32 MiB on 64-bit).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # <malloc.h>
MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's largest accepted value (HEAP_MAX_SIZE / 2)
TRIM_THRESHOLD = 1024 * 1024 * 1024
_applied: dict = {}


def _libc():
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt  # noqa: B018 - glibc only
        return libc
    except (OSError, AttributeError):
        return None


def apply_mallopt(mmap_threshold: int = MMAP_THRESHOLD, trim: int = TRIM_THRESHOLD) -> bool:
    """Raise glibc's mmap and trim thresholds in this process; False where not glibc."""
    libc = _libc()
    if libc is None:
        return False
    ok = bool(libc.mallopt(M_MMAP_THRESHOLD, mmap_threshold)) and bool(
        libc.mallopt(M_TRIM_THRESHOLD, trim)
    )
    if ok:
        _applied.update(mmap_threshold=mmap_threshold, trim_threshold=trim)
    return ok


def malloc_trim() -> None:
    """Give freed heap memory back to the system (before measuring a resident-size peak)."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


def malloc_settings() -> dict:
    """What this process set through :func:`apply_mallopt` (empty when untouched)."""
    return dict(_applied)


def apply_from_env() -> None:
    """``ATTNKIT_MALLOPT=1`` in the environment: call :func:`apply_mallopt` (used by the
    benchmark's child processes to compare the settings)."""
    if os.environ.get("ATTNKIT_MALLOPT") == "1":
        apply_mallopt()


NOTEBOOK_BACKENDS = ("inline", "widget", "ipympl", "nbagg")


def files_backend() -> None:
    """Draw into files with matplotlib's Agg backend, never a window; but leave a notebook's
    backend alone (``matplotlib_inline``, ``ipympl``, ``nbagg``), so a lesson that calls an
    attnkit plot can still ``plt.show()`` its own figures afterwards."""
    import matplotlib

    chosen = dict.__getitem__(matplotlib.rcParams, "backend")  # not resolving it (rcParams[] would)
    if not (isinstance(chosen, str) and any(n in chosen.lower() for n in NOTEBOOK_BACKENDS)):
        matplotlib.use("Agg")
