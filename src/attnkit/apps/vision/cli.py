"""``attnkit rollout | deletion | classify-images``: the Vision Transformer's pictures and tests.

Training and scoring go through ``attnkit train CONFIG`` / ``attnkit evaluate RUN_DIR`` (a config
with ``task: image-classification``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attnkit.commands import Debug, run_or_exit
from attnkit.commands import setup_logging as _logging

commands = typer.Typer()  # gathered into `attnkit` by attnkit.cli

RunDirArg = Annotated[Path, typer.Argument(help="A trained image-classification run directory.")]
Split = Annotated[str, typer.Option(help="train or test.")]
DataDir = Annotated[str | None, typer.Option(help="Where a relative data.path is read from.")]


def _split(run_dir: Path, split: str, data_dir: str | None):
    from attnkit.apps.vision.task import load_data, load_vit_run

    if split not in ("train", "test"):
        raise ValueError(f"--split must be 'train' or 'test', got {split!r}")
    cfg, model = load_vit_run(run_dir)
    return model, load_data(cfg, data_dir)[split]


@commands.command(rich_help_panel="Vision")
def rollout(
    run_dir: RunDirArg,
    out: Annotated[Path, typer.Option("--output", help="Picture (.png, .svg, .pdf).")] = Path(
        "rollout.png"
    ),
    count: Annotated[int, typer.Option(help="How many images (the first of the split).")] = 16,
    split: Split = "test",
    residual: Annotated[float, typer.Option(help="Residual share r of A = (1-r) W + r I.")] = 0.5,
    data_dir: DataDir = None,
    debug: Debug = False,
) -> None:
    """Draw each image's attention rollout map (Abnar & Zuidema 2020) over it, in a grid."""

    def work() -> None:
        from attnkit.apps.vision.views import plot_rollout

        if count < 1:
            raise ValueError(f"--count must be >= 1, got {count}")
        _logging(quiet=True)
        model, data = _split(run_dir, split, data_dir)
        typer.echo(f"wrote {plot_rollout(model, data, out, count, residual)}")

    run_or_exit(work, "rollout", debug)


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
    debug: Debug = False,
) -> None:
    """Accuracy after deleting the k patches rollout ranks highest vs k random patches."""

    def work() -> None:
        from rich.console import Console
        from rich.table import Table

        from attnkit.apps.vision.task import accuracy, deletion_test

        try:
            ks = [int(v) for v in k.split(",") if v.strip()]
        except ValueError:
            raise ValueError(f"--k must be comma-separated integers, got {k!r}") from None
        _logging(quiet=True)
        model, data = _split(run_dir, split, data_dir)
        rows = deletion_test(model, data, ks, fill, seed)
        table = Table(
            "k patches",
            "rollout top-k deleted",
            "random k deleted",
            title=f"{split} accuracy {accuracy(model, data):.4f} ({len(data)} images, "
            f"{model.config.num_patches} patches, fill {fill})",
        )
        for row in rows:
            table.add_row(str(row["k"]), f"{row['rollout']:.4f}", f"{row['random']:.4f}")
        Console().print(table)

    run_or_exit(work, "deletion", debug)


@commands.command("classify-images", rich_help_panel="Vision")
def classify_images(
    run_dir: RunDirArg,
    files: Annotated[list[Path], typer.Argument(help="PNG or JPEG files.")],
    debug: Debug = False,
) -> None:
    """Print the predicted class and its probability for each image file (the same as
    ``attnkit predict RUN_DIR FILES``)."""

    def work() -> None:
        from attnkit.apps.vision.task import predict_run

        _logging(quiet=True)
        typer.echo(predict_run(run_dir, files))

    run_or_exit(work, "classify-images", debug)
