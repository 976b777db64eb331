"""The checkpoint writer's order of operations, and a fault injected at each of its steps.

Every file-system call :func:`attnkit.engine.snapshots.write` makes inside the run directory
(writes, ``open``, ``fsync``, ``close``, ``rename``/``replace``, ``symlink``, ``unlink``,
``mkdir``, ``rmdir``) is recorded by wrapping the ``os`` functions, ``io.open`` and the
safetensors writer. The order must be: every file written under a temporary name, fsynced, then
renamed into place; the directory fsynced; ``checkpoints/last`` swapped by renaming a fresh
symlink over it (never unlinked and re-created) and ``checkpoints/`` fsynced again.

Then the same write is repeated with an :class:`OSError` raised at each recorded call in turn,
and with a simulated SIGKILL there (that call and every later one fail, so no clean-up runs):
afterwards the previous checkpoint still loads with the engine's own loaders, ``last`` leads to
a complete checkpoint (the previous one or the new one, never an older one), and the write can
be repeated. Both for a new step and for the same step written again (a resumed run).
"""

from __future__ import annotations

import builtins
import errno
import io
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch

from attnkit.engine import checkpoint, snapshots
from attnkit.engine.checkpoint import load_model, load_trainer, rng_state, verify
from attnkit.engine.rundir import RunDir
from fuzz_counts import record

FILES = ("model.safetensors", "trainer.safetensors", "trainer.json")
_REAL = {name: getattr(os, name) for name in ("open", "fsync", "close", "replace", "rename")}
_REAL.update({name: getattr(os, name) for name in ("symlink", "link", "unlink", "remove")})
_REAL.update({name: getattr(os, name) for name in ("rmdir", "mkdir")})
_REAL_IO_OPEN, _REAL_SAVE_FILE = io.open, checkpoint.save_file


class Killed(BaseException):  # noqa: N818 (a simulated SIGKILL, not an error to handle)
    """Raised at and after the simulated kill: no ``except OSError`` clean-up may run."""


@dataclass
class Recorder:
    """Records the calls inside ``root`` as ``(op, path, other)``; paths relative to ``base``
    (``checkpoints/``). ``fail_at``: the index of the call that raises; ``kill``: raise
    :class:`Killed` there and at every later call instead of one :class:`OSError`."""

    root: Path
    base: Path
    fail_at: int | None = None
    kill: bool = False
    events: list = field(default_factory=list)
    unclosed: list = field(default_factory=list)

    def where(self, path, dir_fd=None) -> str | None:
        if isinstance(path, int):  # a file descriptor
            path = os.readlink(f"/proc/self/fd/{path}")
        elif dir_fd is not None:
            path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), os.fsdecode(path))
        full = os.path.abspath(os.fsdecode(path)).removesuffix(" (deleted)")
        for root, base in ((self.root, self.base), (self.root.resolve(), self.base.resolve())):
            if full == str(base):
                return "."
            if full.startswith(str(base) + os.sep):
                return full[len(str(base)) + 1 :]
            if full.startswith(str(root) + os.sep):
                return full
        return None

    def step(self, op: str, path: str | None, other: str | None = None) -> None:
        """Record one call; raise the injected fault when it is this one's turn."""
        if path is None:
            return
        index = len(self.events)
        self.events.append((op, path, other))
        if self.kill and self.fail_at is not None and index >= self.fail_at:
            raise Killed(f"killed at call {index}: {op} {path}")
        if index == self.fail_at:
            raise OSError(errno.EIO, f"injected failure at call {index}: {op} {path}")


