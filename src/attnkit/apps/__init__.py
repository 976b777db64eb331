"""One ``attnkit train`` and one ``attnkit evaluate`` for every task.

A config file's top-level ``task:`` key picks the task (``translation`` when absent); a run
directory remembers it in its ``config.yaml``. Each task lives in its own module, imported only
when used, which provides three functions::

    load_config(config: Path) -> a typed config dataclass (errors name file, line and key)
    train_from_config(config: Path, run_dir: Path | None, *, resume: bool, progress: bool) -> str
    evaluate_run_dir(run_dir: Path, *, split: str, data_dir: str | None) -> str

Both return the text the command prints. Translation keeps its richer commands in
:mod:`attnkit.cli.translation`.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import yaml

from attnkit.config import ConfigError, _Where

TASKS: dict[str, str] = {
    "translation": "attnkit.apps.translation.task",
    "text-classification": "attnkit.apps.classification.task",
    "image-classification": "attnkit.apps.vision.task",
    "anomaly-detection": "attnkit.apps.anomaly.task",
    "captioning": "attnkit.apps.captioning.task",
}


def task_of(config: str | Path) -> str:
    """The ``task:`` named by a YAML config (``translation`` when absent).

    Raises :class:`ConfigError` naming the file and line for an unknown task, and
    ``FileNotFoundError`` for a missing file.
    """
    path = Path(config)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such config file")
    text = path.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    if not isinstance(data, dict) or "task" not in data:
        return "translation"
    task = data["task"]
    if task not in TASKS:
        raise _Where(str(path), text).error(
            ("task",), f"unknown task {task!r}; choose one of {', '.join(TASKS)}"
        )
    return task


def task_module(task: str) -> ModuleType:
    """The module implementing ``task`` (see :data:`TASKS`)."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; choose one of {', '.join(TASKS)}")
    return importlib.import_module(TASKS[task])
