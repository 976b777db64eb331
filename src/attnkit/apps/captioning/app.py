"""Captioning (Show, Attend and Tell, Xu et al. 2015, on generated scenes), declared once:
``attnkit train`` a config with ``task: captioning``, then ``evaluate`` (sacreBLEU BLEU-4,
exact match and attention correctness on a generated split) and ``predict`` (each picture's
greedy caption); its own group ``attnkit captioning caption`` draws where each word looked."""

from __future__ import annotations

from pathlib import Path

from attnkit.application import App, EvaluateOptions, PredictOptions
from attnkit.results import Predictions, Scores, Shown

# evaluate's measures in the order shown (the counts and the signature after them)
SHOWN = ("bleu", "exact_match", "mass_in_box", "pointing", "phrase_mass_in_box")
SHOWN += ("phrase_pointing", "nouns", "bleu_signature")


class CaptioningApp(App):
    name = "captioning"
    group = "captioning"
    title = "Captioning"
    config_loader = "attnkit.apps.captioning.config:load_experiment"
    task_class = "attnkit.apps.captioning.training:CaptioningTask"
    run_loader = "attnkit.apps.captioning.run:CaptioningRun.load"
    command_group = "attnkit.apps.captioning.cli:commands"
    moved = ("caption",)
    serve_input = "image"
    evaluate_options = frozenset({"src", "ref"})

    def evaluate(self, run_dir: Path, options: EvaluateOptions) -> Scores:
        """Greedy captions of a generated split (``train``, ``valid`` or ``test``) scored
        against the scenes' truth; the scores are also recorded in ``metrics.json``. With
        ``options.src`` (a folder or a list of pictures) and ``options.ref`` (a caption a
        line): BLEU and exact match of the user's own pictures, the split named after
        ``src`` (no attention correctness: a caption gives no boxes)."""
        if options.data_dir is not None:
            raise ValueError("--data-dir: captioning scenes are generated from the config")
        run, split = self.open(run_dir, device=options.device), options.split
        if options.src is not None:
            split, scores = str(options.src), run.score_files(options.src, options.ref)
        else:
            scores = run.score(split)
        metrics = {key: scores[key] for key in SHOWN if key in scores}
        return Scores(str(run_dir), split, metrics, scores["n"], "captions")

    def predict(self, run_dir: Path, inputs: list[Path], options: PredictOptions) -> Predictions:
        """The greedy caption of each picture (resized to the run's canvas)."""
        _, captions = self.open(run_dir, device=options.device).caption_files(inputs)
        rows = [[str(p), c.text] for p, c in zip(inputs, captions, strict=True)]
        return Predictions(str(run_dir), ["file", "caption"], rows)

    def show(self, run, inputs: list[Path]) -> list[Shown]:
        """Each picture's greedy caption with each word's attention laid over it."""
        pictures, captions = run.caption_files(list(inputs))
        return [
            caption_shown(str(p), image, c)
            for p, image, c in zip(inputs, pictures, captions, strict=True)
        ]

    def examples(self, run_dir: Path, n: int) -> list[Shown]:
        """The first ``n`` test scenes, captioned, their objects' boxes drawn."""
        import numpy as np

        run = self.open(run_dir)
        scenes = run.scenes("test")[:n]
        if not scenes:
            return []
        captions = run.predict(np.stack([s.image for s in scenes]).transpose(0, 3, 1, 2))
        return [
            caption_shown(f"test scene {k}: {s.caption}", s.image, c, s)
            for k, (s, c) in enumerate(zip(scenes, captions, strict=True))
        ]


def caption_shown(name: str, image, caption, scene=None) -> Shown:
    """A caption of ``image (S, S, 3)`` with one panel per word (and ``scene``'s boxes)."""
    from attnkit.apps.captioning.views import plot_caption
    from attnkit.interpret.run_report import png_bytes

    boxes = None if scene is None else [o.box for o in scene.objects]
    picture = png_bytes(
        lambda path: plot_caption(image, caption.words, caption.alpha, path, boxes=boxes)
    )
    details = {} if scene is None else {"truth": scene.caption}
    return Shown(name, caption.text, picture=picture, details=details)


APP = CaptioningApp()
