"""The attention explorer: ``attnkit serve RUN_DIR`` (or ``--demo``) opens a local web page that
translates a sentence and draws its attention (heatmap, alignment lines, step by step), beside
the lecture's worked examples. Its routes on the core web server (:mod:`attnkit.server`),
vendored vanilla JS; see :mod:`.app`.
"""

from attnkit.apps.translation.explorer.app import make_server, serve

__all__ = ["make_server", "serve"]
