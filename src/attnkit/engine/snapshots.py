"""Complete training checkpoints that survive SIGKILL, power cuts and full disks.

A checkpoint is a directory ``checkpoints/step-N`` (model, optimizer, scheduler, RNG states,
data position; see :mod:`.checkpoint`) and ``checkpoints/last`` is a symlink to the newest one.
Writing one:

1. every file goes into a fresh ``checkpoints/.tmp-step-N-PID`` directory, each flushed and
   fsynced, ``trainer.json`` (with the size and SHA-256 of the others) last;
2. the directory is renamed to ``step-N`` and ``checkpoints/`` fsynced (when ``step-N``
   exists, written before by a run since resumed, it is first set aside as ``.old-step-N-PID``
   and deleted only once the new one is in place);
3. a new symlink replaces ``last`` with one ``rename`` (atomic on POSIX), fsynced again;
4. only then are older ``step-*`` directories beyond ``keep`` removed.

A process killed at any instant leaves ``last`` pointing at a complete checkpoint (the old or
the new one) plus, at worst, a ``.tmp-*`` directory that the next run deletes (or, writing a
step again, an ``.old-step-N-PID`` directory that the next run puts back). A write that
fails (a full disk) removes its temporary directory and reports the error; the previous
checkpoint is untouched. :func:`latest` finds the newest checkpoint that verifies, skipping a
damaged one with a warning.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import torch

from attnkit.engine.checkpoint import (
    CheckpointError,
    fsync_dir,
    read_meta,
    save_model,
    save_trainer,
    verify,
)
from attnkit.engine.distributed import restart_count
from attnkit.engine.rundir import RunDir

log = logging.getLogger(__name__)


def _step_of(path: Path) -> int:
    return int(path.name.split("-", 1)[1])


def step_dirs(run: RunDir) -> list[Path]:
    """The ``step-N`` checkpoint directories, oldest first."""
    if not run.checkpoints.is_dir():
        return []
    found = [p for p in run.checkpoints.glob("step-*") if p.is_dir() and p.name[5:].isdigit()]
    return sorted(found, key=_step_of)


def clean_temporary(run: RunDir) -> None:
    """Delete what a killed writer left: ``.tmp-*`` directories and ``.*.tmp`` files; an
    ``.old-step-N-PID`` directory goes back to ``step-N`` when the writer was killed before
    the new ``step-N`` was in place, and is deleted otherwise."""
    if not run.checkpoints.is_dir():
        return
    for path in run.checkpoints.glob(".tmp-*"):
        shutil.rmtree(path, ignore_errors=True)
    for path in run.checkpoints.glob(".old-step-*"):
        final = run.checkpoints / path.name[len(".old-") :].rsplit("-", 1)[0]
        if final.exists():
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.replace(path, final)
            fsync_dir(run.checkpoints)
    for path in [*run.checkpoints.glob(".*.tmp"), *run.root.glob(".*.tmp")]:
        path.unlink(missing_ok=True)


def _adopt_plain_last(run: RunDir) -> None:
    """An older run's ``checkpoints/last`` directory becomes ``step-N`` plus the symlink."""
    last = run.last
    if last.is_dir() and not last.is_symlink():
        target = run.step_checkpoint(int(read_meta(last)["step"]))
        if target.exists():
            shutil.rmtree(last)
        else:
            os.replace(last, target)
        _point_last(run, target)


def _point_last(run: RunDir, target: Path) -> None:
    link = run.checkpoints / f".last-{os.getpid()}.tmp"
    link.unlink(missing_ok=True)
    link.symlink_to(target.name)
    os.replace(link, run.last)
    fsync_dir(run.checkpoints)


def write(
    run: RunDir,
    *,
    model: torch.nn.Module,
    optimizer,
    scheduler,
    step: int,
    epoch: int,
    extra: dict,
    rng: list,
    keep: int = 2,
) -> Path:
    """Write the checkpoint after update ``step`` as described above; returns its directory.

    Raises :class:`OSError` naming the checkpoint and the previous one (still intact) when the
    write fails.
    """
    if not run.checkpoints.is_dir():
        run.checkpoints.mkdir(parents=True)
        fsync_dir(run.root)  # the new checkpoints/ entry itself survives a power loss
    _adopt_plain_last(run)
    final = run.step_checkpoint(step)
    tmp = run.checkpoints / f".tmp-{final.name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    previous = run.last.resolve() if run.last.exists() else None
    try:
        tmp.mkdir()
        save_model(model, tmp / "model.safetensors")
        save_trainer(
            tmp,
            optimizer=optimizer,
            scheduler=scheduler,
            step=step,
            epoch=epoch,
            extra=extra,
            rng=rng,
        )
        fsync_dir(tmp)
        aside = _publish(run, tmp, final)
    except OSError as err:
        shutil.rmtree(tmp, ignore_errors=True)
        kept = f"the previous checkpoint {previous} is intact" if previous else "none before it"
        reason = err.strerror or str(err)
        raise OSError(err.errno, f"writing checkpoint {final} failed ({reason}); {kept}") from err
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)
    for old in step_dirs(run)[: -max(keep, 1)]:
        if old != final:
            shutil.rmtree(old, ignore_errors=True)
    return final


