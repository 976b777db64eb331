"""Checkpoints as safetensors (tensors) plus JSON (everything else): no pickles, atomic writes.

A checkpoint directory holds ``model.safetensors`` and, for resuming, ``trainer.safetensors``
(optimizer tensors) and ``trainer.json`` (step, epoch, optimizer hyper-parameters, scheduler
and RNG states). Each file is written to a temporary name and renamed, so a run killed mid-write
never leaves a half-written checkpoint in place of a good one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file


def _atomic(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    write(tmp)
    os.replace(tmp, path)


def save_model(model: torch.nn.Module, path: str | Path) -> None:
    """Write the model's parameters to ``path`` (safetensors). Tied weights are stored once."""
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    seen: dict[int, str] = {}
    for name in list(state):
        ptr = state[name].data_ptr()
        if ptr in seen and state[name].numel():
            del state[name]  # tied to seen[ptr]; restored by load_state_dict(strict=False)
        else:
            seen[ptr] = name
    _atomic(Path(path), lambda p: save_file(state, str(p), metadata={"format": "pt"}))


def load_model(model: torch.nn.Module, path: str | Path) -> None:
    """Load parameters written by :func:`save_model`; missing keys must be tied weights."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no model checkpoint here")
    missing, unexpected = model.load_state_dict(load_file(str(path)), strict=False)
    if unexpected:
        raise KeyError(f"{path}: unexpected parameters {unexpected}")
    # a tied parameter is listed under its first name only; its other names may be missing
    unique = {n for n, _ in model.named_parameters(remove_duplicate=True)}
    really_missing = [k for k in missing if k in unique]
    if really_missing:
        raise KeyError(f"{path}: missing parameters {really_missing}")


def save_trainer(path: Path, *, optimizer, scheduler, step: int, epoch: int, extra: dict) -> None:
    """Save optimizer, scheduler, counters and RNG state under ``path`` (a directory)."""
    opt = optimizer.state_dict()
    tensors, slots = {}, {}
    for pid, slot in opt["state"].items():
        slots[str(pid)] = {}
        for key, value in slot.items():
            if isinstance(value, torch.Tensor):
                tensors[f"{pid}.{key}"] = value.contiguous()
            else:
                slots[str(pid)][key] = value
    meta = {
        "step": step,
        "epoch": epoch,
        "param_groups": opt["param_groups"],
        "slots": slots,
        "scheduler": scheduler.state_dict() if scheduler is not None else None,
        "torch_rng": torch.get_rng_state().tolist(),
        "extra": extra,
    }
    _atomic(path / "trainer.safetensors", lambda p: save_file(tensors, str(p)))
    _atomic(path / "trainer.json", lambda p: p.write_text(json.dumps(meta), encoding="utf-8"))


def load_trainer(path: Path, *, optimizer, scheduler) -> dict:
    """Restore what :func:`save_trainer` wrote; returns ``{"step", "epoch", "extra"}``."""
    meta = json.loads((path / "trainer.json").read_text(encoding="utf-8"))
    tensors = load_file(str(path / "trainer.safetensors"))
    state: dict = {int(pid): dict(slot) for pid, slot in meta["slots"].items()}
    for name, value in tensors.items():
        pid, key = name.split(".", 1)
        state.setdefault(int(pid), {})[key] = value
    optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    if scheduler is not None and meta["scheduler"] is not None:
        scheduler.load_state_dict(meta["scheduler"])
    torch.set_rng_state(torch.tensor(meta["torch_rng"], dtype=torch.uint8))
    return {"step": meta["step"], "epoch": meta["epoch"], "extra": meta["extra"]}


def average_checkpoints(paths: list[Path]) -> dict[str, torch.Tensor]:
    """The element-wise mean of several model checkpoints (Vaswani et al. 2017 §6.1)."""
    if not paths:
        raise ValueError("no checkpoints to average")
    total = {k: v.double() for k, v in load_file(str(paths[0])).items()}
    for path in paths[1:]:
        for k, v in load_file(str(path)).items():
            total[k] += v.double()
    first = load_file(str(paths[0]))
    return {k: (v / len(paths)).to(first[k].dtype) for k, v in total.items()}
