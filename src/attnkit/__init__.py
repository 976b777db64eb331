"""attnkit: attention in deep learning, every classic mechanism in one verified PyTorch API.

The package follows the flow Embed -> Encode -> Attend -> Predict. The attention step lives in
:mod:`attnkit.attention`; its core is :func:`attnkit.attention.attend`. A trained run opens with
:func:`load_run`.
"""

import os

# OpenMP threads that spin-wait make small matrix products up to 40x slower when the CPU is
# shared (DESIGN.md, measured on the 2-core machine); passive waiting costs nothing when it is
# not. This only takes effect if attnkit is imported before torch; the Makefile sets it too.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"


def load_run(path, checkpoint: str = "best"):
    """A trained run directory as its task's Python object (:func:`attnkit.apps.load_run`)::

    run = attnkit.load_run("runs/demo/bahdanau")
    (t,) = run.translate(["the black cat sleeps ."], beam=5, attention=True)
    """
    from attnkit.apps import load_run as load

    return load(path, checkpoint)


def train(config, run_dir=None, *, overrides=(), resume=False, progress: bool = False) -> str:
    """Train from a config file, as ``attnkit train CONFIG -o RUN_DIR --set K=V`` does::

    attnkit.train("configs/stocks-alpha-t-rim.yaml", "runs/stocks", overrides=["train.epochs=2"])
    run = attnkit.load_run("runs/stocks")

    The config's ``task:`` picks the application; every field is checked when it is read.
    ``run_dir`` defaults to ``runs/NAME``. Returns the task's one-line summary.
    """
    from pathlib import Path

    from attnkit.apps import task_module, task_of

    module = task_module(task_of(config))
    cfg = module.load_config(Path(config), tuple(overrides))
    out = Path(run_dir) if run_dir is not None else Path("runs") / cfg.name
    return module.train_run(cfg, out, resume=resume, progress=progress)
