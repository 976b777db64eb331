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


def load_run(path, checkpoint: str = "best", device: str = "auto"):
    """A trained run directory as its task's Python object (:func:`attnkit.apps.load_run`),
    its model on ``device`` (``auto``: a CUDA GPU, else MPS, else the CPU; see
    :mod:`attnkit.devices`); what it returns (outputs, attention) is on the CPU::

    run = attnkit.load_run("runs/demo/bahdanau")
    (t,) = run.translate(["The black cat sleeps."], beam=5, attention=True)
    """
    from attnkit.apps import load_run as load

    return load(path, checkpoint, device)


def train(config, run_dir=None, *, overrides=(), resume=False, progress: bool = False):
    """Train from a config file, as ``attnkit train CONFIG -o RUN_DIR --set K=V`` does, and
    return the trained run (the object :func:`load_run` gives)::

    run = attnkit.train("configs/stocks-alpha-t-rim.yaml", "runs/stocks",
                        overrides=["train.epochs=2"])

    The config's ``task:`` picks the application; every field is checked when it is read.
    ``run_dir`` defaults to ``runs/NAME``.
    """
    from pathlib import Path

    from attnkit.apps import app_of_config

    app = app_of_config(config)
    cfg = app.load_config(Path(config), tuple(overrides))
    out = Path(run_dir) if run_dir is not None else Path("runs") / cfg.name
    app.train(cfg, out, resume=resume, progress=progress)
    return app.open(out)
