"""Using a captioner: build it, load a trained run, and caption images greedily."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from attnkit.apps.captioning.config import CaptioningConfig, load_experiment
from attnkit.apps.captioning.model import Captioner
from attnkit.apps.captioning.scenes import BOS, EOS, PAD, Vocabulary, as_arrays
from attnkit.engine.checkpoint import load_model
from attnkit.engine.rundir import RunDir, missing_config


@dataclass
class Caption:
    """One generated caption: its words and the attention map ``(T, L)`` used for each."""

    words: list[str]
    alpha: np.ndarray

    @property
    def text(self) -> str:
        return " ".join(self.words)


@torch.no_grad()
def caption_images(model: Captioner, vocab: Vocabulary, images, max_len: int = 20, batch=256):
    """Greedy captions of ``images (N, 3, S, S)`` (tensor or array), with attention maps
    (decoded on the model's device)."""
    model.eval()
    device = next(model.parameters()).device
    images = torch.as_tensor(images, dtype=torch.float32)
    out: list[Caption] = []
    for start in range(0, images.size(0), batch):
        dec = model.greedy(images[start : start + batch].to(device), BOS, EOS, max_len)
        for tokens, alpha in zip(dec.tokens.cpu(), dec.alpha.cpu(), strict=True):
            words = vocab.decode(tokens.tolist())
            out.append(Caption(words, alpha[: len(words)].numpy()))
    return out


def read_image(path: str | Path, canvas: int) -> np.ndarray:
    """An RGB picture as ``(canvas, canvas, 3)`` floats in [0, 1] (resized if needed)."""
    from PIL import Image, UnidentifiedImageError

    from attnkit.errors import DataError
    from attnkit.textfiles import check_file

    path = check_file(path)  # missing, or a directory: named
    try:
        with Image.open(path) as img:
            img = img.convert("RGB")
            if img.size != (canvas, canvas):
                img = img.resize((canvas, canvas), Image.Resampling.BILINEAR)
            return np.asarray(img, dtype=np.float32) / 255.0
    except UnidentifiedImageError:
        raise DataError(f"{path}: not an image Pillow can read") from None
    except Image.DecompressionBombError as err:  # Pillow's message gives the declared pixels
        raise DataError(f"{path}: image too large to read ({err})") from None
    except (OSError, ValueError, SyntaxError) as err:  # truncated or corrupt image data
        raise DataError(f"{path}: cannot read the image ({err})") from None


def caption_scenes(model, vocab, scenes, max_len: int = 20) -> list[Caption]:
    """:func:`caption_images` of generated :class:`~attnkit.apps.captioning.scenes.Scene`
    objects."""
    return caption_images(model, vocab, as_arrays(scenes), max_len)


def build(cfg: CaptioningConfig, vocab: Vocabulary) -> Captioner:
    value_head = cfg.model.attention == "hard" and cfg.train.baseline == "learned"
    return Captioner(cfg.model, len(vocab.words), PAD, value_head=value_head)


def load_captioner(run_dir: str | Path) -> tuple[CaptioningConfig, Vocabulary, Captioner]:
    """Load a trained run: its config, vocabulary and best model (in eval mode); a run of
    another kind is refused in one line."""
    from attnkit.apps import require_kind

    run = RunDir(run_dir)
    if not run.config.is_file():
        raise FileNotFoundError(missing_config(run.root))
    require_kind(run_dir, "captioning")
    cfg = load_experiment(run.config)
    vocab = Vocabulary.load(run.root / "vocab.json")
    model = build(cfg, vocab)
    load_model(model, run.model)
    return cfg, vocab, model.eval()
