"""Speech recognition with attention (Chan et al. 2016, "Listen, Attend and Spell"; Chorowski et
al. 2015, location-aware attention; a CTC baseline and joint CTC-attention, Watanabe et al.
2017), declared once: ``attnkit train`` a config with ``task: speech`` (``configs/fsdd-las.yaml``,
``configs/an4-las.yaml``, ``configs/an4-ctc.yaml``), then ``evaluate`` (WER, CER, digit error
rate, the attention's monotonicity; ``--beam``, ``--output``), ``predict`` (each wav's text;
with ``--picture``, the attention of the first over its frames) and ``report``::

    attnkit train configs/fsdd-las.yaml -o runs/fsdd-las
    attnkit evaluate runs/fsdd-las --split test-long
    attnkit predict runs/fsdd-las digits.wav --picture attention.png
    attnkit report runs/fsdd-las
"""

from __future__ import annotations

from pathlib import Path

from attnkit.application import App, EvaluateOptions, PredictOptions
from attnkit.results import Predictions, Scores, Shown, Written

SCORES = ("wer", "cer", "der", "monotonicity")


class SpeechApp(App):
    name = "speech"
    group = "speech"
    title = "Speech recognition"
    config_loader = "attnkit.apps.speech.config:load_config"
    task_class = "attnkit.apps.speech.training:SpeechTask"
    run_loader = "attnkit.apps.speech.run:SpeechRun.load"
    runs = ("evaluate", "predict", "report")
    evaluate_options = frozenset({"beam", "output"})
    predict_options = frozenset({"picture", "beam"})
    serve_input = "audio"

    def evaluate(self, run_dir: Path, options: EvaluateOptions) -> Scores:
        """WER, CER, digit error rate (FSDD) and monotonicity on ``options.split`` (fsdd:
        train, valid, test, test-long; an4: train, valid, test), decoded with ``--beam``
        (default ``train.beam``); for FSDD also the attention scored against each digit's frames
        (``forced_*``, ``fixed_length_*``: :mod:`attnkit.apps.speech.alignment`). Every
        prediction goes to ``RUN/evaluation-SPLIT.json``, and with ``--output`` one a line."""
        run = self.open(run_dir, device=options.device)
        record = run.evaluate(options.split, options.data_dir, options.beam)
        metrics = {**{k: record[k] for k in SCORES if k in record}, "beam": record["beam"]}
        for part in ("forced", "fixed_length"):  # digit strings: attention against gold
            metrics.update({f"{part}_{k}": v for k, v in record.get(part, {}).items()})
        written = [str(run.evaluation_file(record["split"]))]
        result = Scores(
            str(run_dir), record["split"], metrics, record["n"], "utterances", written=written
        )
        return result.write_outputs(
            options.output, [p["prediction"] for p in record["predictions"]]
        )

    def predict(self, run_dir: Path, inputs: list[Path], options: PredictOptions) -> Predictions:
        """The text of each wav (FSDD runs: 8 kHz mono) or ``.mfc`` file in ``inputs``;
        ``--picture``: the first one's features and attention over its frames."""
        from attnkit.apps.speech.views import plot_speech_attention

        if not inputs:
            raise ValueError("give the audio files to transcribe (wav, 8 kHz mono for FSDD runs)")
        run = self.open(run_dir, device=options.device)
        draw = options.picture is not None and run.model.speller is not None
        found = run.transcribe(inputs, beam=options.beam, attention=draw)
        rows = [[str(p), t.text] for p, t in zip(inputs, found, strict=True)]
        result = Predictions(str(run_dir), ["audio", "text"], rows)
        if options.picture is not None:
            first = found[0]
            plot_speech_attention(
                run.features(inputs[0]), first.tokens, first.attention, options.picture,
                reduction=run.model.reduction, title=f"{inputs[0].name}: {first.text!r}",
            )  # fmt: skip
            result.written.append(str(options.picture))
            if not draw:
                result.notes.append("a CTC-only model has no attention: the picture shows features")
        return result

    def report(self, run_dir: Path, output: Path, n_examples: int = 3) -> Written:
        """The generic report with the scores of every split evaluated so far."""
        from attnkit.apps.speech.report import evaluated_scores
        from attnkit.interpret.run_report import write_run_report

        extra = [evaluated_scores(Path(run_dir))]
        return write_run_report(self, Path(run_dir), Path(output), n_examples, extra=extra)

    def show(self, run, inputs: list[Path]) -> list[Shown]:
        """Each audio file transcribed greedily, with its attention over the frames."""
        from attnkit.apps.speech.report import transcripts_shown

        features = [run.features(p) for p in inputs]
        return transcripts_shown(run, [str(p) for p in inputs], features)

    def examples(self, run_dir: Path, n: int) -> list[Shown]:
        """The first ``n`` validation utterances, with the truth beside the transcript."""
        from attnkit.apps.speech.report import validation_shown

        return validation_shown(self.open(run_dir), n)


APP = SpeechApp()
