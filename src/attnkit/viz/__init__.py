"""Interactive attention views for notebooks (JupyterLab, classic Notebook, VS Code).

- :func:`head_view`: one layer's heads as weighted lines between tokens; pick layer and heads,
  hover a token to highlight its lines and read its weights;
- :func:`model_view`: a layers x heads grid of small heatmaps; click one to zoom;
- :func:`cross_view`: a cross-attention heatmap with hover tooltips and alignment lines.

Each returns an :class:`AttentionView` (``_repr_html_()``, ``.html``, ``.save(path)``). The
HTML is self-contained: ``static/viz.js`` and ``static/viz.css`` are read from this package
with :mod:`importlib.resources` at render time and inlined, with the weights as embedded
JSON; nothing is fetched from the network and no requirejs is needed.
"""

from attnkit.viz.views import AttentionView, cross_view, head_view, model_view

__all__ = ["AttentionView", "cross_view", "head_view", "model_view"]
