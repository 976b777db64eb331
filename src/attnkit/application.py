"""The application contract: each application is declared once, as an :class:`App`.

An application (translation, text classification, ...) is one package of the applications'
folder whose ``app`` module declares a subclass of :class:`App`, and whose name is one line of
their registry. The App says what the generic commands need::

    class ClassificationApp(App):
        name = "text-classification"          # the config's task: and the run's kind
        group = "classification"              # attnkit classification COMMAND ...
        title = "Text classification"
        runs = ("evaluate", "predict")        # the generic run commands it answers

        def load_config(self, path, overrides=()): ...   # typed, checked at load
        def task(self, cfg): ...                          # the engine Task that trains it
        def open(self, run_dir, checkpoint="best"): ...   # attnkit.load_run's object
        def evaluate(self, run_dir, options): ...         # -> Scores
        def predict(self, run_dir, inputs, options): ...  # -> Predictions

Training is generic (:func:`attnkit.engine.trainer.fit` on ``app.task(cfg)``), so no
application has a training function of its own. Every method returns a dataclass of
:mod:`attnkit.results`; the command line only formats them (``--json`` prints the same
dataclass). The generic commands never name an application: they dispatch on the run's kind,
which its ``config.yaml`` records. This module imports no torch, so ``attnkit --help`` stays
fast: an App's methods import what they need when called.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from attnkit.results import Predictions, Scores, Shown, Trained, Written

__all__ = ["App", "EvaluateOptions", "PredictOptions", "ServeOptions", "WrongRunKind"]


class WrongRunKind(ValueError):
    """A command was given a run of another application; the error boundary words it with
    the command's name (``runs/mycls is a text-classification run; attnkit translation
    translate needs a translation run``)."""

    def __init__(self, run: str | Path, found: str, needed: str) -> None:
        self.run, self.found, self.needed = str(run), found, needed
        super().__init__(f"{run} is {_a(found)} run; this command needs {_a(needed)} run")

    def for_command(self, command: str) -> str:
        found, needed = _a(self.found), _a(self.needed)
        return f"{self.run} is {found} run; attnkit {command} needs {needed} run"


def _a(name: str) -> str:
    """``a translation``, ``an im2latex``, ``an anomaly-detection``."""
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


@dataclass(frozen=True)
class EvaluateOptions:
    """What ``attnkit evaluate`` passes on. ``split`` and ``data_dir`` mean the same for every
    application; the others are taken only by applications that list them in
    :attr:`App.evaluate_options` (the CLI refuses them elsewhere, in one line)."""

    split: str = "test"
    data_dir: str | None = None
    beam: int | None = None  # beam size of a decoder (1 = greedy)
    checkpoint: str = "best"  # best, averaged or last
    bf16: bool | None = None  # bfloat16 autocast while decoding
    output: Path | None = None  # the outputs, one per line
    device: str = "auto"  # where the model runs (attnkit.devices)
    src: Path | None = None  # the user's own test inputs (instead of a split): a line each,
    ref: Path | None = None  # ... and their references, line by line; or a CSV of series alone


@dataclass(frozen=True)
class PredictOptions:
    """What ``attnkit predict`` passes on: ``output`` (the outputs written to a file) for
    every application, ``picture`` only where :attr:`App.predict_options` lists it."""

    output: Path | None = None
    picture: Path | None = None
    device: str = "auto"  # where the model runs (attnkit.devices)
    beam: int | None = None  # beam size of a decoder (1 = greedy), where predict_options has it
    # text generation (a language model): the text continued, and how tokens are drawn
    prompt: str | None = None
    max_new: int | None = None  # None: the application's default
    temperature: float | None = None  # 0: greedy
    top_k: int | None = None
    top_p: float | None = None
    seed: int | None = None


@dataclass(frozen=True)
class ServeOptions:
    """What ``attnkit serve`` passes on (loopback by default)."""

    host: str = "127.0.0.1"
    port: int = 8000
    max_chars: int = 500
    checkpoint: str = "best"
    open_browser: bool = False
    device: str = "auto"  # where the model runs (attnkit.devices)


class App:
    """One application. Subclasses set the class attributes and override the methods of the
    commands they list in :attr:`runs`; the base class refuses the others in one line."""

    name: ClassVar[str]  # the config's ``task:`` value, the run's kind
    # what it is made of, as "module:name" (imported when first used, so listing the
    # applications imports no torch): the config loader ``(path, overrides) -> config``, the
    # engine Task class ``(config) -> Task``, the run loader ``(run_dir[, checkpoint]) -> run``
    # (given the checkpoint only where :attr:`checkpoints` holds more than "best"), and the
    # ``typer.Typer`` of its own commands
    config_loader: ClassVar[str | None] = None
    task_class: ClassVar[str | None] = None
    run_loader: ClassVar[str | None] = None
    command_group: ClassVar[str | None] = None
    # the config field that ``attnkit train --device`` sets
    device_field: ClassVar[str] = "train.device"
    group: ClassVar[str]  # its command group: ``attnkit GROUP ...``
    title: ClassVar[str]  # its name for people ("Text classification")
    runs: ClassVar[tuple[str, ...]] = ("evaluate", "predict")  # beyond train, always there
    # of beam, checkpoint, bf16, output, src, ref; "src" without "ref": --src is a whole test
    # file (a CSV of series, its own targets inside), and --ref is refused
    evaluate_options: ClassVar[frozenset[str]] = frozenset()
    predict_options: ClassVar[frozenset[str]] = frozenset()  # of picture
    csv_input: ClassVar[bool] = False  # predict reads a CSV (--csv is the same as INPUTS)
    checkpoints: ClassVar[tuple[str, ...]] = ("best",)  # what open() may load
    moved: ClassVar[tuple[str, ...]] = ()  # its commands' former top-level names (aliases)
    serve_input: ClassVar[str | None] = None  # "text", "image", "csv" or "audio": what serve takes
    test_split: ClassVar[str] = "test"  # what `attnkit evaluate` scores without --split
    serves_demo: ClassVar[bool] = False  # the lecture's demo: `attnkit demo`, `serve --demo`

    # -- what every application provides ----------------------------------------------------
    def load_config(self, path: str | Path, overrides: Sequence[str] = ()) -> Any:
        """The typed config of ``path`` with ``--set`` overrides; errors name file, line and
        field."""
        return self._part("config_loader")(path, overrides)

    def task(self, cfg: Any) -> Any:
        """The engine :class:`~attnkit.engine.task.Task` that trains ``cfg``."""
        return self._part("task_class")(cfg)

    def train(
        self, cfg: Any, run_dir: Path, *, resume: Any = False, progress: bool = False
    ) -> Trained:
        """Train ``cfg`` into ``run_dir`` with the one engine loop (``resume``: False, True,
        ``"auto"`` or ``"exact"``, see :class:`~attnkit.engine.trainer.Trainer`)."""
        from attnkit.engine.task import monitor_of
        from attnkit.engine.trainer import fit

        task = self.task(cfg)
        result = fit(task, run_dir, resume=resume, progress=progress)
        key = monitor_of(task)[0]
        best = {key: result.best[key]} if key in result.best else {}
        metrics = {**best, **result.final}
        return Trained(
            str(result.run_dir),
            metrics,
            result.best_epoch,
            result.epochs_run,
            result.seconds,
            result.device,  # where the engine trained it
        )

    def open(self, run_dir: Path, checkpoint: str = "best", device: str = "auto") -> Any:
        """The trained run as a Python object (``attnkit.load_run``) with its model on
        ``device`` (:mod:`attnkit.devices`); refuses a run of another application in one
        line. The run loader reads the weights on the CPU; they are moved once."""
        from attnkit import devices

        self.check_checkpoint(checkpoint)
        where = devices.pick(device)
        load = self._part("run_loader")
        run = load(run_dir, checkpoint) if len(self.checkpoints) > 1 else load(run_dir)
        return devices.move(run, where)

    # -- the generic run commands, where listed in ``runs`` -------------------------------
    def evaluate(self, run_dir: Path, options: EvaluateOptions) -> Scores:
        raise self._refuse("evaluate")

    def predict(self, run_dir: Path, inputs: list[Path], options: PredictOptions) -> Predictions:
        raise self._refuse("predict")

    def report(self, run_dir: Path, output: Path, n_examples: int = 3) -> Written:
        """One offline HTML page for the run: its config, training history, scores and
        :meth:`examples` with their attention (:mod:`attnkit.interpret.run_report`)."""
        from attnkit.interpret.run_report import write_run_report

        return write_run_report(self, Path(run_dir), Path(output), n_examples)

    def serve(self, run_dir: Path | None, options: ServeOptions, echo) -> None:
        """The generic page on this run: an input (:attr:`serve_input`) in, the output and its
        attention (:meth:`show`) back (:mod:`attnkit.server`)."""
        if self.serve_input is None or run_dir is None:
            raise self._refuse("serve")
        from attnkit.server import serve_app

        serve_app(self, Path(run_dir), options, echo)

    def demo(self, out: Path, *, retrain: bool, progress: bool) -> None:
        """``attnkit demo``: train and show the lecture's first example (the application with
        ``serves_demo``)."""
        raise self._refuse("demo")

    # -- attention shown: the report's examples and the served page ---------------------------
    def show(self, run: Any, inputs: list[Any]) -> list[Shown]:
        """The opened ``run`` (:meth:`open`) applied to ``inputs`` (texts, or paths of images
        or CSV files, as :attr:`serve_input` says), each with its attention."""
        raise self._refuse("serve")

    def examples(self, run_dir: Path, n: int) -> list[Shown]:
        """``n`` examples of the run's own held-out data with their attention (the report's
        pictures); ``[]`` where there is nothing to show."""
        return []

    def commands(self) -> Any:
        """Its own command group (a ``typer.Typer``), or None."""
        return self._part("command_group") if self.command_group else None

    # -- helpers -------------------------------------------------------------------------------
    def supports(self, command: str) -> bool:
        """``train``, ``report`` (every application), ``serve`` (where it takes an input to
        show), and what :attr:`runs` lists."""
        if command in ("train", "report") or command in self.runs:
            return True
        return command == "serve" and self.serve_input is not None

    def check_checkpoint(self, checkpoint: str) -> None:
        """Refuse a checkpoint this application does not keep, in one line."""
        if checkpoint not in self.checkpoints:
            kept = " or ".join(self.checkpoints)
            raise ValueError(f"a {self.name} run keeps {kept} only, not {checkpoint!r}")

    def _part(self, attribute: str) -> Any:
        """The object a ``"module:name"`` class attribute names (``name`` may be dotted)."""
        import importlib

        where = getattr(self, attribute)
        if where is None:
            raise NotImplementedError(f"{type(self).__name__} declares no {attribute}")
        module, _, name = where.partition(":")
        found: Any = importlib.import_module(module)
        for part in name.split("."):
            found = getattr(found, part)
        return found

    def _refuse(self, command: str) -> ValueError:
        every = ("train", "evaluate", "predict", "report", "serve")
        have = ", ".join(c for c in every if self.supports(c))
        return ValueError(f"`attnkit {command}` does not apply to {self.name} runs ({have})")
