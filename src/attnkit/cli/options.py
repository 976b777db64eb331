"""The options the run commands share (:mod:`attnkit.cli.runs`), among them those of
``attnkit predict`` for runs that generate text (a language model's ``--prompt``,
``--max-new`` and how each next token is chosen), refused in one line by runs whose
application does not list them in :attr:`~attnkit.application.App.predict_options`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

RunDirArg = Annotated[Path, typer.Argument(help="A trained run directory.")]
Output = Annotated[Path | None, typer.Option("--output", help="Write the result to this file.")]
Json = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
Beam = Annotated[int | None, typer.Option(help="Beam size of runs that decode (1 = greedy).")]
Overrides = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a config field: --set train.epochs=2 (repeatable)."),
]

Prompt = Annotated[
    str | None, typer.Option(help="Text to continue (runs that generate; else INPUTS' lines).")
]
MaxNew = Annotated[
    int | None, typer.Option("--max-new", min=1, help="Tokens to generate (default 200).")
]
Temperature = Annotated[
    float | None,
    typer.Option(min=0.0, help="Divides the logits; 0 is greedy (default 1)."),
]
TopK = Annotated[int | None, typer.Option("--top-k", min=1, help="Sample from the k most likely.")]
TopP = Annotated[
    float | None,
    typer.Option("--top-p", min=0.0, max=1.0, help="Sample from the smallest set reaching p."),
]
Seed = Annotated[int | None, typer.Option(help="Seed of the sampling (reproducible output).")]


def sampling(prompt, max_new, temperature, top_k, top_p, seed) -> dict:
    """The generation options given, by :class:`~attnkit.application.PredictOptions` field."""
    given = dict(prompt=prompt, max_new=max_new, temperature=temperature)
    return given | dict(top_k=top_k, top_p=top_p, seed=seed)
