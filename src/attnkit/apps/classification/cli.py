"""``attnkit classification classify | token-weights | faithfulness``: text classifiers' own
commands.

Training, plain evaluation and prediction go through ``attnkit train`` / ``evaluate`` /
``predict`` (the config's ``task: text-classification``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from attnkit.commands import Debug, run_or_exit

commands = typer.Typer()  # gathered into `attnkit` by attnkit.cli

RunDirArg = Annotated[Path, typer.Argument(help="A trained text-classification run directory.")]
DataDir = Annotated[str | None, typer.Option(help="Folder holding sst2/ (default: config).")]


@commands.command(rich_help_panel="Text classification")
def classify(
    run_dir: RunDirArg,
    texts: Annotated[list[str] | None, typer.Argument(help="Texts (default: stdin lines).")] = None,
    debug: Debug = False,
) -> None:
    """Label texts and print each token's attention weight."""

    def work() -> None:
        from attnkit.apps.classification.app import label_rows
        from attnkit.apps.classification.classifier import TextClassifier

        lines = texts or [line.rstrip("\n") for line in sys.stdin if line.strip()]
        for row in label_rows(TextClassifier.load(run_dir), lines):
            typer.echo("\t".join(row))

    run_or_exit(work, "classification classify", debug)


@commands.command("token-weights", rich_help_panel="Text classification")
def token_weights(
    run_dir: RunDirArg,
    sentence: Annotated[str, typer.Argument(help="The sentence to show.")],
    html: Annotated[Path | None, typer.Option(help="Write the HTML view here.")] = None,
    png: Annotated[Path | None, typer.Option(help="Write the matplotlib view here.")] = None,
    data_dir: DataDir = None,
    debug: Debug = False,
) -> None:
    """TF-IDF weights (static) beside the model's learned attention weights for one sentence."""

    def work() -> None:
        from attnkit.apps.classification.classifier import TextClassifier
        from attnkit.apps.classification.data import load_split
        from attnkit.apps.classification.token_weights import (
            TfidfBaseline,
            WeightRow,
            plot_png,
            render_html,
        )

        clf = TextClassifier.load(run_dir)
        train = load_split(clf.config, "train", data_dir)
        baseline = TfidfBaseline.fit([e.text for e in train], [e.label for e in train])
        tokens, static = baseline.token_weights(sentence)
        labels, weights = clf.predict([sentence])
        tfidf_label = int(baseline.predict([sentence])[0])
        rows = [
            WeightRow(
                f"TF-IDF (static; logistic regression says {tfidf_label})",
                tokens,
                [float(w) for w in static],
            ),
            WeightRow(
                f"learned attention, {clf.config.model.kind} (says {labels[0]})",
                [t for t, _ in weights[0]],
                [w for _, w in weights[0]],
            ),
        ]
        for row in rows:
            typer.echo(row.title)
            pairs = zip(row.tokens, row.weights, strict=True)
            typer.echo("  " + " ".join(f"{t}:{w:.2f}" for t, w in pairs))
        if html is not None:
            html.write_text(render_html(sentence, rows), encoding="utf-8")
            typer.echo(f"wrote {html}")
        if png is not None:
            typer.echo(f"wrote {plot_png(png, sentence, rows)}")

    run_or_exit(work, "classification token-weights", debug)


@commands.command(rich_help_panel="Text classification")
def faithfulness(
    run_dir: RunDirArg,
    split: Annotated[str, typer.Option(help="train, dev or test.")] = "dev",
    limit: Annotated[int, typer.Option(help="Use the first N examples (0 = all).")] = 300,
    permutations: Annotated[int, typer.Option(help="Random permutations per text.")] = 20,
    seed: Annotated[int, typer.Option(help="Seed of permutations and random erasures.")] = 0,
    json_out: Annotated[Path | None, typer.Option("--output", help="Also write JSON here.")] = None,
    data_dir: DataDir = None,
    debug: Debug = False,
) -> None:
    """Is attention faithful? Kendall tau vs gradient and leave-one-out, permutation TVD,
    erasure flip rates, and attention mass on the true rationale (generated data)."""

    def work() -> None:
        import time

        from rich.console import Console
        from rich.table import Table

        from attnkit.apps.classification.classifier import TextClassifier
        from attnkit.apps.classification.data import load_split
        from attnkit.apps.classification.faithfulness import faithfulness_table
        from attnkit.apps.classification.token_weights import TfidfBaseline

        started = time.perf_counter()
        clf = TextClassifier.load(run_dir)
        examples = load_split(clf.config, split, data_dir)
        examples = examples[:limit] if limit > 0 else examples
        baseline = None
        if examples and examples[0].rationale is not None:
            train = load_split(clf.config, "train", data_dir)
            baseline = TfidfBaseline.fit([e.text for e in train], [e.label for e in train])
        rows = faithfulness_table(clf, examples, baseline=baseline, n_perm=permutations, seed=seed)
        seconds = time.perf_counter() - started
        table = Table("measure", "value", "detail", title=f"{run_dir} {split}: faithfulness")
        for row in rows:
            value = "n/a" if row.value is None else f"{row.value:.3f}"
            table.add_row(row.measure, value, row.detail)
        Console().print(table)
        typer.echo(f"({len(examples)} examples, {seconds:.0f} s)")
        if json_out is not None:
            data = [{"measure": r.measure, "value": r.value, "detail": r.detail} for r in rows]
            json_out.write_text(json.dumps({"split": split, "rows": data}, indent=2))

    run_or_exit(work, "classification faithfulness", debug)
