"""Whether ``attnkit train`` of an anomaly-detection config starts a run in its directory,
continues one there, or is refused (:func:`start_or_resume`).

- Empty, or holding no weights (a first run that failed before any series had any): the run
  starts afresh there.
- A finished run (``threshold.json``): refused unless ``--resume``.
- An unfinished run (``config.yaml`` and a series' weights, no ``threshold.json``: a first run
  that failed or was killed): the same config continues it, as ``--resume`` would (finished
  series are loaded, an interrupted one continues from its checkpoint; the result is that of an
  uninterrupted run, so nothing is lost by not starting again). Another config is refused with
  what to do; nothing is deleted, since the series' weights are what ``--resume`` uses.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import yaml

from attnkit.apps.anomaly.config import AnomalyConfig
from attnkit.config import load_yaml, to_dict
from attnkit.engine.checkpoint import write_text
from attnkit.engine.trainer import Resume

__all__ = ["start_or_resume"]
log = logging.getLogger(__name__)


def start_or_resume(cfg: AnomalyConfig, out: Path, resume: Resume) -> bool:
    """Check that ``out`` can take the run (see the module docstring); save its config when
    starting. Returns whether the run continues one already there."""
    saved = out / "config.yaml"
    if resume == "auto":
        resume = saved.is_file()
    if resume:
        if not saved.is_file():
            raise FileNotFoundError(f"{saved}: no anomaly-detection run to resume here")
        if not _same_config(cfg, saved):
            raise ValueError(
                f"the config differs from {saved}, the run's own; resume with that "
                "one or train into another directory"
            )
        return True
    weights = any(out.rglob("*.safetensors"))
    if saved.is_file() and weights and not (out / "threshold.json").exists():
        return _continue_unfinished(cfg, out)
    if weights or (out / "threshold.json").exists():
        raise FileExistsError(
            f"{out} already holds an anomaly-detection run; pass --resume to "
            "continue it or choose another run directory"
        )
    shutil.rmtree(out / "series", ignore_errors=True)  # a failed start's, holding no weights
    write_text(saved, yaml.safe_dump(to_dict(cfg), sort_keys=False))
    return False


def _same_config(cfg: AnomalyConfig, saved: Path) -> bool:
    return to_dict(load_yaml(AnomalyConfig, saved)) == to_dict(cfg)


def _continue_unfinished(cfg: AnomalyConfig, out: Path) -> bool:
    """An unfinished run in ``out`` continued with the same config, or refused with another."""
    saved = out / "config.yaml"
    done = sum(1 for _ in (out / "series").glob("*/detector.json"))
    if not _same_config(cfg, saved):
        raise FileExistsError(
            f"{out} holds an unfinished anomaly-detection run ({done} series fitted) with "
            f"another config; continue it with `attnkit train {saved} -o {out} --resume`, "
            "or train this config into another directory"
        )
    log.info("%s: continuing its unfinished run (%d series fitted, the same config)", out, done)
    return True
