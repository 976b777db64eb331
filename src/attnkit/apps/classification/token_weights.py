"""Static attention beside learned attention: TF-IDF weights and a model's token weights.

TF-IDF (Sparck Jones 1972; scikit-learn's smoothed form ``idf(t) = ln((1 + n) / (1 + df(t))) + 1``,
rows L2-normalised) gives every word a weight fixed before any training on the task - "static
attention". :class:`TfidfBaseline` is TF-IDF with logistic regression, the static baseline the
learned models are measured against. :func:`render_html` and :func:`plot_png` draw, for one
sentence, the TF-IDF weights beside the attention weights a trained model learned.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnkit.apps.classification.data import split_words

__all__ = ["TfidfBaseline", "WeightRow", "plot_png", "render_html"]


def _analyzer(text: str) -> list[str]:
    return split_words(text)[0]


class TfidfBaseline:
    """TF-IDF features over word unigrams (the tokens of
    :class:`~attnkit.apps.classification.data.WordVocab`, sublinear tf) + L2-regularised
    logistic regression."""

    def __init__(self, vectorizer, classifier) -> None:
        self.vectorizer, self.classifier = vectorizer, classifier

    @classmethod
    def fit(cls, texts: Sequence[str], labels: Sequence[int], c: float = 4.0) -> TfidfBaseline:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression

        vectorizer = TfidfVectorizer(analyzer=_analyzer, sublinear_tf=True)
        features = vectorizer.fit_transform(texts)
        classifier = LogisticRegression(C=c, max_iter=2000).fit(features, labels)
        return cls(vectorizer, classifier)

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        return self.classifier.predict(self.vectorizer.transform(texts))

    def accuracy(self, texts: Sequence[str], labels: Sequence[int]) -> float:
        return float((self.predict(texts) == np.asarray(labels)).mean()) if len(labels) else 0.0

    def token_weights(self, text: str) -> tuple[list[str], np.ndarray]:
        """Tokens of ``text`` and each one's TF-IDF value in this document (0 for words unseen
        in training), normalised to sum to 1 over the tokens: a static attention distribution."""
        tokens = _analyzer(text)
        row = self.vectorizer.transform([text])
        vocab = self.vectorizer.vocabulary_
        values = np.array([row[0, vocab[t]] if t in vocab else 0.0 for t in tokens], dtype=float)
        total = values.sum()
        return tokens, values / total if total > 0 else np.full(
            len(tokens), 1 / max(1, len(tokens))
        )

    def word_weights(self, text: str) -> np.ndarray:
        """TF-IDF weights summed per whitespace word of ``text`` (sums to 1)."""
        tokens, values = self.token_weights(text)
        word_ids = split_words(text)[1]
        out = np.zeros(len(text.split()))
        np.add.at(out, word_ids, values)
        return out


@dataclass
class WeightRow:
    """One line of the view: a title, the tokens and a weight per token."""

    title: str
    tokens: list[str]
    weights: list[float]


def _colour(weight: float, top: float) -> str:
    alpha = 0.0 if top <= 0 else min(1.0, weight / top)
    return f"rgba(214, 39, 40, {alpha:.3f})"


def render_html(sentence: str, rows: Sequence[WeightRow], note: str = "") -> str:
    """A self-contained HTML page: one line of highlighted tokens per row (darker = more
    weight, each row scaled to its own maximum), the weight shown on hover and below."""
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>token weights</title>",
        "<style>body{font-family:sans-serif;margin:2em}.row{margin:1em 0}.t{display:inline-block;"
        "padding:.2em .3em;margin:.1em;border-radius:3px;text-align:center}"
        ".w{font-size:70%;color:#555;display:block}</style></head><body>",
        f"<h2>{html.escape(sentence)}</h2>",
    ]
    for row in rows:
        top = max(row.weights, default=0.0)
        parts.append(f"<div class='row'><h3>{html.escape(row.title)}</h3>")
        for token, weight in zip(row.tokens, row.weights, strict=True):
            parts.append(
                f"<span class='t' title='{weight:.4f}' style='background:{_colour(weight, top)}'>"
                f"{html.escape(token)}<span class='w'>{weight:.2f}</span></span>"
            )
        parts.append("</div>")
    if note:
        parts.append(f"<p>{html.escape(note)}</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def plot_png(path: str | Path, sentence: str, rows: Sequence[WeightRow]) -> Path:
    """The same view as a matplotlib figure: one heat strip per row, tokens as labels."""
    from attnkit.runtime import files_backend

    files_backend()
    import matplotlib.pyplot as plt

    width = max(len(r.tokens) for r in rows)
    fig, axes = plt.subplots(len(rows), 1, figsize=(max(6, 0.75 * width), 1.4 * len(rows) + 0.6))
    axes = np.atleast_1d(axes)
    for ax, row in zip(axes, rows, strict=True):
        values = np.asarray(row.weights, dtype=float)[None, :]  # (1, T)
        ax.imshow(values, cmap="Reds", aspect="auto", vmin=0, vmax=max(values.max(), 1e-9))
        ax.set_xticks(range(len(row.tokens)), row.tokens, rotation=30, ha="right")
        ax.set_yticks([])
        ax.set_title(row.title, fontsize=10, loc="left")
        for j, w in enumerate(values[0]):
            colour = "white" if w > 0.6 * values.max() else "black"
            ax.text(j, 0, f"{w:.2f}", ha="center", va="center", fontsize=8, color=colour)
    fig.suptitle(sentence, fontsize=11)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