def _install(monkeypatch, rec: Recorder) -> None:
    """Wrap the ``os`` calls, ``io.open`` (``Path.write_text``) and safetensors' writer."""

    def open_(path, flags, mode=0o777, *, dir_fd=None):
        rec.step("open", rec.where(path, dir_fd))
        return _REAL["open"](path, flags, mode, dir_fd=dir_fd)

    def fsync(fd):
        rec.step("fsync", rec.where(fd))
        return _REAL["fsync"](fd)

    def close(fd):
        target = os.readlink(f"/proc/self/fd/{fd}") if os.path.exists(f"/proc/self/fd/{fd}") else ""
        try:
            rec.step("close", rec.where(fd) if target else None)
        except (OSError, Killed):
            rec.unclosed.append((fd, target))  # still open (as after EINTR); closed after
            raise
        return _REAL["close"](fd)

    def two_paths(op):
        def call(src, dst, *, src_dir_fd=None, dst_dir_fd=None):
            rec.step(op, rec.where(src, src_dir_fd), rec.where(dst, dst_dir_fd))
            return _REAL[op](src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

        return call

    def symlink(target, link, target_is_directory=False, *, dir_fd=None):
        rec.step("symlink", rec.where(link, dir_fd), os.fsdecode(target))
        return _REAL["symlink"](target, link, target_is_directory, dir_fd=dir_fd)

    def link(src, dst, **kwargs):
        rec.step("link", rec.where(dst), os.fsdecode(src))
        return _REAL["link"](src, dst, **kwargs)

    def one_path(op):
        def call(path, *args, dir_fd=None, **kwargs):
            rec.step(op, rec.where(path, dir_fd))
            return _REAL[op](path, *args, dir_fd=dir_fd, **kwargs)

        return call

    def io_open(file, mode="r", *args, **kwargs):
        if not isinstance(file, int) and set(mode) & set("wax+"):
            rec.step("write", rec.where(file))
        return _REAL_IO_OPEN(file, mode, *args, **kwargs)

    def save_file(tensors, filename, metadata=None):
        try:
            rec.step("write", rec.where(filename))
        except (OSError, Killed):
            with _REAL_IO_OPEN(filename, "wb") as half:  # a write cut short: a partial file
                half.write(b"\x08\x00\x00")
            raise
        return _REAL_SAVE_FILE(tensors, filename, metadata=metadata)

    for name, fn in (("open", open_), ("fsync", fsync), ("close", close), ("symlink", symlink)):
        monkeypatch.setattr(os, name, fn)
    for name in ("replace", "rename"):
        monkeypatch.setattr(os, name, two_paths(name))
    for name in ("unlink", "remove", "rmdir", "mkdir"):
        monkeypatch.setattr(os, name, one_path(name))
    monkeypatch.setattr(os, "link", link)
    monkeypatch.setattr(io, "open", io_open)
    monkeypatch.setattr(builtins, "open", io_open)
    monkeypatch.setattr(checkpoint, "save_file", save_file)


# -- a tiny model whose checkpoints are told apart by their weights ---------------------------


def _model(fill: float) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    model = torch.nn.Linear(3, 2)
    with torch.no_grad():
        model.weight.fill_(fill)
        model.bias.fill_(-fill)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.ones(1, 3)).sum().backward()  # Adam's moments: trainer.safetensors is not empty
    opt.step()
    return model, opt


def _write(run: RunDir, fill: float, step: int) -> Path:
    model, opt = _model(fill)
    kw = dict(scheduler=None, epoch=0, extra={"fill": fill}, rng=[rng_state()], keep=2)
    return snapshots.write(run, model=model, optimizer=opt, step=step, **kw)


def _fill_of(path: Path) -> float:
    """Load checkpoint ``path`` with the engine's loaders; the ``fill`` it was written with."""
    meta = verify(path)
    model, opt = _model(0.0)
    load_model(model, path / "model.safetensors")
    load_trainer(path, optimizer=opt, scheduler=None)
    fill = meta["extra"]["fill"]
    written = torch.full((2,), -fill - 0.01)  # Adam's first step moves the bias by lr = 0.01
    assert torch.allclose(model.bias.detach(), written, atol=1e-6), path
    return fill


SCENARIOS = {  # name: (checkpoints before, the one then written); (fill, step)
    "new step": ([(1.0, 1)], (2.0, 2)),
    "same step again": ([(1.0, 1), (2.0, 2)], (3.0, 2)),  # a resumed run writes step 2 again
}


def _prepare(root: Path, scenario: str) -> RunDir:
    run = RunDir(root)
    for fill, step in SCENARIOS[scenario][0]:
        _write(run, fill, step)
    return run


def _record(
    monkeypatch, root: Path, scenario: str, **faults
) -> tuple[Recorder, BaseException | None]:
    """Write the scenario's new checkpoint under a :class:`Recorder`; returns it and what the
    write raised (None when it returned)."""
    run = _prepare(root, scenario)
    rec = Recorder(run.root, run.checkpoints, **faults)
    fill, step = SCENARIOS[scenario][1]
    raised = None
    with monkeypatch.context() as patch:
        _install(patch, rec)
        try:
            _write(run, fill, step)
        except (OSError, Killed) as err:
            raised = err
    for fd, target in rec.unclosed:  # unless the writer's own clean-up closed it
        if os.path.exists(f"/proc/self/fd/{fd}") and os.readlink(f"/proc/self/fd/{fd}") == target:
            os.close(fd)
    return rec, raised


# -- the order of operations ------------------------------------------------------------------


def _index(events, op, path=None, other=None, start=0) -> int:
    """Index of the first event from ``start`` that matches; -1 when none does."""
    for i in range(start, len(events)):
        e_op, e_path, e_other = events[i]
        if e_op == op and path in (None, e_path) and other in (None, e_other):
            return i
    return -1


def _moves(events, path: str) -> list[int]:
    """Indices of the renames that move ``path`` or a directory above it."""
    return [
        i
        for i, (op, src, _) in enumerate(events)
        if op in ("replace", "rename") and (path == src or path.startswith(src + "/"))
    ]


