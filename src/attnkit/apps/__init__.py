"""The applications, one package each, and the registry that finds a config's or a run's.

A config file's top-level ``task:`` key picks the application (``translation`` when absent);
a run directory remembers it in its ``config.yaml``. Each application's ``task`` module,
imported only when used, provides::

    load_config(config: Path, overrides=()) -> its typed config dataclass (errors name file,
        line and field; overrides are ``--set section.key=value`` strings)
    train_from_config(config, run_dir, *, resume, progress, overrides=()) -> str
    evaluate_run_dir(run_dir, *, split, data_dir) -> str

and, where they apply, ``predict_run``, ``report_run`` and ``serve_run`` (see
:data:`RUN_COMMANDS`). The command line (:mod:`attnkit.cli.runs`) dispatches on the task; a
command a task lacks is refused in one line that names the task and what it supports.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from attnkit.config import _Where, read_yaml
from attnkit.engine.rundir import missing_config

TASKS: dict[str, str] = {
    "translation": "attnkit.apps.translation.task",
    "text-classification": "attnkit.apps.classification.task",
    "image-classification": "attnkit.apps.vision.task",
    "anomaly-detection": "attnkit.apps.anomaly.task",
    "captioning": "attnkit.apps.captioning.task",
    "segmentation": "attnkit.apps.segmentation.task",
    "stocks": "attnkit.apps.stocks.task",
    "im2latex": "attnkit.apps.im2latex.task",
}


def task_of(config: str | Path) -> str:
    """The ``task:`` named by a YAML config (``translation`` when absent).

    Raises :class:`ConfigError` naming the file and line for an unknown task, and
    ``FileNotFoundError`` for a missing file.
    """
    path = Path(config)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such config file")
    data, text = read_yaml(path)
    if "task" not in data:
        return "translation"
    task = data["task"]
    if not isinstance(task, str) or task not in TASKS:
        raise _Where(str(path), text).error(
            ("task",), f"unknown task {task!r}; choose one of {', '.join(TASKS)}"
        )
    return task


def task_module(task: str) -> ModuleType:
    """The module implementing ``task`` (see :data:`TASKS`)."""
    if not isinstance(task, str) or task not in TASKS:
        raise ValueError(f"unknown task {task!r}; choose one of {', '.join(TASKS)}")
    return importlib.import_module(TASKS[task])


# what `attnkit COMMAND RUN_DIR` calls in the run's task module, when the module has it
RUN_COMMANDS: dict[str, str] = {
    "evaluate": "evaluate_run_dir",
    "predict": "predict_run",
    "report": "report_run",
    "serve": "serve_run",
}


def run_task(run_dir: str | Path) -> str:
    """The task of a trained run directory (its ``config.yaml`` says)."""
    root = Path(run_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such run directory")
    if not (root / "config.yaml").is_file():
        raise FileNotFoundError(missing_config(root))
    return task_of(root / "config.yaml")


def supported(task: str) -> list[str]:
    """The run commands ``task`` supports, ``train`` first."""
    module = task_module(task)
    return ["train", *(c for c, f in RUN_COMMANDS.items() if hasattr(module, f))]


def run_command(run_dir: str | Path, command: str):
    """The function behind ``attnkit COMMAND RUN_DIR`` for the run's task, or a one-line
    refusal naming the run's task and what it supports."""
    task = run_task(run_dir)
    function = getattr(task_module(task), RUN_COMMANDS[command], None)
    if function is None:
        raise ValueError(
            f"{run_dir} is a {task} run; `attnkit {command}` does not apply to it "
            f"({task} supports: {', '.join(supported(task))})"
        )
    return function


def load_run(path: str | Path, checkpoint: str = "best"):
    """The trained run at ``path`` as its task's Python object, with that task's methods
    (translation: ``run.translate(texts, beam=5, attention=True)``; every task: ``predict``).
    The task module's ``open_run`` builds it."""
    task = run_task(path)
    module = task_module(task)
    if not hasattr(module, "open_run"):
        raise ValueError(f"{path} is a {task} run, which cannot be opened from Python yet")
    return module.open_run(path, checkpoint=checkpoint)
