"""``attnkit captioning caption``: caption images with a trained captioning run and draw where
it looked. Training, scoring and plain captions go through ``attnkit train`` / ``evaluate`` /
``predict`` (a config with ``task: captioning``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attnkit.commands import Debug, run_or_exit
from attnkit.commands import setup_logging as _logging

commands = typer.Typer()  # gathered into `attnkit` by attnkit.cli


@commands.command(rich_help_panel="Captioning")
def caption(
    run_dir: Annotated[Path, typer.Argument(help="A trained captioning run directory.")],
    out: Annotated[
        Path | None,
        typer.Option("--output", help="Write per-word attention pictures into this folder."),
    ] = None,
    image: Annotated[
        list[Path] | None, typer.Option("--image", "-i", help="Caption this picture (repeatable).")
    ] = None,
    split: Annotated[str, typer.Option(help="Without --image: generated split to use.")] = "test",
    count: Annotated[int, typer.Option(help="Without --image: how many scenes.")] = 4,
    fmt: Annotated[str, typer.Option("--format", help="png, svg or pdf.")] = "png",
    debug: Debug = False,
) -> None:
    """Caption generated scenes (or --image files) and draw the attention for every word,
    as in Show, Attend and Tell's figures: one panel per word, the map laid over the image."""

    def work() -> None:
        from attnkit.apps import require_kind
        from attnkit.apps.captioning.app import APP
        from attnkit.apps.captioning.scenes import as_arrays
        from attnkit.apps.captioning.views import plot_caption

        require_kind(run_dir, APP.name)
        _logging(quiet=True)
        if fmt not in ("png", "svg", "pdf"):
            raise ValueError(f"unknown picture format {fmt!r}; use png, svg or pdf")
        run = APP.open(run_dir)
        if image:
            pictures, captions = run.caption_files(image)
            names, boxes, truth = [p.stem for p in image], [None] * len(image), [None] * len(image)
        else:
            if count < 1:
                raise ValueError(f"--count must be at least 1, got {count}")
            scenes = run.scenes(split)[:count]
            pictures = [s.image for s in scenes]
            captions = run.predict(as_arrays(scenes))
            names = [f"{split}-{n:03d}" for n in range(len(scenes))]
            boxes = [s.boxes.tolist() for s in scenes]
            truth = [s.caption for s in scenes]
        for name, pic, cap, box, ref in zip(names, pictures, captions, boxes, truth, strict=True):
            line = f"{name}\t{cap.text}" + (f"\t(truth: {ref})" if ref is not None else "")
            if out is not None:
                path = plot_caption(pic, cap.words, cap.alpha, out / f"{name}.{fmt}", boxes=box)
                line += f"\t{path}"
            typer.echo(line)

    run_or_exit(work, "captioning caption", debug)
