"""Segmentation with U-Net and the Attention U-Net (Oktay et al. 2018), declared once:
``attnkit train`` a config with ``task: segmentation`` (see
``configs/shapes-attention-unet.yaml``), then ``evaluate`` (Dice, IoU, pixel error, foreground
precision / recall / F1; with ``train.test_flips`` also over the 8 flips and turns) and
``predict`` (each image's foreground share, its mask with ``--output``, the gates' picture with
``--picture``)::

    attnkit train configs/shapes-attention-unet.yaml -o runs/shapes-att
    attnkit evaluate runs/shapes-att --split test
    attnkit predict runs/shapes-att image.png --output seg.tsv --picture gates.png
"""

from __future__ import annotations

from pathlib import Path

from attnkit.application import App, EvaluateOptions, PredictOptions
from attnkit.results import Predictions, Scores, Shown, Table

FLIPS = "mean of 8 flips and turns"


class SegmentationApp(App):
    name = "segmentation"
    group = "segmentation"
    title = "Segmentation (Attention U-Net)"
    config_loader = "attnkit.apps.segmentation.config:load_config"
    task_class = "attnkit.apps.segmentation.training:SegmentationTask"
    run_loader = "attnkit.apps.segmentation.run:SegmentationRun.load"
    predict_options = frozenset({"picture"})
    serve_input = "image"
    evaluate_options = frozenset({"src", "ref"})

    def evaluate(self, run_dir: Path, options: EvaluateOptions) -> Scores:
        """The scores of ``options.split`` at threshold 0.5, or of the user's own images
        (``options.src``: a folder or a list of PNG files) and masks (``options.ref``: a
        folder of masks under the same file names, or a list), the split named after
        ``src``; with ``train.test_flips`` a table sets them beside those of the mean over the
        8 flips and quarter turns."""
        run = self.open(run_dir, device=options.device)
        split = options.split
        if options.src is not None:
            split, found = str(options.src), run.score_files(options.src, options.ref)
        else:
            found = run.score(split, options.data_dir)
        plain = found["plain"]
        metrics = {k: v for k, v in plain.items() if isinstance(v, float)}
        result = Scores(str(run_dir), split, metrics, plain["images"], "images")
        if "flips" in found:
            rows = [[k, v, found["flips"][k]] for k, v in metrics.items()]
            result.tables.append(Table(f"{split}: {FLIPS}", ["score", "plain", "flips"], rows))
        return result

    def predict(self, run_dir: Path, inputs: list[Path], options: PredictOptions) -> Predictions:
        """The foreground share of each grey PNG in ``inputs``; with ``--output FILE`` each
        mask is written to ``FILE``'s folder ``STEM-masks/`` (the rows go to ``FILE``);
        ``--picture``: input, prediction and each gate's map for the first input."""
        from attnkit.apps.segmentation.data import read_image
        from attnkit.apps.segmentation.run import save_mask

        if not inputs:
            raise ValueError("give the image files to segment (grey PNG)")
        run = self.open(run_dir, device=options.device)
        out_dir = None if options.output is None else masks_folder(options.output)
        result = Predictions(str(run_dir), ["image", "foreground"], [])
        if out_dir is not None:
            result.columns.append("mask")
        for k, path in enumerate(inputs):
            image = read_image(path)  # (1, H, W) float32 in [0, 1]
            out = run.predict(image[None])
            probs = out.logits[0, 0].numpy()  # (H, W)
            row = [str(path), float((probs > 0.5).mean())]
            if out_dir is not None:
                row.append(str(save_mask(probs, out_dir / f"{Path(path).stem}.png")))
            result.rows.append(row)
            if options.picture is not None and k == 0:
                title = f"{Path(path).name}: {run.path}"
                draw_segmentation(image, out, options.picture, title=title)
                result.written.append(str(options.picture))
        return result

    def show(self, run, inputs: list[Path]) -> list[Shown]:
        """Each grey image segmented, with every attention gate's map over it."""
        from attnkit.apps.segmentation.data import read_image

        return [segmented(run, read_image(p), str(p)) for p in inputs]

    def examples(self, run_dir: Path, n: int) -> list[Shown]:
        """The first ``n`` test images with their true masks beside the prediction."""
        from attnkit.apps.segmentation.sets import load_sets

        run = self.open(run_dir)
        test = load_sets(run.config.data)["test"]
        return [
            segmented(
                run, test.images[i].numpy(), f"test image {test.names[i]}", test.masks[i, 0].numpy()
            )
            for i in range(min(n, len(test)))
        ]


def draw_segmentation(image, out, path: Path, *, truth=None, title: str = "") -> Path:
    """``image (1, H, W)``, the prediction ``out`` of it (a batch of one) and each gate's map
    (:func:`~attnkit.apps.segmentation.views.plot_segmentation`)."""
    from attnkit.apps.segmentation.views import plot_segmentation

    gates = [g[0, 0].numpy() for g in out.gates]
    probs = out.logits[0, 0].numpy()  # (H, W)
    return plot_segmentation(image[0], probs, path, truth=truth, gates=gates, title=title)


def segmented(run, image, name: str, truth=None) -> Shown:
    """``image (1, H, W)`` segmented: its foreground share and the picture of its gates."""
    from attnkit.interpret.run_report import png_bytes

    out = run.predict(image[None])
    share = float((out.logits[0, 0] > 0.5).float().mean())
    picture = png_bytes(lambda path: draw_segmentation(image, out, path, truth=truth))
    return Shown(name, f"foreground {share:.1%}", picture=picture, details={"foreground": share})


def masks_folder(output: Path) -> Path:
    """Where ``predict --output FILE`` writes the masks: ``FILE``'s folder ``STEM-masks``."""
    return output.parent / f"{output.stem}-masks"


APP = SegmentationApp()
