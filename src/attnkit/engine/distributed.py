"""Data-parallel training across processes: the process group, DDP, and rank-0-only duties.

``torchrun`` (or any launcher that sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
``MASTER_ADDR`` and ``MASTER_PORT``) starts one process per device; :func:`setup` joins them
into a process group with NCCL when CUDA is available and gloo otherwise, and
:meth:`Dist.wrap` puts the model in :class:`~torch.nn.parallel.DistributedDataParallel`, which
averages the gradients of all ranks after every backward pass (Li et al. 2020, "PyTorch
Distributed: Experiences on Accelerating Data Parallel Training", VLDB).

Without those variables (a plain ``attnkit train``) :func:`setup` returns a one-process
:class:`Dist` on the device asked for (:mod:`attnkit.devices`) whose collectives are no-ops,
so the training loop has a single code path.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

log = logging.getLogger(__name__)


@dataclass
class Dist:
    """This process's place in the job: ``rank`` of ``world`` processes, on ``device``."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0
    device: torch.device = torch.device("cpu")
    backend: str | None = None  # None: no process group (one process)

    @property
    def is_main(self) -> bool:
        """Rank 0: the one process that logs, validates and writes checkpoints."""
        return self.rank == 0

    @property
    def active(self) -> bool:
        return self.backend is not None

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        """``model`` in DDP (which broadcasts rank 0's parameters to all ranks), or as is."""
        if not self.active:
            return model
        ids = [self.device.index] if self.device.type == "cuda" else None
        return torch.nn.parallel.DistributedDataParallel(model, device_ids=ids)

    def no_sync(self, model: torch.nn.Module, skip: bool):
        """DDP's ``no_sync`` while accumulating micro-batches (``skip``): no all-reduce yet."""
        if skip and self.active:
            return model.no_sync()
        return contextlib.nullcontext()

    def sum(self, values: list[float]) -> list[float]:
        """The element-wise sum of ``values`` over all ranks (float64)."""
        if not self.active:
            return list(values)
        t = torch.tensor(values, dtype=torch.float64, device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        return t.cpu().tolist()

    def barrier(self) -> None:
        if self.active:
            dist.barrier()

    def broadcast(self, obj):
        """Rank 0's ``obj`` on every rank (pickled in memory only, never on disk)."""
        if not self.active:
            return obj
        box = [obj]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def gather(self, obj) -> list:
        """Every rank's ``obj``, in rank order, on every rank."""
        if not self.active:
            return [obj]
        out: list = [None] * self.world
        dist.all_gather_object(out, obj)
        return out

    def close(self) -> None:
        if self.active and dist.is_initialized():
            dist.destroy_process_group()


class OtherRankFailed(RuntimeError):
    """Raised on ranks 1.. when rank 0 failed (rank 0 raises the error itself)."""


def threads_per_process(configured: int) -> int:
    """``OMP_NUM_THREADS`` when set (``torchrun`` sets 1 per process), else ``configured``."""
    env = os.environ.get("OMP_NUM_THREADS", "")
    return int(env) if env.isdigit() and int(env) > 0 else configured


def launched() -> bool:
    """Whether a launcher such as ``torchrun`` started this process as one of several."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def restart_count() -> int:
    """How many times ``torchrun --max-restarts`` has restarted this job (0 on the first run)."""
    return int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))


def setup(device: torch.device | None = None, timeout_minutes: float = 30.0) -> Dist:
    """Join the process group the launcher describes, or a one-process :class:`Dist` on
    ``device`` (default the CPU).

    Under a launcher the backend is NCCL when ``device`` is a CUDA GPU (each process takes the
    GPU of its local rank, as ``torchrun --nproc_per_node=N`` expects) and gloo on the CPU;
    ``ATTNKIT_DIST_BACKEND`` overrides the choice. ``timeout_minutes`` bounds how long ranks
    wait at a barrier while rank 0 validates and writes a checkpoint.
    """
    device = torch.device("cpu") if device is None else device
    if not launched():  # one process (torchrun --nproc_per_node=1: its local rank's GPU)
        if device.type == "cuda":
            if "LOCAL_RANK" in os.environ:
                device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
            torch.cuda.set_device(device)
        return Dist(device=device)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    cuda = device.type == "cuda"
    backend = os.environ.get("ATTNKIT_DIST_BACKEND") or ("nccl" if cuda else "gloo")
    if backend == "nccl" and not torch.cuda.is_available():
        raise ValueError("ATTNKIT_DIST_BACKEND=nccl needs CUDA, which is not available")
    device = torch.device("cuda", local_rank) if backend == "nccl" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group(
            backend,
            rank=rank,
            world_size=world,
            timeout=datetime.timedelta(minutes=timeout_minutes),
        )
    d = Dist(rank, world, local_rank, device, backend)
    quiet_other_ranks(d)
    log.info("%d processes, backend %s, rank 0 on %s", world, backend, device)
    return d


def quiet_other_ranks(d: Dist) -> None:
    """Only rank 0 logs: other ranks keep errors only (their own failures still show)."""
    if not d.is_main:
        logging.getLogger().setLevel(logging.ERROR)
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.FileHandler):  # train.log belongs to rank 0
                logging.getLogger().removeHandler(handler)
                handler.close()
