"""Checkpoints as safetensors (tensors) plus JSON (everything else): no pickles, atomic writes.

A checkpoint directory holds ``model.safetensors`` and, for resuming, ``trainer.safetensors``
(optimizer tensors) and ``trainer.json`` (step, epoch, optimizer hyper-parameters, scheduler,
the RNG states of torch, NumPy and Python for every rank, the data position, and the size and
SHA-256 of each tensor file). Every file is written to a temporary name, flushed, fsynced and
renamed, and the directory fsynced, so a run killed mid-write never leaves a half-written file
in place of a good one. Reading never unpickles: a run directory from an untrusted source
cannot execute code. A damaged or mismatched file raises :class:`CheckpointError` naming the
file and what is wrong.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import random
from pathlib import Path

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file


class CheckpointError(ValueError):
    """A checkpoint file that is missing, damaged, or does not fit the model."""


class CheckpointKeyError(CheckpointError, KeyError):
    """Parameters missing from, or unexpected in, a checkpoint (also a :class:`KeyError`)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def fsync_dir(path: Path) -> None:
    """Make a rename or unlink inside directory ``path`` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _atomic(path: Path, write) -> None:
    """``write(tmp)`` then flush+fsync ``tmp``, rename it to ``path`` and fsync the directory.

    On any error (a full disk, say) the temporary file is removed and ``path`` is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def write_text(path: Path, text: str) -> None:
    """Atomically write ``text`` (UTF-8) to ``path``."""
    _atomic(Path(path), lambda p: p.write_text(text, encoding="utf-8"))


def read_tensors(path: str | Path) -> dict[str, torch.Tensor]:
    """The tensors of a safetensors file; a missing or damaged file is a clear error."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no model checkpoint here")
    try:
        return load_file(str(path))
    except SafetensorError as err:
        raise CheckpointError(
            f"{path}: damaged checkpoint, not a complete safetensors file "
            f"({path.stat().st_size} bytes; {err})"
        ) from None


def save_model(model: torch.nn.Module, path: str | Path) -> None:
    """Write the model's parameters to ``path`` (safetensors). Tied weights are stored once."""
    raw = model.state_dict()
    state = {k: v.detach().contiguous().cpu() for k, v in raw.items()}
    seen: dict[int, str] = {}
    for name in list(state):
        ptr = raw[name].data_ptr()
        if ptr in seen and state[name].numel():
            del state[name]  # tied to seen[ptr]; restored by load_state_dict(strict=False)
        else:
            seen[ptr] = name
    _atomic(Path(path), lambda p: save_file(state, str(p), metadata={"format": "pt"}))


def load_model(model: torch.nn.Module, path: str | Path) -> None:
    """Load parameters written by :func:`save_model`; missing keys must be tied weights.

    Raises :class:`FileNotFoundError`, or :class:`CheckpointError` naming the file and the
    damage (truncated, wrong shapes, missing or unexpected tensors).
    """
    path = Path(path)
    tensors = read_tensors(path)
    own = model.state_dict()
    unexpected = sorted(set(tensors) - set(own))
    if unexpected:
        raise CheckpointKeyError(f"{path}: unexpected parameters {_few(unexpected)}")
    wrong = [
        f"{k} {tuple(v.shape)} (model {tuple(own[k].shape)})"
        for k, v in tensors.items()
        if v.shape != own[k].shape
    ]
    if wrong:
        raise CheckpointError(f"{path}: wrong shapes for {_few(wrong)}; another model?")
    missing, _ = model.load_state_dict(tensors, strict=False)
    # a tied parameter is listed under its first name only; its other names may be missing
    unique = {n for n, _ in model.named_parameters(remove_duplicate=True)}
    unique |= {n for n, _ in model.named_buffers()}
    really_missing = [k for k in missing if k in unique]
    if really_missing:
        raise CheckpointKeyError(f"{path}: missing parameters {_few(really_missing)}")


