"""Text classification, declared once: ``attnkit train`` a config with
``task: text-classification``, then ``evaluate`` (accuracy, with TF-IDF + logistic regression
on the same data where the config asks) and ``predict`` (each text's label and its tokens'
attention weights); its own group ``attnkit classification classify | token-weights |
faithfulness``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from attnkit.application import App, EvaluateOptions, PredictOptions
from attnkit.results import Predictions, Scores, Shown


class ClassificationApp(App):
    name = "text-classification"
    group = "classification"
    title = "Text classification"
    config_loader = "attnkit.apps.classification.config:load_classifier_config"
    task_class = "attnkit.apps.classification.training:ClassificationTask"
    run_loader = "attnkit.apps.classification.classifier:TextClassifier.load"
    command_group = "attnkit.apps.classification.cli:commands"
    moved = ("classify", "token-weights", "faithfulness")
    serve_input = "text"
    evaluate_options = frozenset({"src", "ref"})

    def evaluate(self, run_dir: Path, options: EvaluateOptions) -> Scores:
        """Accuracy on ``train``, ``dev`` (alias ``valid``) or ``test``, or on the user's own
        files (``options.src``: a text a line, ``options.ref``: its label a line); with the
        config's ``evaluate.tfidf_baseline``, also TF-IDF + logistic regression on the same
        data."""
        from attnkit.apps.classification.data import load_split, own_files

        split = "dev" if options.split == "valid" else options.split
        clf = self.open(run_dir, device=options.device)
        if options.src is not None:
            split = str(options.src)
            examples = own_files(options.src, options.ref, clf.config.num_classes)
        else:
            examples = load_split(clf.config, split, options.data_dir)
        texts, labels = [e.text for e in examples], [e.label for e in examples]
        accuracy = clf.accuracy(texts, labels)
        scores = Scores(str(run_dir), split, {"accuracy": accuracy}, len(examples))
        if clf.config.evaluate.tfidf_baseline:
            from attnkit.apps.classification.token_weights import TfidfBaseline

            train = load_split(clf.config, "train", options.data_dir)
            baseline = TfidfBaseline.fit([e.text for e in train], [e.label for e in train])
            accuracy = baseline.accuracy(texts, labels)
            scores.baselines["TF-IDF + logistic regression"] = {"accuracy": accuracy}
        return scores

    def predict(self, run_dir: Path, inputs: list[Path], options: PredictOptions) -> Predictions:
        """Label each line of ``inputs`` (or stdin), with its tokens' attention weights."""
        from attnkit.textfiles import read_text

        if inputs:  # strict UTF-8, no NUL, BOM removed; errors name the file, line and column
            texts = [s.removesuffix("\r") for p in inputs for s in read_text(p).split("\n")]
        else:
            texts = [line.rstrip("\n") for line in sys.stdin]
        texts = [t for t in texts if t.strip()]
        rows = label_rows(self.open(run_dir, device=options.device), texts)
        return Predictions(str(run_dir), ["label", "text", "attention"], rows)

    def show(self, run, inputs: list[str]) -> list[Shown]:
        """Each text's label with its tokens' attention: a record with one query row (the
        label) over the tokens."""
        import torch

        from attnkit.interpret.structure import AttentionRecord

        labels, weights = run.predict(list(inputs))
        shown = []
        for text, label, pairs in zip(inputs, labels, weights, strict=True):
            tokens = [tok for tok, _ in pairs]
            w = torch.tensor([[[w for _, w in pairs]]], dtype=torch.float32)  # (H=1, Tq=1, T)
            record = AttentionRecord({"pooling": [w]}, {"pooling": ([f"label {label}"], tokens)})
            shown.append(Shown(text, str(label), record))
        return shown

    def examples(self, run_dir: Path, n: int) -> list[Shown]:
        """The first ``n`` texts of the test split (the dev split where test is empty)."""
        from attnkit.apps.classification.data import load_split

        clf = self.open(run_dir)
        held = load_split(clf.config, "test")[:n] or load_split(clf.config, "dev")[:n]
        shown = self.show(clf, [e.text for e in held])
        for s, e in zip(shown, held, strict=True):
            s.details["truth"] = e.label
        return shown


def label_rows(clf, texts: Sequence[str]) -> list[list[str]]:
    """Per text: its label, the text, and its tokens' attention weights as ``token:weight``."""
    labels, weights = clf.predict(list(texts))
    return [
        [str(label), text, " ".join(f"{tok}:{w:.2f}" for tok, w in pairs)]
        for text, label, pairs in zip(texts, labels, weights, strict=True)
    ]


APP = ClassificationApp()
