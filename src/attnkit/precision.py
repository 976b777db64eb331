"""bfloat16 where the device computes it natively, float32 elsewhere.

bfloat16 autocast only pays where the hardware multiplies bfloat16 matrices itself: on a CPU
with AVX-512 BF16 or AMX (oneDNN's bf16 kernels), on a GPU that supports it (Ampere and later).
On a CPU with only AVX2, PyTorch falls back to a reference GEMM: a 1024 x 1024 bf16 matmul
measured 0.9 GFLOP/s against 120 GFLOP/s in float32 on such a machine, and an autocast
``Linear`` was 7x slower than float32 (issue 15). So every ``bf16`` setting in attnkit
(``train.bf16``, ``decode.bf16``, ``--bf16``) takes three values:

- ``auto`` (the default): on where the device computes bfloat16 natively, off elsewhere;
- ``true``: on, with a warning giving the expected slowdown where it is not native;
- ``false``: off.

:func:`resolve` turns a setting into a bool once per run and logs which, and why. The
environment variable ``ATTNKIT_BF16_NATIVE=0`` (or ``1``) overrides the detection: the test
suite sets it to ``0`` so that it computes the same numbers on every CI machine.
"""

from __future__ import annotations

import logging
import os
from typing import Literal

import torch

log = logging.getLogger(__name__)
_said: set[tuple[str, str]] = set()  # each decision is logged once per process

BF16 = bool | Literal["auto"]
ENV = "ATTNKIT_BF16_NATIVE"
SLOWDOWN = (
    "PyTorch then multiplies bfloat16 matrices with a reference GEMM; expect matrix products "
    "up to 100x and an autocast Linear layer about 7x slower than float32 (set bf16: auto)"
)


def native_bf16(device: torch.device | str = "cpu") -> tuple[bool, str]:
    """Whether ``device`` computes bfloat16 natively, and how that was decided."""
    forced = os.environ.get(ENV, "").strip()
    if forced in ("0", "1"):
        return forced == "1", f"{ENV}={forced}"
    kind = torch.device(device).type
    if kind == "cuda":
        ok = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
        return ok, "torch.cuda.is_bf16_supported()"
    if kind == "cpu":
        ok = bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
        how = "AVX-512 BF16 or AMX" if ok else "no AVX-512 BF16 or AMX"
        return ok, f"this CPU has {how} (oneDNN)"
    return False, f"no bfloat16 detection for device type {kind!r}"


def resolve(setting: BF16, device: torch.device | str = "cpu", *, field: str = "bf16") -> bool:
    """``setting`` (``"auto"``, True or False) as a bool for ``device``; logs the decision
    for ``auto`` and warns when True is asked for on a device without native bfloat16."""
    if setting is False:
        return False
    if setting not in (True, "auto"):
        raise ValueError(f"{field} must be true, false or auto, got {setting!r}")
    native, why = native_bf16(device)
    if setting == "auto":
        _once(logging.INFO, f"{field}: auto -> {'on' if native else 'off'} ({why})")
        return native
    if not native:
        _once(logging.WARNING, f"{field}: true, but {why}: {SLOWDOWN}")
    return True


def _once(level: int, message: str) -> None:
    if (str(level), message) not in _said:
        _said.add((str(level), message))
        log.log(level, message)
