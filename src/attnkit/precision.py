"""The precision a run computes in: float32, or bfloat16 / float16 autocast where it pays.

Training takes ``train.precision`` (``auto``, ``fp32``, ``bf16`` or ``fp16``; the older
``train.bf16: true | false | auto`` is read as ``bf16``, ``fp32`` and ``auto``); decoding takes
``decode.bf16`` and ``--bf16``. :func:`choose` and :func:`resolve` decide once per run and log
which precision, and why:

- On a CUDA GPU, ``auto`` is bf16 where the GPU supports it (Ampere and later), else fp16 with
  a gradient scaler (Micikevicius et al. 2018, "Mixed Precision Training", ICLR: the loss is
  scaled up before the backward pass so that small fp16 gradients do not flush to zero, and
  steps whose gradients overflowed are skipped; ``torch.amp.GradScaler``).
- On the CPU, ``auto`` is bf16 only where it is *measurably faster*: a CPU without AVX-512 BF16
  or AMX multiplies bf16 matrices with a reference GEMM (0.9 against 120 GFLOP/s measured on an
  AVX2 machine, issue 15), and even a CPU with AVX-512 BF16 can be slower in bf16 than in
  float32 (issue 34). :mod:`attnkit.cpu_probe` times both once per machine and the log line
  gives its figures.
- ``fp16`` on the CPU is refused in one line where this torch cannot autocast to it.

The environment variable ``ATTNKIT_BF16_NATIVE=0`` (or ``1``) overrides the detection and
the probe: the test suite sets it to ``0`` so that it computes the same numbers on every
CI machine.
"""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass
from typing import Literal

import torch

log = logging.getLogger(__name__)
_said: set[tuple[str, str]] = set()  # each decision is logged once per process

BF16 = bool | Literal["auto"]
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
FROM_BF16 = {True: "bf16", False: "fp32", "auto": "auto"}  # the older train.bf16 setting
ENV = "ATTNKIT_BF16_NATIVE"
SLOWDOWN = (
    "PyTorch then multiplies bfloat16 matrices with a reference GEMM; expect matrix products "
    "up to 100x and an autocast Linear layer about 7x slower than float32 (set bf16: auto)"
)
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


@dataclass(frozen=True)
class Precision:
    """A decided precision: ``name`` (fp32, bf16 or fp16) and why it was chosen."""

    name: str
    why: str = ""

    @property
    def dtype(self) -> torch.dtype:
        return DTYPES.get(self.name, torch.float32)

    @property
    def scaled(self) -> bool:
        """Whether the loss needs a gradient scaler (fp16)."""
        return self.name == "fp16"

    def autocast(self, device: torch.device | str):
        """The autocast context for ``device`` (nothing in fp32)."""
        if self.name == "fp32":
            return contextlib.nullcontext()
        return torch.autocast(torch.device(device).type, dtype=self.dtype)

    def scaler(self, device: torch.device | str) -> torch.amp.GradScaler | None:
        """A fresh gradient scaler for fp16, else None."""
        return torch.amp.GradScaler(torch.device(device).type) if self.scaled else None


def native_bf16(device: torch.device | str = "cpu") -> tuple[bool, str]:
    """Whether ``device`` computes bfloat16 natively *and* faster, and how that was decided."""
    forced = os.environ.get(ENV, "").strip()
    if forced in ("0", "1"):
        return forced == "1", f"{ENV}={forced}"
    kind = torch.device(device).type
    if kind == "cuda":
        ok = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
        return ok, "torch.cuda.is_bf16_supported()"
    if kind == "cpu":
        if not torch.ops.mkldnn._is_mkldnn_bf16_supported():
            return False, "this CPU has no AVX-512 BF16 or AMX (oneDNN)"
        return _probed()
    return False, f"no bfloat16 detection for device type {kind!r}"


def _probed() -> tuple[bool, str]:
    from attnkit.cpu_probe import probe

    found, fresh = probe()
    how = "measured" if fresh else "measured earlier, cached"
    rates = f"bf16 {found['bf16_gflops']:g} against fp32 {found['fp32_gflops']:g} GFLOP/s"
    verdict = "faster" if found["bf16_faster"] else "not faster"
    return bool(found["bf16_faster"]), f"{how}: {rates} at n = {found['n']}, bf16 {verdict}"


def resolve(setting: BF16, device: torch.device | str = "cpu", *, field: str = "bf16") -> bool:
    """A bf16 ``setting`` (``"auto"``, True or False) as a bool for ``device``; logs the
    decision for ``auto`` and warns when True is asked for where bf16 is not native."""
    if setting is False:
        return False
    if setting not in (True, "auto"):
        raise ValueError(f"{field} must be true, false or auto, got {setting!r}")
    native, why = native_bf16(device)
    if setting == "auto":
        _once(logging.INFO, f"{field}: auto -> {'on' if native else 'off'} ({why})")
        return native
    if not native:
        reference_gemm = _cpu(device) and (
            os.environ.get(ENV, "").strip() == "0"
            or not torch.ops.mkldnn._is_mkldnn_bf16_supported()
        )
        _once(
            logging.WARNING,
            f"{field}: true, but {why}" + (f": {SLOWDOWN}" if reference_gemm else ""),
        )
    return True


def choose(setting: str, device: torch.device | str, *, field: str = "precision") -> Precision:
    """``train.precision`` (``auto``, ``fp32``, ``bf16``, ``fp16``) decided for ``device``."""
    if setting not in PRECISIONS:
        raise ValueError(f"{field} must be auto, fp32, bf16 or fp16, got {setting!r}")
    kind = torch.device(device).type
    if setting == "fp16":
        _check_fp16(kind, field)
        return Precision("fp16", "asked for")
    if setting in ("fp32", "bf16"):
        if setting == "bf16":
            resolve(True, device, field=field)  # warns where it is slow
        return Precision(setting, "asked for")
    native, why = native_bf16(device)
    if native:
        chosen = Precision("bf16", why)
    elif kind == "cuda" and os.environ.get(ENV, "").strip() != "0":
        chosen = Precision("fp16", "this GPU has no bfloat16: float16 with a gradient scaler")
    else:
        chosen = Precision("fp32", why)
    _once(logging.INFO, f"{field}: auto -> {chosen.name} ({chosen.why})")
    return chosen


def _check_fp16(kind: str, field: str) -> None:
    """Refuse fp16 in one line where this torch cannot autocast ``kind`` to it."""
    if kind == "cuda":
        return
    try:
        with torch.autocast(kind, dtype=torch.float16):
            layer = torch.nn.Linear(4, 4).to(kind)
            out = layer(torch.ones(2, 4, device=kind))
        out.float().sum().backward()
        ok = out.dtype == torch.float16
    except (RuntimeError, AssertionError) as err:  # torch refuses the dtype on this device
        raise ValueError(f"{field}: fp16, but torch cannot autocast {kind} to it: {err}") from err
    if not ok:
        raise ValueError(f"{field}: fp16, but torch's {kind} autocast ignores float16 here")


def _cpu(device: torch.device | str) -> bool:
    return torch.device(device).type == "cpu"


def _once(level: int, message: str) -> None:
    if (str(level), message) not in _said:
        _said.add((str(level), message))
        log.log(level, message)