def _few(names: list[str], shown: int = 3) -> str:
    """The first ``shown`` names and how many more: one readable line however many differ."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def rng_state() -> dict:
    """This process's random state: torch (CPU and CUDA), NumPy and Python, as JSON data."""
    np_state = np.random.get_state()  # noqa: NPY002 (the global state others may use)
    state = {
        "torch": base64.b64encode(torch.get_rng_state().numpy().tobytes()).decode(),
        "numpy": [np_state[0], np_state[1].tolist(), *map(float, np_state[2:])],
        "python": [random.getstate()[0], list(random.getstate()[1]), random.getstate()[2]],
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        cuda = torch.cuda.get_rng_state().numpy().tobytes()
        state["cuda"] = base64.b64encode(cuda).decode()
    return state


def set_rng_state(state: dict) -> None:
    """Restore what :func:`rng_state` returned."""
    as_bytes = np.frombuffer(base64.b64decode(state["torch"]), dtype=np.uint8).copy()
    torch.set_rng_state(torch.from_numpy(as_bytes))
    kind, keys, pos, has_gauss, cached = state["numpy"]
    keys = np.array(keys, dtype=np.uint32)
    np.random.set_state((kind, keys, int(pos), int(has_gauss), cached))  # noqa: NPY002
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    if "cuda" in state and torch.cuda.is_available():
        cuda = np.frombuffer(base64.b64decode(state["cuda"]), dtype=np.uint8).copy()
        torch.cuda.set_rng_state(torch.from_numpy(cuda))


def file_digest(path: Path) -> dict:
    """``{"bytes": size, "sha256": hex}`` of a file, to detect damage before loading it."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return {"bytes": path.stat().st_size, "sha256": h.hexdigest()}


def save_trainer(
    path: Path, *, optimizer, scheduler, step: int, epoch: int, extra: dict, rng: list | None = None
) -> None:
    """Save optimizer, scheduler, counters and RNG state under ``path`` (a directory).

    ``rng`` is the list of every rank's :func:`rng_state` (default: this process's alone).
    ``trainer.json`` is written last and records the size and SHA-256 of the tensor files
    beside it, so :func:`verify` can tell a complete checkpoint from a damaged one.
    """
    path = Path(path)
    opt = optimizer.state_dict()
    tensors, slots = {}, {}
    for pid, slot in opt["state"].items():
        slots[str(pid)] = {}
        for key, value in slot.items():
            if isinstance(value, torch.Tensor):
                tensors[f"{pid}.{key}"] = value.detach().contiguous().cpu()
            else:
                slots[str(pid)][key] = value
    _atomic(path / "trainer.safetensors", lambda p: save_file(tensors, str(p)))
    files = {
        name: file_digest(path / name)
        for name in ("model.safetensors", "trainer.safetensors")
        if (path / name).exists()
    }
    meta = {
        "step": step,
        "epoch": epoch,
        "param_groups": opt["param_groups"],
        "slots": slots,
        "scheduler": scheduler.state_dict() if scheduler is not None else None,
        "rng": rng if rng is not None else [rng_state()],
        "extra": extra,
        "files": files,
    }
    write_text(path / "trainer.json", json.dumps(meta))


def read_meta(path: Path) -> dict:
    """``trainer.json`` of checkpoint directory ``path``; damage is a :class:`CheckpointError`."""
    file = Path(path) / "trainer.json"
    if not file.exists():
        raise FileNotFoundError(f"{file}: no saved training state here")
    try:
        meta = json.loads(file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CheckpointError(f"{file}: damaged training state, not valid JSON ({err})") from None
    need = {"step", "epoch", "param_groups", "slots", "scheduler"}
    if not isinstance(meta, dict) or not need <= set(meta):
        have = sorted(meta) if isinstance(meta, dict) else type(meta).__name__
        raise CheckpointError(
            f"{file}: not a training state; expected keys {sorted(need)}, got {have}"
        )
    return meta


def verify(path: Path) -> dict:
    """Check that each file ``trainer.json`` lists has its recorded size and SHA-256."""
    meta = read_meta(path)
    for name, want in meta.get("files", {}).items():
        file = Path(path) / name
        if not file.exists():
            raise CheckpointError(f"{file}: missing from the checkpoint")
        got = file_digest(file)
        if got != want:
            raise CheckpointError(
                f"{file}: damaged ({got['bytes']} bytes, expected {want['bytes']}; "
                "checksum differs)"
            )
    return meta


def load_trainer(path: Path, *, optimizer, scheduler, rank: int = 0) -> dict:
    """Restore what :func:`save_trainer` wrote; returns ``{"step", "epoch", "extra"}``.

    The RNG state restored is rank ``rank``'s when the checkpoint holds one for it.
    """
    path = Path(path)
    meta = verify(path)
    tensors = read_tensors(path / "trainer.safetensors")
    state: dict = {int(pid): dict(slot) for pid, slot in meta["slots"].items()}
    for name, value in tensors.items():
        pid, key = name.split(".", 1)
        state.setdefault(int(pid), {})[key] = value
    try:
        optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    except (ValueError, KeyError) as err:
        raise CheckpointError(f"{path}: optimizer state does not fit the model ({err})") from None
    if scheduler is not None and meta["scheduler"] is not None:
        scheduler.load_state_dict(meta["scheduler"])
    if "rng" in meta:
        set_rng_state(meta["rng"][rank] if rank < len(meta["rng"]) else meta["rng"][0])
    elif "torch_rng" in meta:  # checkpoints from before the per-rank RNG states
        torch.set_rng_state(torch.tensor(meta["torch_rng"], dtype=torch.uint8))
    return {"step": meta["step"], "epoch": meta["epoch"], "extra": meta["extra"]}


def average_checkpoints(paths: list[Path]) -> dict[str, torch.Tensor]:
    """The element-wise mean of several model checkpoints (Vaswani et al. 2017 §6.1)."""
    if not paths:
        raise ValueError("no checkpoints to average")
    first = read_tensors(paths[0])
    total = {k: v.double() for k, v in first.items()}
    for path in paths[1:]:
        for k, v in read_tensors(path).items():
            total[k] += v.double()
    return {k: (v / len(paths)).to(first[k].dtype) for k, v in total.items()}
