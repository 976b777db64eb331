"""Run JoeyNMT's launcher with ``testing.min_output_length`` actually honoured.

JoeyNMT 2.3.0 reads ``min_output_length`` from the config and logs it, but
``joeynmt.prediction.predict`` never passes it on to ``joeynmt.search.search`` (its search
functions do implement it: they forbid the end token until that step). Without it a briefly
trained model stops after a few tokens on JoeyNMT's side while attnkit decodes every step,
and the decoding benchmark would compare unequal work. This shim, run by JoeyNMT's own Python
(it imports nothing of attnkit), wraps ``search`` to pass the value from the environment
variable ``ATTNKIT_JOEY_MIN_OUTPUT`` and then runs the launcher given as the first argument:

    JOEY_VENV/bin/python joey_forced_length.py JOEY_VENV/run_joey.py test CONFIG.yaml ...

The benchmark checks the result: JoeyNMT's hypotheses must then be the forced length.
"""

import os
import runpy
import sys


def _install() -> None:
    import joeynmt.prediction as prediction
    import joeynmt.search as search

    minimum = int(os.environ["ATTNKIT_JOEY_MIN_OUTPUT"])
    original = search.search

    def search_with_minimum(*args, **kwargs):
        kwargs.setdefault("min_output_length", minimum)
        return original(*args, **kwargs)

    search.search = search_with_minimum
    prediction.search = search_with_minimum  # predict() calls the name it imported


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit("usage: joey_forced_length.py RUN_JOEY.py MODE CONFIG [options]")
    launcher = sys.argv[1]
    sys.argv = [launcher, *sys.argv[2:]]
    if os.environ.get("ATTNKIT_JOEY_MIN_OUTPUT"):
        _install()
    runpy.run_path(launcher, run_name="__main__")
