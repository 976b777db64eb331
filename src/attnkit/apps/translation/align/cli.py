"""``attnkit translation align score | extract``: word alignments, scored against gold and
read from a run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attnkit.commands import Debug, run_or_exit

align_app = typer.Typer(
    help="Word alignments: read them from a run's attention, score them against gold.",
    no_args_is_help=True,
)


@align_app.command("score")
def align_score(
    gold: Annotated[Path, typer.Option(help="Gold Pharaoh file (i-j sure, ipj possible).")],
    pred: Annotated[Path, typer.Option(help="Predicted Pharaoh file.")],
    gold_one_based: Annotated[
        bool, typer.Option("--gold-one-based/--gold-zero-based", help="Gold indices from 1.")
    ] = True,
    pred_one_based: Annotated[
        bool, typer.Option("--pred-one-based/--pred-zero-based", help="Predicted from 1.")
    ] = False,
    debug: Debug = False,
) -> None:
    """AER (Och & Ney 2003), precision and recall of predicted against gold alignments."""

    def work() -> None:
        from attnkit.metrics.aer import align_score_command

        result = align_score_command(gold, pred, gold_one_based, pred_one_based)
        typer.echo(result.summary())
        for note in result.notes:
            typer.echo(f"note: {note}", err=True)

    run_or_exit(work, "translation align score", debug)


def _layer(text: str) -> str | int:
    if text in ("auto", "mean"):
        return text
    try:
        return int(text)
    except ValueError:
        raise typer.BadParameter(
            f'expected "auto", "mean" or a layer number, got {text!r}'
        ) from None


LayerOption = Annotated[
    str,
    typer.Option(
        parser=_layer,
        help='Decoder layer, heads averaged: "mean" (best on the generated gold, '
        'docs/alignment.md), "auto" (the penultimate) or a number (negative from the end).',
    ),
]
ReverseLayerOption = Annotated[
    str | None,
    typer.Option(
        parser=_layer,
        help="The reverse run's layer, as --layer (default: the same as --layer).",
    ),
]
HeadOption = Annotated[
    int | None,
    typer.Option(help="Read one head (e.g. the guided one) instead of the heads' mean."),
]
ShiftOption = Annotated[
    bool,
    typer.Option(
        "--shift/--no-shift",
        help="Shift-Att: align each target word from the step that reads it (Chen et al. "
        "2020), not the step that writes it (off: worse on our models, docs/alignment.md).",
    ),
]
BothWaysOption = Annotated[
    bool,
    typer.Option(
        help="Also link each source word to the target word attending to it most, and "
        "combine both readings by grow-diag (best on the generated gold, docs/alignment.md)."
    ),
]


@align_app.command("extract")
def align_extract(
    model: Annotated[
        Path,
        typer.Argument(
            help="A trained translation run, or a Hugging Face encoder-decoder folder (its "
            "config.json; e.g. a MarianMT model), read offline.",
        ),
    ],
    source: Annotated[Path, typer.Argument(help="Tokenised source sentences, one per line.")],
    target: Annotated[Path, typer.Argument(help="Their tokenised translations, line by line.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Pharaoh file to write.")],
    layer: LayerOption = "mean",
    head: HeadOption = None,
    shift: ShiftOption = False,
    detok: Annotated[
        bool, typer.Option(help="Feed the model running text (no space before , . ! ?).")
    ] = False,
    both_ways: BothWaysOption = False,
    reverse_run: Annotated[
        Path | None,
        typer.Option(
            help="A run or Hugging Face model of the other direction, to symmetrise with."
        ),
    ] = None,
    reverse_layer: ReverseLayerOption = None,
    symmetrisation: Annotated[
        str,
        typer.Option(
            help="intersection, union, grow-diag, grow-diag-final(-and), or product: the two "
            "attentions multiplied before links are read (Liang et al. 2006)."
        ),
    ] = "grow-diag",
    checkpoint: Annotated[str, typer.Option(help="A run's best, averaged or last.")] = "best",
    debug: Debug = False,
) -> None:
    """Word alignments from a run's (or a Hugging Face translation model's) cross-attention
    on a parallel file, as Pharaoh ``i-j`` lines (0-based, source first)."""

    def work() -> None:
        from attnkit.apps import require_kind
        from attnkit.apps.translation.align.extract import extract_command
        from attnkit.apps.translation.align.hf_forced import is_hf_model
        from attnkit.apps.translation.app import APP

        for run in (model, reverse_run):
            if run is not None and not is_hf_model(run):
                require_kind(run, APP.name)
        options = dict(layer=layer, head=head, shift=shift, detok=detok, checkpoint=checkpoint)
        both = dict(reverse_layer=reverse_layer, symmetrisation=symmetrisation, both_ways=both_ways)
        path = extract_command(
            model, source, target, output, reverse_run=reverse_run, **both, **options
        )
        typer.echo(str(path))

    run_or_exit(work, "translation align extract", debug)