def _publish(run: RunDir, tmp: Path, final: Path) -> Path | None:
    """Rename the complete ``tmp`` to ``final``, fsync, swap ``last``; returns where an older
    ``final`` (the same step written again, by a resumed run) was set aside, or None.

    The older one is renamed to ``.old-step-N-PID``, not deleted, until the new one is in
    place: a failed rename puts it back, and after a kill :func:`clean_temporary` does.
    """
    aside = None
    if final.exists():
        aside = run.checkpoints / f".old-{final.name}-{os.getpid()}"
        shutil.rmtree(aside, ignore_errors=True)
        os.replace(final, aside)
    try:
        os.replace(tmp, final)
    except OSError:
        if aside is not None:
            os.replace(aside, final)
        raise
    fsync_dir(run.checkpoints)
    _point_last(run, final)
    return aside


def latest(run: RunDir) -> Path | None:
    """The newest checkpoint that verifies (``last`` first, then ``step-*`` newest first).

    A damaged one is skipped with a warning naming the file and the damage; when every one is
    damaged, the newest one's :class:`CheckpointError` is raised.
    """
    candidates: list[Path] = []
    if run.last.exists():  # follows the symlink; False when it dangles
        candidates.append(run.last.resolve() if run.last.is_symlink() else run.last)
    candidates += [p for p in reversed(step_dirs(run)) if p not in candidates]
    first_error: Exception | None = None
    for path in candidates:
        try:
            verify(path)
            return path
        except (CheckpointError, FileNotFoundError) as err:
            log.warning("skipping checkpoint %s: %s", path, err)
            first_error = first_error or err
    if first_error is not None:
        raise CheckpointError(f"no usable checkpoint in {run.checkpoints}: {first_error}")
    return None


def space_needed(model: torch.nn.Module, *, keep: int, average_last: int) -> int:
    """Bytes the checkpoints of ``model`` take at most: ``keep`` complete ones plus the one
    being written (each the weights and two Adam moments), the best model, the per-epoch
    weights kept for averaging and their average."""
    weights = sum(t.numel() * t.element_size() for t in model.state_dict().values())
    return 3 * weights * (keep + 1) + weights * (2 + max(average_last, 1))


def check_writable(root: Path, need: int = 0) -> None:
    """Fail before training when ``root`` cannot be written or holds less than ``need`` bytes.

    Raises :class:`OSError` naming the directory and the shortfall.
    """
    root = Path(root)
    probe = root / "checkpoints" / f".write-test-{os.getpid()}.tmp"
    try:
        probe.parent.mkdir(parents=True, exist_ok=True)
        with open(probe, "wb") as f:
            f.write(b"attnkit")
            f.flush()
            os.fsync(f.fileno())
        probe.unlink()
    except OSError as err:
        raise OSError(
            err.errno, f"{root}: run directory is not writable ({err.strerror or err})"
        ) from err
    free = shutil.disk_usage(root).free
    if free < need:
        raise OSError(
            f"{root}: only {free / 2**20:.1f} MiB free on its disk, but the checkpoints need "
            f"about {need / 2**20:.1f} MiB; free some space or choose another --run-dir"
        )


def find(run: RunDir, resume) -> str | None:
    """The checkpoint to start from, or None to start afresh, as ``resume`` asks.

    ``resume``: False (start; refuse a run directory that holds a model or a checkpoint), True
    (the newest checkpoint, which must exist) or ``"auto"`` (the newest if there is one). A job
    restarted by ``torchrun --max-restarts`` behaves as ``"auto"``.
    """
    clean_temporary(run)
    if resume == "auto" or restart_count() > 0:
        found = latest(run)
        if found is None and run.model.exists():
            raise FileExistsError(f"{run.root} holds a trained model but no checkpoint")
        return None if found is None else str(found)
    if resume:
        found = latest(run)
        if found is None:
            raise FileNotFoundError(f"{run.last}: no saved training state to resume from")
        return str(found)
    if run.model.exists() or step_dirs(run) or run.last.exists():
        raise FileExistsError(
            f"{run.root} already holds a trained model; pass --resume to continue it "
            "or choose another run directory"
        )
    return None
