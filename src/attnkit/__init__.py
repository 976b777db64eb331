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
