"""Summarization with attention that copies and covers (See, Liu & Manning 2017, the
pointer-generator network with coverage), declared once: ``attnkit train`` a config with
``task: summarization`` (``configs/scitldr-pointer-generator.yaml``; ``model.copy`` and
``model.coverage`` switch the mechanisms), then ``evaluate`` (ROUGE-1/2/L against every
reference, repeated trigrams, copied words; ``--beam``, ``--output``), ``predict`` (a summary of
each abstract file; with ``--picture``, the first one's attention over its source coloured by
``p_gen``, and the coverage) and ``report``::

    attnkit train configs/scitldr-pointer-generator.yaml -o runs/scitldr-pg
    attnkit evaluate runs/scitldr-pg --split test
    attnkit predict runs/scitldr-pg abstract.txt --picture summary.png
    attnkit report runs/scitldr-pg
"""

from __future__ import annotations

from pathlib import Path

from attnkit.application import App, EvaluateOptions, PredictOptions
from attnkit.results import Predictions, Scores, Shown, Written

SCORES = ("rouge1", "rouge2", "rougeL", "repeated_trigrams", "copied_words", "novel_bigrams")


class SummarizationApp(App):
    name = "summarization"
    group = "summarization"
    title = "Summarization"
    config_loader = "attnkit.apps.summarization.config:load_config"
    task_class = "attnkit.apps.summarization.training:SummarizationTask"
    run_loader = "attnkit.apps.summarization.run:SummarizationRun.load"
    runs = ("evaluate", "predict", "report")
    evaluate_options = frozenset({"beam", "output"})
    predict_options = frozenset({"picture", "beam"})
    serve_input = "text"

    def evaluate(self, run_dir: Path, options: EvaluateOptions) -> Scores:
        """ROUGE-1/2/L (F1 points; the best over each paper's references), the share of
        repeated trigrams, of copied words and of novel bigrams, mean words and ``p_gen`` on
        ``options.split`` (train, valid, test), decoded with ``--beam`` (default
        ``train.beam``). Every summary goes to ``RUN/evaluation-SPLIT.json``, and with
        ``--output`` one a line."""
        run = self.open(run_dir, device=options.device)
        record = run.evaluate(options.split, options.data_dir, options.beam)
        keys = (*SCORES, "words", "p_gen", "beam")
        metrics = {k: record[k] for k in keys if k in record}
        written = [str(run.evaluation_file(record["split"]))]
        result = Scores(
            str(run_dir), record["split"], metrics, record["n"], "papers", written=written
        )
        return result.write_outputs(
            options.output, [p["prediction"] for p in record["predictions"]]
        )

    def predict(self, run_dir: Path, inputs: list[Path], options: PredictOptions) -> Predictions:
        """A summary of each abstract file (plain text); ``--picture``: the first one's
        attention over its source, each output word coloured by ``p_gen``, and its coverage."""
        from attnkit.textfiles import read_text

        if not inputs:
            raise ValueError("give abstract files to summarise (plain text, one abstract a file)")
        run = self.open(run_dir, device=options.device)
        texts = [read_text(p) for p in inputs]
        for p, text in zip(inputs, texts, strict=True):
            if not text.strip():
                raise ValueError(f"{p}: the abstract is empty")
        found = run.summarize(texts, beam=options.beam)
        rows = [[str(p), s.text] for p, s in zip(inputs, found, strict=True)]
        result = Predictions(str(run_dir), ["abstract", "summary"], rows)
        if options.picture is not None:
            from attnkit.apps.summarization.views import plot_summary_attention

            plot_summary_attention(found[0], options.picture, title=str(inputs[0]))
            result.written.append(str(options.picture))
        return result

    def report(self, run_dir: Path, output: Path, n_examples: int = 3) -> Written:
        """The generic report with the scores of every split evaluated so far."""
        from attnkit.apps.summarization.views import evaluated_scores
        from attnkit.interpret.run_report import write_run_report

        extra = [evaluated_scores(Path(run_dir))]
        return write_run_report(self, Path(run_dir), Path(output), n_examples, extra=extra)

    def show(self, run, inputs: list[str]) -> list[Shown]:
        """Each abstract summarised greedily, with its attention, ``p_gen`` and coverage."""
        from attnkit.apps.summarization.views import summaries_shown

        return summaries_shown(run.summarize(inputs, beam=1), inputs)

    def examples(self, run_dir: Path, n: int) -> list[Shown]:
        """The first ``n`` validation papers, with their reference summaries."""
        from attnkit.apps.summarization.training import load_papers
        from attnkit.apps.summarization.views import summaries_shown

        run = self.open(run_dir)
        papers = load_papers(run.config.data, "valid")[:n]
        abstracts = [p.abstract for p in papers]
        shown = summaries_shown(run.summarize(abstracts, beam=1), abstracts)
        for s, p in zip(shown, papers, strict=True):
            s.details.update({"paper": p.paper_id, "references": " | ".join(p.targets)})
        return shown


APP = SummarizationApp()