def test_the_writer_writes_fsyncs_renames_fsyncs_then_swaps_last(tmp_path, monkeypatch):
    rec, raised = _record(monkeypatch, tmp_path / "run", "new step")
    assert raised is None
    ev, final, link_ops = rec.events, "step-00000002", ("unlink", "remove", "rmdir", "symlink")
    writes = [i for i, e in enumerate(ev) if e[0] == "write"]
    assert len(writes) >= len(FILES), ev
    for i in writes:  # a temporary name: never the final place, never the previous checkpoint
        path = ev[i][1]
        assert not path.startswith((final + "/", "step-00000001/")) and path != "last", ev[i]
    into = [j for j, e in enumerate(ev) if e[0] in ("replace", "rename") and e[2] == final]
    assert len(into) == 1, f"{final} must appear by one rename: {ev}"
    publish, tmp_dir = into[0], ev[into[0]][1]
    for i in writes:  # fsynced after its last write, before it (or its directory) is renamed
        path = ev[i][1]
        last_write = max(j for j in writes if ev[j][1] == path)
        moved = _moves(ev, path)
        assert moved, f"{path} is never renamed into place"
        synced = _index(ev, "fsync", path, start=last_write)
        assert -1 < synced < moved[0], f"{path} not fsynced between write and rename: {ev}"
        if ev[moved[0]][1] == path:  # renamed by itself: its directory fsynced after that
            parent = os.path.dirname(ev[moved[0]][2]) or "."
            assert _index(ev, "fsync", parent, start=moved[0]) > -1, f"{parent} not fsynced"
    dest = {}  # each written path: the file it becomes in the checkpoint
    for i in writes:
        moved = _moves(ev, ev[i][1])[0]
        own = ev[moved][1] == ev[i][1]
        dest[ev[i][1]] = os.path.basename(ev[moved][2] if own else ev[i][1])
    assert set(FILES) <= set(dest.values()), dest
    json_writes = [i for i in writes if dest[ev[i][1]] == "trainer.json"]
    assert json_writes[-1] == writes[-1], "trainer.json (with the others' checksums) not last"
    for path, name in dest.items():  # the others complete and fsynced before it is written
        if name != "trainer.json":
            assert -1 < _index(ev, "fsync", path) < json_writes[0], f"{name} before trainer.json"
    last_in_dir = max(i for i in range(publish) if ev[i][1].startswith(tmp_dir + "/"))
    assert -1 < _index(ev, "fsync", tmp_dir, start=last_in_dir) < publish, "tmp dir not fsynced"
    dir_synced = _index(ev, "fsync", ".", start=publish)
    assert dir_synced > -1, f"checkpoints/ not fsynced after the rename to {final}: {ev}"
    for op, path, _ in ev:  # `last` is never removed or re-created in place
        assert not (op in link_ops and path == "last"), f"{op} on checkpoints/last: {ev}"
        assert not (op == "link" and path == "last"), ev
    swaps = [i for i, e in enumerate(ev) if e[0] in ("replace", "rename") and e[2] == "last"]
    assert len(swaps) == 1, f"checkpoints/last must be swapped by one rename: {ev}"
    swap, new_link = swaps[0], ev[swaps[0]][1]
    made = _index(ev, "symlink", new_link)
    assert -1 < made < swap and new_link != "last", f"{new_link} is not a fresh symlink: {ev}"
    assert ev[made][2] in (final, str(rec.base / final)), f"last must lead to {final}: {ev[made]}"
    assert dir_synced < swap, "last swapped before the new checkpoint's rename was durable"
    assert _index(ev, "fsync", ".", start=swap) > -1, "checkpoints/ not fsynced after the swap"
    assert (rec.base / "last").resolve().name == final and _fill_of(rec.base / "last") == 2.0


def test_the_previous_checkpoint_is_never_touched(tmp_path, monkeypatch):
    rec, _ = _record(monkeypatch, tmp_path / "run", "new step")
    touched = [e for e in rec.events if e[0] != "open" and "step-00000001" in f"{e[1]} {e[2]}"]
    assert touched == []


# -- a fault at every step --------------------------------------------------------------------


