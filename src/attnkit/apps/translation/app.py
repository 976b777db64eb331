"""Translation, declared once: ``attnkit train`` a config (``task: translation``, the default),
then ``evaluate`` (BLEU and chrF with sacreBLEU's signatures, BLEU by source length),
``predict`` (each line translated), ``report`` (one HTML page) and ``serve`` (the attention
explorer; ``--demo``: the worked examples without a model); its own group ``attnkit
translation translate | align | data | experiment``."""

from __future__ import annotations

import sys
from pathlib import Path

from attnkit.application import App, EvaluateOptions, PredictOptions, ServeOptions
from attnkit.results import Predictions, Scores, Shown, Table, Written


class TranslationApp(App):
    name = "translation"
    group = "translation"
    title = "Translation"
    config_loader = "attnkit.apps.translation.config:load_experiment"
    task_class = "attnkit.apps.translation.training:TranslationTask"
    run_loader = "attnkit.apps.translation.decode.run:TranslationRun.load"
    command_group = "attnkit.apps.translation.cli:commands"
    moved = ("translate", "align", "data", "experiment")
    runs = ("evaluate", "predict", "report", "serve")
    evaluate_options = frozenset({"beam", "checkpoint", "bf16", "output", "src", "ref"})
    predict_options = frozenset({"beam"})
    checkpoints = ("best", "averaged", "last")
    serves_demo = True
    serve_input = "text"

    def evaluate(self, run_dir: Path, options: EvaluateOptions) -> Scores:
        """BLEU and chrF on ``options.split`` (beam search as configured unless
        ``options.beam``), BLEU by source length; ``options.output``: the translations, one a
        line."""
        from attnkit.apps.translation.decode.evaluate import evaluate_run

        self.check_checkpoint(options.checkpoint)
        o = options
        ev = evaluate_run(
            run_dir,
            o.split,
            beam_size=o.beam,
            checkpoint=o.checkpoint,
            data_dir=o.data_dir,
            bf16=o.bf16,
            device=o.device,
            files=(o.src, o.ref) if o.src is not None else None,
        )
        s = ev.scores
        metrics = {"bleu": s.bleu, "chrf": s.chrf, "beam": ev.beam_size}
        metrics.update(bleu_signature=s.bleu_signature, chrf_signature=s.chrf_signature)
        rows = [[row["bucket"], row["n"], row["bleu"]] for row in ev.by_length]
        table = Table("BLEU by source length", ["source words", "sentences", "BLEU"], rows)
        scores = Scores(str(run_dir), ev.split, metrics, s.n_sentences, "sentences")
        scores.tables.append(table)
        if o.output is not None:
            o.output.write_text("".join(t.text + "\n" for t in ev.translations), encoding="utf-8")
            scores.written.append(str(o.output))
        return scores

    def predict(self, run_dir: Path, inputs: list[Path], options: PredictOptions) -> Predictions:
        """Translate each line of ``inputs`` (or stdin) with the run's beam (or
        ``options.beam``), one row each; a note (and a warning) when some came out empty."""
        from attnkit.apps.translation.data.corpora import read_lines
        from attnkit.apps.translation.decode.translate import empty_note

        lines = [line for path in inputs for line in read_lines(path)]
        if not inputs:
            lines = [line.rstrip("\n") for line in sys.stdin]
        run = self.open(run_dir, device=options.device)
        translations = run.translate(lines, beam=options.beam)
        found = Predictions(str(run_dir), ["translation"], [[t.text] for t in translations])
        note = empty_note(translations, options.beam or run.config.decode.beam_size)
        found.notes += [note] if note else []
        return found

    def report(self, run_dir: Path, output: Path, n_examples: int = 3) -> Written:
        """One self-contained HTML page (:mod:`attnkit.apps.translation.report`)."""
        from attnkit.apps.translation.report import write_report

        path = write_report(run_dir, output, n_examples=n_examples)
        return Written(str(run_dir), [str(path)], "HTML report")

    def serve(self, run_dir: Path | None, options: ServeOptions, echo) -> None:
        """The attention explorer on this run (None: the worked examples only)."""
        from attnkit.apps.translation.explorer import serve

        o = options
        serve(
            run_dir,
            o.host,
            o.port,
            o.max_chars,
            o.checkpoint,
            o.open_browser,
            echo,
            device=o.device,
        )

    def show(self, run, inputs: list[str]) -> list[Shown]:
        """Each text translated (the run's beam) with every layer's attention, labelled."""
        translations = run.translate(list(inputs), attention=True)
        return [
            Shown(text, t.text, t.attention_record(), details={"score": t.scores[0]})
            for text, t in zip(inputs, translations, strict=True)
        ]

    def examples(self, run_dir: Path, n: int) -> list[Shown]:
        """``n`` test sentences at evenly spaced quantiles of source length, each with its
        reference."""
        from attnkit.apps.translation.prepare import load_configured_corpus

        run = self.open(run_dir)
        pairs = load_configured_corpus(run.config.data).splits.get("test") or []
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i].src.split()))
        picked = list(dict.fromkeys(order[(k + 1) * len(order) // (n + 1)] for k in range(n)))
        shown = self.show(run, [pairs[i].src for i in picked])
        for s, i in zip(shown, picked, strict=True):
            s.details["reference"] = pairs[i].tgt
        return shown

    def demo(self, out: Path, *, retrain: bool, progress: bool) -> None:
        """Bahdanau attention against the no-attention baseline on the generated corpus
        (``attnkit demo``, ``make demo``)."""
        from rich.console import Console

        from attnkit.apps.translation.demo import run_demo

        run_demo(out, reuse=not retrain, progress=progress, console=Console())


APP = TranslationApp()
