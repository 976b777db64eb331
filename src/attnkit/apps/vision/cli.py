"""``attnkit vision rollout | deletion | classify-images``: the Vision Transformer's pictures
and tests.

Training, scoring and prediction go through ``attnkit train CONFIG`` / ``attnkit evaluate
RUN_DIR`` / ``attnkit predict RUN_DIR FILES`` (a config with ``task: image-classification``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attnkit.commands import Debug, run_or_exit
from attnkit.commands import setup_logging as _logging
from attnkit.results import Scores, Table

commands = typer.Typer()  # gathered into `attnkit` by attnkit.cli

RunDirArg = Annotated[Path, typer.Argument(help="A trained image-classification run directory.")]
Split = Annotated[str, typer.Option(help="train or test.")]
DataDir = Annotated[str | None, typer.Option(help="Where a relative data.path is read from.")]
Json = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]


def _app(run_dir: Path):
    """The App, once ``run_dir`` is known to be an image-classification run (else a one-line
    refusal naming its kind)."""
    from attnkit.apps import require_kind
    from attnkit.apps.vision.app import APP

    require_kind(run_dir, APP.name)
    _logging(quiet=True)
    return APP


def deletion_text(scores: Scores) -> str:
    """The deletion test for people: the intact accuracy, then the table."""
    (table,) = scores.tables
    lines = [
        f"{scores.run} {scores.split}: accuracy {scores.metrics['accuracy']:.4f} "
        f"({scores.count} {scores.unit}); {table.title}",
        "  ".join(table.columns),
    ]
    widths = [len(c) for c in table.columns]
    for k, rollout, random in table.rows:
        cells = [str(k), f"{rollout:.4f}", f"{random:.4f}"]
        lines.append("  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)))
    return "\n".join(lines)


@commands.command(rich_help_panel="Vision")
def rollout(
    run_dir: Annotated[
        Path | None,
        typer.Argument(help="A trained image-classification run directory (or give --hf)."),
    ] = None,
    out: Annotated[Path, typer.Option("--output", help="Picture (.png, .svg, .pdf).")] = Path(
        "rollout.png"
    ),
    count: Annotated[
        int, typer.Option(help="How many images (the first of the split, or of --images).")
    ] = 16,
    split: Split = "test",
    residual: Annotated[float, typer.Option(help="Residual share r of A = (1-r) W + r I.")] = 0.5,
    data_dir: DataDir = None,
    hf: Annotated[
        Path | None,
        typer.Option(
            "--hf",
            help="A Hugging Face ViT/DeiT model folder (save_pretrained, with its image "
            "processor) instead of a run; needs --images.",
        ),
    ] = None,
    images: Annotated[
        Path | None,
        typer.Option(help="With --hf: a folder of images (sorted by name) or a file listing them."),
    ] = None,
    head: Annotated[
        int | None,
        typer.Option(help="With --hf: the last layer's head to show (default: their mean)."),
    ] = None,
    debug: Debug = False,
) -> None:
    """Draw each image's attention rollout map (Abnar & Zuidema 2020) over it, in a grid; with
    --hf, a Hugging Face model's rollout and last-layer class-token attention."""

    def work() -> None:
        if count < 1:
            raise ValueError(f"--count must be >= 1, got {count}")
        if hf is not None:
            if split != "test" or data_dir is not None:
                raise ValueError("--split and --data-dir go with a run; --hf reads --images")
            typer.echo(f"wrote {_hf_rollout(run_dir, hf, images, out, count, residual, head)}")
            return
        from attnkit.apps.vision.views import plot_rollout

        if run_dir is None:
            raise ValueError("give a run directory, or --hf MODEL_DIR with --images")
        if images is not None or head is not None:
            raise ValueError("--images and --head go with --hf MODEL_DIR, not with a run")
        run = _app(run_dir).open(run_dir)
        data = run.data(split, data_dir)
        typer.echo(f"wrote {plot_rollout(run.model, data, out, count, residual)}")

    run_or_exit(work, "vision rollout", debug)


def _hf_rollout(run_dir, model_dir, images, out, count, residual, head) -> Path:
    """``vision rollout --hf MODEL_DIR --images SRC``: the maps of a Hugging Face model."""
    from attnkit.hf.images import draw_folder

    if run_dir is not None:
        raise ValueError(f"give a run directory ({run_dir}) or --hf {model_dir}, not both")
    if images is None:
        raise ValueError(f"--hf {model_dir} needs --images (a folder of images or a list file)")
    _logging(quiet=True)
    return draw_folder(model_dir, images, out, count, residual, head, quiet=True)


@commands.command(rich_help_panel="Vision")
def deletion(
    run_dir: RunDirArg,
    k: Annotated[
        str, typer.Option(help="Comma-separated numbers of patches to delete.")
    ] = "1,2,4,8",
    fill: Annotated[str, typer.Option(help="zero or mean (the split's mean image).")] = "zero",
    seed: Annotated[int, typer.Option(help="Seed of the random patches.")] = 0,
    split: Split = "test",
    data_dir: DataDir = None,
    json_out: Json = False,
    debug: Debug = False,
) -> None:
    """Accuracy after deleting the k patches rollout ranks highest vs k random patches."""

    def work() -> None:
        from attnkit.results import as_json

        run = _app(run_dir).open(run_dir)
        try:
            ks = [int(v) for v in k.split(",") if v.strip()]
        except ValueError:
            raise ValueError(f"--k must be comma-separated integers, got {k!r}") from None
        data = run.data(split, data_dir)
        rows = run.deletion_test(data, ks, fill, seed)
        columns = ["k patches", "rollout top-k deleted", "random k deleted"]
        title = f"{run.model.config.num_patches} patches, fill {fill}"
        table = Table(title, columns, [[r["k"], r["rollout"], r["random"]] for r in rows])
        accuracy = {"accuracy": run.accuracy(data)}
        scores = Scores(str(run_dir), split, accuracy, len(data), "images", tables=[table])
        typer.echo(as_json(scores) if json_out else deletion_text(scores))

    run_or_exit(work, "vision deletion", debug)


@commands.command("classify-images", rich_help_panel="Vision")
def classify_images(
    run_dir: RunDirArg,
    files: Annotated[list[Path], typer.Argument(help="PNG or JPEG files.")],
    debug: Debug = False,
) -> None:
    """Print the predicted class and its probability for each image file (the same as
    ``attnkit predict RUN_DIR FILES``)."""

    def work() -> None:
        from attnkit.application import PredictOptions

        result = _app(run_dir).predict(run_dir, files, PredictOptions())
        typer.echo("\n".join(result.lines()))

    run_or_exit(work, "vision classify-images", debug)