def _check_after_fault(run: RunDir, scenario: str, what: str, kill: bool) -> list[str]:
    """What is wrong after a failed or killed write (an empty list when nothing is).

    After an :class:`OSError` ``last`` must lead to a complete checkpoint at once; after a kill,
    once the next run has started (:func:`snapshots.find` cleans up what the writer left)."""
    before, (new_fill, step) = SCENARIOS[scenario]
    allowed = {before[-1][0], new_fill}  # the previous checkpoint or the new one
    problems = []
    try:
        if not kill and (not run.last.is_symlink() or _fill_of(run.last.resolve()) not in allowed):
            problems.append(f"{what}: checkpoints/last does not lead to a complete checkpoint")
        found = snapshots.find(run, True)  # as `--resume` does: clean up, newest that verifies
        if found is None or _fill_of(Path(found)) not in allowed:
            problems.append(f"{what}: resuming finds {found}, not the previous or new one")
        if not run.last.is_symlink() or _fill_of(run.last.resolve()) not in allowed:
            problems.append(f"{what}: checkpoints/last does not lead to a complete checkpoint")
        for fill, old_step in before[:-1]:  # older checkpoints are untouched
            assert _fill_of(run.step_checkpoint(old_step)) == fill
        if _fill_of(run.step_checkpoint(before[-1][1])) not in allowed:
            problems.append(f"{what}: the previous checkpoint is gone")
        _write(run, new_fill, step)  # the write can be repeated, and then `last` is the new one
        assert _fill_of(run.last) == new_fill and run.last.resolve().name == f"step-{step:08d}"
        assert not list(run.checkpoints.glob(".*")), list(run.checkpoints.glob(".*"))
    except Exception as err:  # noqa: BLE001 (collect every step's problem, report them all)
        problems.append(f"{what}: {type(err).__name__}: {err}")
    return problems


@pytest.mark.parametrize("kill", [False, True], ids=["oserror", "sigkill"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_fault_at_any_step_keeps_the_previous_checkpoint(tmp_path, monkeypatch, scenario, kill):
    reference, _ = _record(monkeypatch, tmp_path / "reference", scenario)
    assert len(reference.events) > 10, reference.events
    problems = []
    for i, (op, path, other) in enumerate(reference.events):
        rec, raised = _record(monkeypatch, tmp_path / f"fault-{i}", scenario, fail_at=i, kill=kill)
        what = f"{'kill' if kill else 'OSError'} at call {i} ({op} {path} {other or ''})"
        if rec.events[i][:2] != (op, path):  # the same write, call for call
            problems.append(f"{what}: calls differ from the reference: {rec.events[i]}")
        if kill and not isinstance(raised, Killed):
            problems.append(f"{what}: the write went on after the kill ({raised!r})")
        if isinstance(raised, OSError) and "writing checkpoint" not in str(raised):
            problems.append(f"{what}: the error does not name the checkpoint: {raised}")
        problems += _check_after_fault(RunDir(tmp_path / f"fault-{i}"), scenario, what, kill)
        record(f"checkpoint: {scenario}", f"{'kill' if kill else 'OSError'} injected, kept")
    assert not problems, "\n".join(problems)


# -- one file outside a checkpoint (the best model, per-epoch weights, metrics) --------------


def _save(path: Path, fill: float, monkeypatch, **faults) -> tuple[Recorder, BaseException | None]:
    rec = Recorder(path.parent, path.parent, **faults)
    model, _ = _model(fill)
    raised = None
    with monkeypatch.context() as patch:
        _install(patch, rec)
        try:
            checkpoint.save_model(model, path)
        except (OSError, Killed) as err:
            raised = err
    return rec, raised


def _bias_of(path: Path) -> float:
    model, _ = _model(0.0)
    load_model(model, path)
    return round(-float(model.bias.detach()[0]) - 0.01, 4)


def test_a_single_file_is_written_aside_fsynced_and_renamed_over(tmp_path, monkeypatch):
    path = tmp_path / "model.safetensors"
    checkpoint.save_model(_model(1.0)[0], path)
    rec, raised = _save(path, 2.0, monkeypatch)
    ev = rec.events
    assert raised is None and _bias_of(path) == 2.0
    writes = [i for i, e in enumerate(ev) if e[0] == "write"]
    assert len(writes) == 1 and ev[writes[0]][1] != path.name, f"written in place: {ev}"
    tmp = ev[writes[0]][1]
    moved = _index(ev, "replace", tmp, path.name)
    assert -1 < _index(ev, "fsync", tmp, start=writes[0]) < moved, f"fsync, then rename: {ev}"
    assert _index(ev, "fsync", ".", start=moved) > moved, f"directory not fsynced: {ev}"
    problems = []
    for i, (op, name, _) in enumerate(ev):
        for kill in (False, True):
            checkpoint.save_model(_model(1.0)[0], path)
            _save(path, 2.0, monkeypatch, fail_at=i, kill=kill)
            if _bias_of(path) not in (1.0, 2.0):  # the old file or the new one, complete
                problems.append(f"{'kill' if kill else 'OSError'} at {op} {name}: damaged")
            if not kill and [p.name for p in tmp_path.iterdir()] != [path.name]:
                problems.append(f"OSError at {op} {name}: left {list(tmp_path.iterdir())}")
    assert not problems, "\n".join(problems)
