"""Interactive attention views for notebooks (JupyterLab, classic Notebook, VS Code).

- :func:`head_view`: one layer's heads as weighted lines between tokens; pick layer and heads,
  hover a token to highlight its lines and read its weights;
- :func:`model_view`: a layers x heads grid of small heatmaps; click one to zoom;
- :func:`cross_view`: a cross-attention heatmap with hover tooltips and alignment lines.

Each returns an :class:`AttentionView` (``_repr_html_()``, ``.html``, ``.save(path)``). The
HTML is self-contained: ``static/viz.js``, ``static/viz_data.js`` and ``static/viz.css`` are
read from this package with :mod:`importlib.resources` at render time and inlined, with the
weights embedded (4-decimal integers, base64); nothing is fetched from the network and no
requirejs is needed. Big models and long inputs: ``layers=`` and ``heads=`` choose what is
embedded, ``scale=`` (linear, row, log) and ``sink=`` (show, drop, separate) how it is drawn,
and a page larger than :data:`~attnkit.viz.views.MAX_PAGE_CHARS` is refused with what to cut.
A Hugging Face model's attention enters through :func:`attnkit.hf.record`.
"""

from attnkit.viz.views import MAX_PAGE_CHARS, AttentionView, cross_view, head_view, model_view

__all__ = ["MAX_PAGE_CHARS", "AttentionView", "cross_view", "head_view", "model_view"]
