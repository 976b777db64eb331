"""Captioning (Show, Attend and Tell, Xu et al. 2015, on generated scenes), declared once:
``attnkit train`` a config with ``task: captioning``, then ``evaluate`` (sacreBLEU BLEU-4,
exact match and attention correctness on a generated split) and ``predict`` (each picture's
greedy caption); its own group ``attnkit captioning caption`` draws where each word looked."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from attnkit.application import App, EvaluateOptions, PredictOptions
from attnkit.results import Predictions, Scores

# evaluate's measures in the order shown (the counts and the signature after them)
SHOWN = ("bleu", "exact_match", "mass_in_box", "pointing", "phrase_mass_in_box")
SHOWN += ("phrase_pointing", "nouns", "bleu_signature")


class CaptioningApp(App):
    name = "captioning"
    group = "captioning"
    title = "Captioning"
    moved = ("caption",)

    def load_config(self, path, overrides: Sequence[str] = ()):
        from attnkit.apps.captioning.config import load_experiment

        return load_experiment(path, overrides)

    def task(self, cfg):
        from attnkit.apps.captioning.training import CaptioningTask

        return CaptioningTask(cfg)

    def open(self, run_dir: Path, checkpoint: str = "best"):
        """The run's :class:`~attnkit.apps.captioning.run.CaptioningRun`:
        ``run.predict(images)`` gives captions with each word's attention map."""
        from attnkit.apps.captioning.run import CaptioningRun

        self.check_checkpoint(checkpoint)
        return CaptioningRun.load(run_dir)

    def evaluate(self, run_dir: Path, options: EvaluateOptions) -> Scores:
        """Greedy captions of a generated split (``train``, ``valid`` or ``test``) scored
        against the scenes' truth; the scores are also recorded in ``metrics.json``."""
        if options.data_dir is not None:
            raise ValueError("--data-dir: captioning scenes are generated from the config")
        scores = self.open(run_dir).score(options.split)
        metrics = {key: scores[key] for key in SHOWN}
        return Scores(str(run_dir), options.split, metrics, scores["n"], "captions")

    def predict(self, run_dir: Path, inputs: list[Path], options: PredictOptions) -> Predictions:
        """The greedy caption of each picture (resized to the run's canvas)."""
        _, captions = self.open(run_dir).caption_files(inputs)
        rows = [[str(p), c.text] for p, c in zip(inputs, captions, strict=True)]
        return Predictions(str(run_dir), ["file", "caption"], rows)

    def commands(self):
        from attnkit.apps.captioning.cli import commands

        return commands


APP = CaptioningApp()
