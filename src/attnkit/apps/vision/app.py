"""Image classification with a Vision Transformer (Dosovitskiy et al. 2021), declared once:
``attnkit train`` a config with ``task: image-classification``, then ``evaluate`` (accuracy on
the train or test images) and ``predict`` (each image file's class and its probability); its
own group ``attnkit vision rollout | deletion | classify-images``."""

from __future__ import annotations

from pathlib import Path

from attnkit.application import App, EvaluateOptions, PredictOptions
from attnkit.results import Predictions, Scores, Shown


class VisionApp(App):
    name = "image-classification"
    group = "vision"
    title = "Image classification (ViT)"
    config_loader = "attnkit.apps.vision.config:load_config"
    task_class = "attnkit.apps.vision.training:VisionTask"
    run_loader = "attnkit.apps.vision.run:VisionRun.load"
    command_group = "attnkit.apps.vision.cli:commands"
    moved = ("rollout", "deletion", "classify-images")
    serve_input = "image"
    evaluate_options = frozenset({"src", "ref"})

    def evaluate(self, run_dir: Path, options: EvaluateOptions) -> Scores:
        """Accuracy on the ``train`` or ``test`` images (there is no validation split), or on
        the user's own images (``options.src``: a folder or a list of image files,
        ``options.ref``: their class names, one a line; the split is named after ``src``)."""
        run = self.open(run_dir, device=options.device)
        split = options.split
        if options.src is not None:
            split, data = str(options.src), run.own_files(options.src, options.ref)
        else:
            data = run.data(split, options.data_dir)
        accuracy = run.accuracy(data)
        return Scores(str(run_dir), split, {"accuracy": accuracy}, len(data), "images")

    def predict(self, run_dir: Path, inputs: list[Path], options: PredictOptions) -> Predictions:
        """The predicted class and its probability for each image file (a run trained on a
        folder of images)."""
        classified = self.open(run_dir, device=options.device).classify_files(inputs)
        rows = [[str(f), c, p] for f, (c, p) in zip(inputs, classified, strict=True)]
        return Predictions(str(run_dir), ["file", "class", "probability"], rows)

    def show(self, run, inputs: list[Path]) -> list[Shown]:
        """Each image file's class with its class token's attention rollout drawn over it."""
        import numpy as np

        from attnkit.apps.vision.data import read_image

        m = run.config.model
        images = np.stack([read_image(f, m.image_size, m.channels) for f in inputs])
        return rollout_shown(run, images, None, [str(f) for f in inputs])

    def examples(self, run_dir: Path, n: int) -> list[Shown]:
        """The first ``n`` test images with their rollout maps."""
        run = self.open(run_dir)
        test = run.data("test")
        test = test.subset(list(range(min(n, len(test)))))
        names = [f"test image {i}" for i in range(len(test))]
        return rollout_shown(run, test.images, test.labels, names)


def rollout_shown(run, images, labels, names: list[str]) -> list[Shown]:
    """Each image ``(C, S, S)`` classified, with its rollout picture (the title reads
    true→predicted; the prediction itself where ``labels`` is None)."""
    import torch

    from attnkit.apps.vision.data import ImageSet
    from attnkit.apps.vision.views import plot_rollout
    from attnkit.interpret.run_report import png_bytes

    images = torch.as_tensor(images, dtype=torch.float32)  # (N, C, S, S)
    pred = run.predict(images)
    known = labels is not None
    labels = labels if known else pred.classes
    shown = []
    for i, name in enumerate(names):
        one = ImageSet(images[i : i + 1], labels[i : i + 1], run.classes)
        picture = png_bytes(lambda path, one=one: plot_rollout(run.model, one, path, count=1))
        c = int(pred.classes[i])
        details = {"probability": float(pred.probabilities[i, c])}
        if known:
            details["truth"] = run.classes[int(labels[i])]
        shown.append(Shown(name, run.classes[c], picture=picture, details=details))
    return shown


APP = VisionApp()
