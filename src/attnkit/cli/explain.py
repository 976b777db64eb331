"""``attnkit explain``: the step-by-step walk-through of attention."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from attnkit.cli import Debug, _logging, app, run_or_exit


@app.command(rich_help_panel="Learn")
def explain(
    example: Annotated[
        str | None,
        typer.Option("--example", "-e", help="Built-in example: two-word or sentence."),
    ] = None,
    vectors: Annotated[
        str | None,
        typer.Option(help="File: JSON (queries/keys/values, or a list) or one vector per line."),
    ] = None,
    vector: Annotated[
        list[str] | None,
        typer.Option(help='One vector, e.g. "0.1,0.2,0.3"; repeat it (self-attention).'),
    ] = None,
    tokens: Annotated[str | None, typer.Option(help='Labels, e.g. "The,cat,sat".')] = None,
    score: Annotated[
        str | None, typer.Option(help="dot or scaled_dot (default: each example's own).")
    ] = None,
    normaliser: Annotated[
        str, typer.Option(help="softmax, sparsemax, entmax15 or hard.")
    ] = "softmax",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON to stdout instead of tables.")
    ] = False,
    cost: Annotated[
        bool, typer.Option("--cost", help="Compare self-attention, recurrent, convolution.")
    ] = False,
    length: Annotated[int, typer.Option(help="Sequence length n for --cost.")] = 1000,
    width: Annotated[int, typer.Option(help="Model width d for --cost.")] = 1000,
    debug: Debug = False,
) -> None:
    """Walk through attention step by step: scores, scaling, weights, context.

    Without options: both built-in examples.

    With --vectors or --vector: your vectors (add --example for a built-in too).

    --cost alone prints only the cost table.
    """

    def work() -> None:
        walks = _walks(example, vectors, vector, tokens, score, normaliser, cost)
        _show(walks, length, width, cost, as_json)

    run_or_exit(work, "explain", debug)


def _walks(example, vectors, vector, tokens, score, normaliser, cost) -> list:
    """The walk-throughs the options ask for: built-in examples and/or the user's vectors."""
    from attnkit.interpret import explain as ex

    if vectors is not None and vector:
        raise ValueError("give either --vectors FILE or --vector options, not both")
    walks = []
    if example is not None or not (vectors or vector or cost):
        walks += ex.builtin_examples(example, score, normaliser)
    if vectors is not None or vector:
        inputs = (
            ex.read_vectors(vectors, tokens)
            if vectors is not None
            else ex.parse_vector_options(vector, tokens)
        )
        title = f"Your vectors ({vectors or '--vector'})"
        walks.append(ex.walkthrough(inputs, score or "scaled_dot", normaliser, title))
    return walks


def _show(walks: list, length: int, width: int, cost: bool, as_json: bool) -> None:
    """Print the walk-throughs (and the cost table) as rich tables or JSON."""
    from attnkit.attention.cost import layer_costs
    from attnkit.interpret import explain as ex

    report = layer_costs(length, width) if cost else None
    if as_json:
        out: dict = {"walkthroughs": [w.to_dict() for w in walks]}
        if report is not None:
            out["cost"] = report.to_dict()
        typer.echo(json.dumps(out, indent=2))
        return
    console = Console()
    for walk in walks:
        ex.render(walk, console)
    if report is not None:
        console.print(ex.cost_table(report))


@app.command(rich_help_panel="Learn")
def demo(
    out: Annotated[Path, typer.Option("--run-dir", "-o", help="Where the two runs go.")] = Path(
        "runs/demo"
    ),
    retrain: Annotated[bool, typer.Option(help="Train again even if runs exist.")] = False,
    debug: Debug = False,
) -> None:
    """Train Bahdanau attention and the no-attention baseline on the generated corpus, print
    translations, BLEU and BLEU by length, and write an attention heatmap."""

    def work() -> None:
        from attnkit.apps import all_apps

        _logging()
        (lecture,) = [a for a in all_apps() if a.serves_demo]
        lecture.demo(out, retrain=retrain, progress=sys.stderr.isatty())

    run_or_exit(work, "demo", debug)
