"""The applications, one package each, registered here in one list.

Each package's ``app`` module declares its :class:`~attnkit.application.App` as ``APP``
(name, config, Task, the commands it answers, its own command group). Adding an application
is one package and one line of :data:`REGISTRY`; nothing else names it. A config file's
``task:`` key picks the application (``translation`` when absent); a run directory remembers
it in its ``config.yaml``. The ``app`` modules import no torch (their methods do, when
called), so listing the applications is cheap.
"""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path

from attnkit.application import App, WrongRunKind
from attnkit.config import _Where, read_yaml

# name (a config's task:) -> the module declaring its App as APP; the order of `attnkit --help`
TASKS: dict[str, str] = {
    "translation": "attnkit.apps.translation.app",
    "text-classification": "attnkit.apps.classification.app",
    "image-classification": "attnkit.apps.vision.app",
    "anomaly-detection": "attnkit.apps.anomaly.app",
    "captioning": "attnkit.apps.captioning.app",
    "segmentation": "attnkit.apps.segmentation.app",
    "stocks": "attnkit.apps.stocks.app",
    "im2latex": "attnkit.apps.im2latex.app",
    "language-model": "attnkit.apps.gpt.app",
    "speech": "attnkit.apps.speech.app",
    "recommendation": "attnkit.apps.recommendation.app",
    "summarization": "attnkit.apps.summarization.app",
}
REGISTRY = tuple(TASKS.values())
DEFAULT_TASK = "translation"  # a config without task:


def app_named(name: str) -> App:
    """The registered application called ``name`` (a config's ``task:``)."""
    if not isinstance(name, str) or name not in TASKS:
        raise ValueError(f"unknown task {name!r}; choose one of {', '.join(TASKS)}")
    return _load(name)


@cache
def _load(name: str) -> App:
    app = importlib.import_module(TASKS[name]).APP
    if app.name != name:
        raise RuntimeError(f"{TASKS[name]} declares {app.name!r}, registered as {name!r}")
    return app


def all_apps() -> list[App]:
    """Every registered application, in registry order."""
    return [_load(name) for name in TASKS]


def task_of(config: str | Path) -> str:
    """The ``task:`` named by a YAML config (``translation`` when absent).

    Raises :class:`ConfigError` naming the file and line for an unknown task, and
    ``FileNotFoundError`` for a missing file.
    """
    path = Path(config)
    if path.is_dir():
        raise IsADirectoryError(f"{path}: a folder, not a config file (give CONFIG.yaml)")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such config file")
    data, text = read_yaml(path)
    if "task" not in data:
        return DEFAULT_TASK
    task = data["task"]
    if not isinstance(task, str) or task not in TASKS:
        raise _Where(str(path), text).error(
            ("task",), f"unknown task {task!r}; choose one of {', '.join(TASKS)}"
        )
    return task


def app_of_config(config: str | Path) -> App:
    """The application a config file trains."""
    return app_named(task_of(config))


def run_task(run_dir: str | Path) -> str:
    """The kind of a trained run directory (its ``config.yaml`` says), read before anything
    else of the config so that a run of another kind is named as such."""
    from attnkit.engine.rundir import RunDir

    return task_of(RunDir(run_dir).existing_config())


def app_of_run(run_dir: str | Path) -> App:
    """The application of a trained run directory."""
    return app_named(run_task(run_dir))


def require_kind(run_dir: str | Path, name: str) -> None:
    """Raise :class:`WrongRunKind` unless ``run_dir`` is a run of application ``name``."""
    found = run_task(run_dir)
    if found != name:
        raise WrongRunKind(run_dir, found, name)


def load_run(path: str | Path, checkpoint: str = "best", device: str = "auto"):
    """The trained run at ``path`` as its application's Python object, with that
    application's methods (translation: ``run.translate(texts, beam=5, attention=True)``;
    every application: ``predict``), its model on ``device`` (:mod:`attnkit.devices`)."""
    return app_of_run(path).open(Path(path), checkpoint, device)
