"""Where training is in the data: the epoch, the next batch, and the epoch's running totals.

Saved with every checkpoint (as JSON, :meth:`DataPosition.as_dict`) and read back on resume
(:meth:`DataPosition.from_dict`), so a run killed mid-epoch continues at the batch it would
have trained next, with the epoch's loss and statistics summed as if it had not stopped.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields


@dataclass
class DataPosition:
    """The data position of one training run (identical on every rank)."""

    epoch: int = 1  # the epoch being trained, from 1
    batch: int = 0  # batches of this epoch already trained (all ranks together)
    steps: int = 0  # updates made in this epoch
    loss_sum: float = 0.0  # summed training loss of this epoch
    units: float = 0.0  # what the loss is averaged over (tokens, examples) in this epoch
    seconds: float = 0.0  # training time of this epoch so far
    stats: dict[str, float] = field(default_factory=dict)  # the tasks' statistics, summed

    @classmethod
    def start_of(cls, epoch: int) -> DataPosition:
        """The start of ``epoch``, its running totals at zero."""
        return cls(epoch=epoch)

    def advance(self, batches: int, loss_sum: float, units: float, stats: dict) -> None:
        """Record one update over ``batches`` batches."""
        self.steps += 1
        self.batch += batches
        self.loss_sum += loss_sum
        self.units += units
        for key, value in stats.items():
            self.stats[key] = self.stats.get(key, 0.0) + value

    @property
    def mean_loss(self) -> float:
        return self.loss_sum / max(self.units, 1e-12)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, saved: dict, epoch: int) -> DataPosition:
        """A saved position (``epoch``: where to start when it names none); checkpoints
        written before the task protocol counted ``tokens`` for ``units``."""
        saved = dict(saved)
        if "tokens" in saved:
            saved["units"] = float(saved.pop("tokens"))
        known = {f.name for f in fields(cls)}
        unknown = set(saved) - known
        if unknown:
            raise ValueError(f"checkpoint data position: unknown fields {sorted(unknown)}")
        return cls(**{"epoch": epoch, **saved})
