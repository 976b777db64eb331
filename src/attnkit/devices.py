"""Which device a run computes on: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``.

Every place that runs a model takes the same setting: ``train.device`` in a config,
``--device`` on ``train``, ``evaluate``, ``predict``, ``translate``, ``serve`` and the
benchmarks, and ``attnkit.load_run(path, device=...)``. :func:`pick` turns it into a
:class:`torch.device` once and logs which, and why:

- ``auto``: the first CUDA GPU if torch sees one, else Apple's MPS if available, else the CPU
  (the choice Lightning's ``accelerator="auto"`` and Accelerate make);
- ``cuda`` / ``cuda:N`` / ``mps`` / ``cpu``: that device, or :class:`DeviceUnavailable` (one
  line, exit status 2 on the command line) when torch cannot use it here.

Models and their batches follow the model's device (:func:`of`): a task builds its tensors on
``of(model)``, so the same code runs on any device without copying the model.
"""

from __future__ import annotations

import logging
import re

import torch
from torch import nn

log = logging.getLogger(__name__)

PATTERN = r"auto|cpu|mps|cuda(:\d+)?"
DESCRIBED = "auto, cpu, cuda, cuda:N or mps"
_said: set[str] = set()


class DeviceUnavailable(ValueError):
    """The device asked for cannot be used on this machine (say which and why, in one line)."""


def valid(setting: str) -> bool:
    """Whether ``setting`` is one of ``auto``, ``cpu``, ``cuda``, ``cuda:N``, ``mps``."""
    return isinstance(setting, str) and re.fullmatch(PATTERN, setting) is not None


def resolve(setting: str = "auto", *, field: str = "device") -> tuple[torch.device, str]:
    """``setting`` as a :class:`torch.device` on this machine, and why it was chosen."""
    if not valid(setting):
        raise ValueError(f"{field} must be {DESCRIBED}, got {setting!r}")
    if setting == "auto":
        if torch.cuda.is_available():
            name = torch.cuda.get_device_name(0)
            return torch.device("cuda", 0), f"auto: CUDA is available ({name})"
        if _mps_available():
            return torch.device("mps"), "auto: no CUDA; Apple MPS is available"
        return torch.device("cpu"), "auto: torch sees no CUDA GPU and no MPS"
    device = torch.device(setting)
    if device.type == "cuda":
        _check_cuda(device, field)
        index = 0 if device.index is None else device.index
        return torch.device("cuda", index), f"{setting} ({torch.cuda.get_device_name(index)})"
    if device.type == "mps" and not _mps_available():
        raise DeviceUnavailable(f"{field}: mps, but this torch has no usable MPS backend")
    return device, setting


def pick(setting: str = "auto", *, field: str = "device") -> torch.device:
    """:func:`resolve`'s device; the choice is logged once per process."""
    device, why = resolve(setting, field=field)
    message = f"{field}: {device} ({why})" if why != setting else f"{field}: {device}"
    if message not in _said:
        _said.add(message)
        log.info(message)
    return device


def of(model: nn.Module) -> torch.device:
    """The device of ``model``'s first parameter (or buffer); the CPU for an empty module."""
    for tensor in model.parameters():
        return tensor.device
    for tensor in model.buffers():
        return tensor.device
    return torch.device("cpu")


def move(obj, device: torch.device):
    """Every :class:`~torch.nn.Module` attribute of ``obj`` (a loaded run) moved to ``device``,
    and its ``device`` attribute set where it has one; returns ``obj``."""
    if isinstance(obj, nn.Module):
        return obj.to(device)
    for name, value in list(vars(obj).items()):
        if isinstance(value, nn.Module):
            setattr(obj, name, value.to(device))
        elif isinstance(value, list) and value and all(isinstance(v, nn.Module) for v in value):
            setattr(obj, name, [v.to(device) for v in value])
    if hasattr(obj, "device"):
        obj.device = device
    return obj


def _check_cuda(device: torch.device, field: str) -> None:
    if not torch.cuda.is_available():
        built = (
            "this torch was built without CUDA"
            if torch.version.cuda is None
            else (f"this torch (CUDA {torch.version.cuda}) finds no GPU or driver")
        )
        raise DeviceUnavailable(f"{field}: {device}, but {built}; use --device cpu or auto")
    count = torch.cuda.device_count()
    if device.index is not None and device.index >= count:
        raise DeviceUnavailable(
            f"{field}: {device}, but torch sees {count} CUDA device(s): cuda:0..cuda:{count - 1}"
        )


def _mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())
