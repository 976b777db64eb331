"""Image to LaTeX (Deng et al. 2017), declared once: ``attnkit train`` a config with
``task: im2latex`` (see ``configs/formulas-im2latex.yaml``), then ``evaluate`` (BLEU-4, exact
token match and image match; ``--beam``, ``--output``), ``predict`` (each image's LaTeX; with
``--picture``, each token's attention on the first image) and ``report`` (HTML: config,
history, scores, attention pictures)::

    attnkit train configs/formulas-im2latex.yaml -o runs/formulas
    attnkit evaluate runs/formulas --split test         # or real-test with data.real
    attnkit predict runs/formulas formula.png --picture attention.png
    attnkit report runs/formulas
"""

from __future__ import annotations

from pathlib import Path

from attnkit.application import App, EvaluateOptions, PredictOptions
from attnkit.results import Predictions, Scores, Shown, Written

SCORES = ("bleu", "exact_match", "image_match", "image_match_ws", "n_truth_unrenderable")


class Im2latexApp(App):
    name = "im2latex"
    group = "im2latex"
    title = "Image to LaTeX"
    config_loader = "attnkit.apps.im2latex.config:load_config"
    task_class = "attnkit.apps.im2latex.training:Im2LatexTask"
    run_loader = "attnkit.apps.im2latex.run:Im2LatexRun.load"
    runs = ("evaluate", "predict", "report")
    evaluate_options = frozenset({"beam", "output", "src", "ref"})
    predict_options = frozenset({"picture"})
    serve_input = "image"

    def evaluate(self, run_dir: Path, options: EvaluateOptions) -> Scores:
        """BLEU-4 (0-100), exact token match and image match (with and without whitespace
        columns) on ``options.split``, read with ``--beam`` (default ``train.beam``); every
        prediction goes to ``RUN/evaluation-SPLIT.json``, and with ``--output`` one a line.
        ``options.src``, ``options.ref``: the user's own images (a folder or a list) and their
        formulas, one a line, instead of a split (named after ``src``, not kept in the run)."""
        run = self.open(run_dir, device=options.device)
        if options.src is not None:
            record = run.evaluate_files(options.src, options.ref, options.beam)
            written = []
        else:
            record = run.evaluate(options.split, options.data_dir, options.beam)
            written = [str(run.evaluation_file(record["split"]))]
        metrics = {**{k: record[k] for k in SCORES if k in record}, "beam": record["beam"]}
        result = Scores(
            str(run_dir), record["split"], metrics, record["n"], "formulas", written=written
        )
        return result.write_outputs(
            options.output, [p["prediction"] for p in record["predictions"]]
        )

    def predict(self, run_dir: Path, inputs: list[Path], options: PredictOptions) -> Predictions:
        """The LaTeX tokens of each image in ``inputs`` (PNG or JPEG, dark ink on light
        paper); ``--picture``: the first image with each token's attention."""
        from attnkit.apps.im2latex.images import fit
        from attnkit.apps.im2latex.run import formula_image
        from attnkit.apps.im2latex.views import plot_formula_attention

        if not inputs:
            raise ValueError("give the formula images to read (PNG or JPEG)")
        run = self.open(run_dir, device=options.device)
        d = run.config.data
        images = [fit(formula_image(p), d.max_height, d.max_width) for p in inputs]
        readings = run.read(images, attention=options.picture is not None)
        rows = [[str(p), " ".join(r.tokens)] for p, r in zip(inputs, readings, strict=True)]
        result = Predictions(str(run_dir), ["image", "latex"], rows)
        if options.picture is not None:
            first = readings[0]
            plot_formula_attention(
                images[0],
                first.tokens,
                first.attention,
                options.picture,
                stride=run.model.stride,
                title=f"{inputs[0].name}: {run.path}",
            )
            result.written.append(str(options.picture))
        return result

    def report(self, run_dir: Path, output: Path, n_examples: int = 3) -> Written:
        """The generic report (:mod:`attnkit.interpret.run_report`) with the scores of every
        split evaluated so far (:mod:`.report`)."""
        from attnkit.apps.im2latex.report import evaluated_scores
        from attnkit.interpret.run_report import write_run_report

        extra = [evaluated_scores(Path(run_dir))]
        return write_run_report(self, Path(run_dir), Path(output), n_examples, extra=extra)

    def show(self, run, inputs: list[Path]) -> list[Shown]:
        """Each formula image read greedily, with each token's attention over it."""
        from attnkit.apps.im2latex.images import fit
        from attnkit.apps.im2latex.report import reading_shown
        from attnkit.apps.im2latex.run import formula_image

        d = run.config.data
        images = [fit(formula_image(p), d.max_height, d.max_width) for p in inputs]
        return reading_shown(run, [str(p) for p in inputs], images)

    def examples(self, run_dir: Path, n: int) -> list[Shown]:
        """The first ``n`` validation formulas, with the truth beside the reading."""
        from attnkit.apps.im2latex.report import validation_shown

        return validation_shown(self.open(run_dir), n)


APP = Im2latexApp()
