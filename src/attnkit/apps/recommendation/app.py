"""Sequential recommendation with self-attention (Kang & McAuley 2018, "Self-Attentive
Sequential Recommendation"), declared once: ``attnkit train`` a config with ``task:
recommendation`` (``configs/sasrec-games.yaml``), then ``evaluate`` (HR@10, NDCG@10 and MRR,
sampled and by full ranking), ``predict`` (the next items after each history, with
``--picture`` the attention of the first over its items) and ``report``::

    attnkit train configs/sasrec-games.yaml -o runs/sasrec-games
    attnkit evaluate runs/sasrec-games --split test
    attnkit predict runs/sasrec-games history.txt --picture attention.png
    attnkit report runs/sasrec-games

A history (``predict``'s inputs, ``serve``'s text) is item ids, oldest first, separated by
spaces, commas or new lines.
"""

from __future__ import annotations

import re
from pathlib import Path

from attnkit.application import App, EvaluateOptions, PredictOptions
from attnkit.results import Predictions, Scores, Shown, Written

_SEP = re.compile(r"[\s,]+")


def parse_history(text: str, where: str) -> list[int]:
    """Item ids in ``text``; a token that is not a whole number is a ValueError naming
    ``where``."""
    tokens = [t for t in _SEP.split(text.strip()) if t]
    bad = [t for t in tokens if not t.isdigit()]
    if bad or not tokens:
        what = f"{bad[0]!r} is not an item id" if bad else "no item ids"
        raise ValueError(f"{where}: {what} (a history is item ids, oldest first)")
    return [int(t) for t in tokens]


class RecommendationApp(App):
    name = "recommendation"
    group = "recommendation"
    title = "Sequential recommendation"
    config_loader = "attnkit.apps.recommendation.config:load_config"
    task_class = "attnkit.apps.recommendation.training:RecommendationTask"
    run_loader = "attnkit.apps.recommendation.run:RecommendationRun.load"
    runs = ("evaluate", "predict", "report")
    predict_options = frozenset({"picture"})
    serve_input = "text"

    def evaluate(self, run_dir: Path, options: EvaluateOptions) -> Scores:
        """HR@10, NDCG@10 and MRR of ``options.split`` (valid or test) on ``data.eval_users``
        users, sampled (``data.negatives`` items, the authors' rule by default) and by full
        ranking; the record goes to ``RUN/evaluation-SPLIT.json``."""
        run = self.open(run_dir, device=options.device)
        record = run.evaluate(options.split, options.data_dir)
        metrics = {
            f"{protocol}_{k}": v
            for protocol in ("sampled", "full")
            for k, v in record[protocol].items()
        }
        written = [str(run.evaluation_file(record["split"]))]
        return Scores(str(run_dir), record["split"], metrics, record["n"], "users", written=written)

    def predict(self, run_dir: Path, inputs: list[Path], options: PredictOptions) -> Predictions:
        """The ten best next items after each history file; ``--picture``: the first
        history's attention, block by block."""
        from attnkit.textfiles import read_text

        if not inputs:
            raise ValueError("give history files: item ids, oldest first")
        run = self.open(run_dir, device=options.device)
        histories = [parse_history(read_text(p), str(p)) for p in inputs]
        rows = [
            [str(p), " ".join(str(i) for i, _ in run.recommend(h, k=10))]
            for p, h in zip(inputs, histories, strict=True)
        ]
        result = Predictions(str(run_dir), ["history", "next items"], rows)
        if options.picture is not None:
            from attnkit.apps.recommendation.views import plot_history_attention

            plot_history_attention(run, histories[0], options.picture, title=str(inputs[0]))
            result.written.append(str(options.picture))
        return result

    def report(self, run_dir: Path, output: Path, n_examples: int = 3) -> Written:
        """The generic report with the scores of every split evaluated so far."""
        from attnkit.apps.recommendation.views import evaluated_scores
        from attnkit.interpret.run_report import write_run_report

        extra = [evaluated_scores(Path(run_dir))]
        return write_run_report(self, Path(run_dir), Path(output), n_examples, extra=extra)

    def show(self, run, inputs: list[str]) -> list[Shown]:
        """Each history's next items, with every block's attention over its items."""
        from attnkit.apps.recommendation.views import histories_shown

        return histories_shown(run, [parse_history(t, "the history") for t in inputs])

    def examples(self, run_dir: Path, n: int) -> list[Shown]:
        """The first ``n`` evaluated users' histories before their test targets."""
        from attnkit.apps.recommendation.training import load_split
        from attnkit.apps.recommendation.views import histories_shown

        run = self.open(run_dir)
        data = load_split(run.config)
        users = data.evaluated()[:n]
        shown = histories_shown(run, [data.history(u, "test") for u in users])
        for s, u in zip(shown, users, strict=True):
            s.details.update({"user": u, "truth": data.target(u, "test")})
        return shown


APP = RecommendationApp()
