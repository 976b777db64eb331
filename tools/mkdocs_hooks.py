"""MkDocs hooks (mkdocs.yml ``hooks:``): the site works offline, so the lessons' formulas are
typeset by a MathJax shipped with the site, not fetched from a CDN. MathJax 2.7 comes from the
PyPI package ``jupyter-server-mathjax`` (the docs extra) and is copied into
``site/assets/mathjax``; mkdocs-jupyter's ``custom_mathjax_url`` points there."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path


def on_post_build(config, **kwargs) -> None:
    static = resources.files("jupyter_server_mathjax") / "static"
    target = Path(config["site_dir"]) / "assets" / "mathjax"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(str(static), target)
