"""Attention maps over the input image for Hugging Face ViT-style models (ViT, DeiT, DINOv2).

A Vision Transformer (Dosovitskiy et al. 2021, eq. (1)) reads ``prefix`` tokens (its class
token; DeiT's distillation token too, Touvron et al. 2021, §4; registers, Darcet et al. 2024)
and then ``grid * grid`` patches. :func:`image_maps` runs the model once with eager attention
(:func:`attnkit.hf.eager.eager_attention`: the fused kernels return no weights) and
``output_attentions=True`` and gives, per image, two patch grids of the class token:

- its attention rollout (Abnar & Zuidema 2020, eq. (1), :func:`attention_rollout`): the share
  of each input patch in the top layer's class token, through every layer;
- the last layer's attention row (the mean of its heads, or one head).

:func:`plot_attention_maps` draws them over the images with
:func:`attnkit.interpret.image_maps.plot_image_maps`; :func:`draw_folder` does it for a saved
model folder (its image processor beside it) and a folder or list of image files
(``attnkit vision rollout --hf MODEL_DIR --images FOLDER``). transformers is imported only by
:func:`load_image_model`; timm models are not handled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from attnkit.errors import DataError
from attnkit.hf.record import run_eager
from attnkit.interpret.heatmap import as_array
from attnkit.interpret.image_maps import patch_grid, picture_path, plot_image_maps
from attnkit.interpret.rollout import attention_rollout
from attnkit.textfiles import list_files, read_listed

PROCESSOR = "preprocessor_config.json"  # the image processor's file beside config.json


@dataclass
class ImageMaps:
    """What :func:`image_maps` returns: the class token's ``rollout`` and ``last`` layer maps,
    each ``(B, grid, grid)``; the ``prefix`` tokens dropped; the predicted ``labels`` (a
    classification model with ``config.id2label``; else None); the last layer's ``head``
    (None: the mean of its heads)."""

    rollout: np.ndarray
    last: np.ndarray
    prefix: int
    labels: list[str] | None
    head: int | None = None


def prefix_tokens(model) -> int:
    """The tokens before the patches, read from the model's embeddings: the class token
    (``cls_token``), DeiT's ``distillation_token`` and DINOv2's ``register_tokens`` (1 for ViT,
    2 for DeiT). A model without a class token is a ``ValueError``."""
    base = getattr(model, "base_model", model)
    embeddings = getattr(base, "embeddings", None)
    if getattr(embeddings, "cls_token", None) is None:
        raise ValueError(
            f"{type(model).__name__} is not a ViT-style image model: its embeddings have no "
            "class token (cls_token)"
        )
    count = 1 + (getattr(embeddings, "distillation_token", None) is not None)
    registers = getattr(embeddings, "register_tokens", None)
    return count + (0 if registers is None else int(registers.shape[1]))


def _labels(model, logits) -> list[str] | None:
    """The predicted class names of a classifier's ``logits (B, classes)``, or None."""
    names = getattr(getattr(model, "config", None), "id2label", None)
    if logits is None or logits.ndim != 2 or not names:
        return None
    return [str(names.get(int(c), c)) for c in logits.argmax(-1).tolist()]


def image_maps(model, pixel_values, residual: float = 0.5, head: int | None = None) -> ImageMaps:
    """The class token's rollout and last-layer maps of each image (Abnar & Zuidema 2020, §3.1).

    Args:
        model: a transformers ViT-style model (``ViTModel``, ``ViTForImageClassification``,
            ``DeiTModel``, ``DeiTForImageClassificationWithTeacher``, ...).
        pixel_values: ``(B, C, H, W)``, as its image processor makes them.
        residual: ``r`` of the rollout's ``A = (1 - r) mean_h(W) + r I``.
        head: the last layer's head to show; None: the mean of its heads.
    """
    param = next(model.parameters())
    x = torch.as_tensor(pixel_values).to(device=param.device, dtype=param.dtype)
    if x.ndim != 4:
        raise ValueError(f"pixel_values must be (B, C, H, W), got {tuple(x.shape)}")
    prefix = prefix_tokens(model)
    out = run_eager(model, {"pixel_values": x})  # eval mode, eager attention, no grad
    layers = [as_array(a) for a in out.attentions]  # L x (B, H, T, T)
    heads = layers[-1].shape[1]
    if head is not None and not 0 <= head < heads:
        raise ValueError(f"head {head}: the last layer has {heads} heads (0 to {heads - 1})")
    rollout, last = [], []
    for b in range(x.shape[0]):
        r = attention_rollout([a[b] for a in layers], residual)  # (T, T)
        rollout.append(patch_grid(r, prefix))  # (grid, grid)
        top = layers[-1][b]  # (H, T, T)
        last.append(patch_grid(top.mean(0) if head is None else top[head], prefix))
    labels = _labels(model, getattr(out, "logits", None))
    return ImageMaps(np.stack(rollout), np.stack(last), prefix, labels, head)


def _scaled(pixel_values) -> np.ndarray:
    """Each image ``(C, H, W)`` scaled to [0, 1] on its own (for normalised pixel values)."""
    x = as_array(pixel_values)  # (B, C, H, W)
    low = x.min(axis=(1, 2, 3), keepdims=True)  # (B, 1, 1, 1)
    high = x.max(axis=(1, 2, 3), keepdims=True)  # (B, 1, 1, 1)
    return (x - low) / np.maximum(high - low, 1e-12)


def plot_attention_maps(
    model,
    pixel_values,
    path: str | Path,
    *,
    images=None,
    names: Sequence[str] | None = None,
    residual: float = 0.5,
    head: int | None = None,
) -> Path:
    """Each image twice, with its class token's rollout over it and then its last layer's
    attention (:func:`image_maps`); a PNG, SVG or PDF. ``images (B, C, H, W)`` in [0, 1] are
    what is shown (default: ``pixel_values``, each scaled to [0, 1]: :func:`shown_images`
    undoes a processor's normalisation instead); ``names`` title them."""
    path = picture_path(path)
    maps = image_maps(model, pixel_values, residual, head)
    count = maps.rollout.shape[0]
    shown = _scaled(pixel_values) if images is None else as_array(images)  # (B, C, H, W)
    names = [f"image {i + 1}" for i in range(count)] if names is None else list(names)
    if len(names) != count or len(shown) != count:
        raise ValueError(
            f"{count} images: give as many names and images ({len(names)}, {len(shown)} given)"
        )
    last = "last layer" if head is None else f"last layer, head {head}"
    panels, grids, titles = [], [], []
    for i, name in enumerate(names):
        name = name if len(name) <= 18 else name[:17] + "…"
        label = "" if maps.labels is None else f"→{maps.labels[i]}"
        panels += [shown[i], shown[i]]
        grids += [maps.rollout[i], maps.last[i]]
        titles += [f"{name}{label}", last]
    heads = "mean of heads" if head is None else f"head {head}"
    suptitle = (
        "class-token attention over the patches, each image twice: rollout (Abnar & Zuidema "
        f"2020), then the last layer ({heads}); the redder, the larger the share (per image)"
    )
    return plot_image_maps(panels, grids, path, titles=titles, suptitle=suptitle)


def load_image_model(folder: str | Path, quiet: bool = False):
    """A saved Hugging Face ViT-style model (the class its ``config.json`` names under
    ``architectures``, else ``AutoModel``) and the image processor saved beside it
    (``AutoImageProcessor``). Missing files and a model without a class token are
    :class:`DataError` s naming the file. ``quiet`` turns transformers' warnings and progress
    bars off for the process (a command line's choice)."""
    folder = Path(folder)
    config_file, processor_file = folder / "config.json", folder / PROCESSOR
    if not folder.is_dir():
        raise DataError(f"{folder}: no such folder (a Hugging Face model folder)")
    for file, what in ((config_file, "the model's"), (processor_file, "the image processor's")):
        if not file.is_file():
            raise DataError(f"{file}: missing ({what} file; save_pretrained(MODEL_DIR) writes it)")
    try:
        import transformers
    except ImportError:
        raise ImportError(
            "a Hugging Face model needs transformers: pip install 'attnkit[hf]'"
        ) from None
    if quiet:
        transformers.logging.set_verbosity_error()  # not the processor's torchvision notice
        transformers.logging.disable_progress_bar()  # nor "Loading weights" on every call
    try:
        config = transformers.AutoConfig.from_pretrained(folder)
        kind = getattr(transformers, (config.architectures or ["AutoModel"])[0], None)
        if not (isinstance(kind, type) and hasattr(kind, "from_pretrained")):
            kind = transformers.AutoModel  # an architecture this version does not know
        model = kind.from_pretrained(folder)
        processor = transformers.AutoImageProcessor.from_pretrained(folder)
    except (OSError, ValueError, KeyError) as err:
        raise DataError(f"{folder}: cannot load ({type(err).__name__}: {err})") from None
    try:
        prefix_tokens(model)
    except ValueError as err:
        raise DataError(f"{config_file}: model_type {config.model_type!r}: {err}") from None
    if getattr(config, "num_channels", 3) != 3:
        raise DataError(f"{config_file}: num_channels {config.num_channels}; RGB images need 3")
    return model.eval(), processor


def read_rgb(path: str | Path) -> np.ndarray:
    """One image file as ``(H, W, 3)`` uint8 RGB (an image processor's input). An unreadable
    file is a :class:`DataError` naming it."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as img:
            return np.asarray(img.convert("RGB"))  # (H, W, 3)
    except Image.DecompressionBombError as err:
        raise DataError(f"{path}: image too large to read ({err})") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as err:
        raise DataError(f"{path}: cannot read this image ({type(err).__name__}: {err})") from None


def shown_images(pixel_values, processor) -> np.ndarray:
    """``pixel_values (B, C, H, W)`` back in [0, 1]: the processor's normalisation undone
    (``x * std + mean``), and its 1/255 rescaling where it was switched off."""
    x = as_array(pixel_values)  # (B, C, H, W)
    if getattr(processor, "do_normalize", False):
        mean = np.asarray(processor.image_mean, dtype=float).reshape(1, -1, 1, 1)  # (1, C, 1, 1)
        std = np.asarray(processor.image_std, dtype=float).reshape(1, -1, 1, 1)  # (1, C, 1, 1)
        x = x * std + mean
    if not getattr(processor, "do_rescale", True):
        x = x / 255.0
    return np.clip(x, 0.0, 1.0)


def draw_folder(
    model_dir: str | Path,
    images: str | Path,
    path: str | Path,
    count: int = 16,
    residual: float = 0.5,
    head: int | None = None,
    quiet: bool = False,
) -> Path:
    """:func:`plot_attention_maps` of the model saved in ``model_dir`` on the first ``count``
    image files of ``images`` (a folder, sorted by name, or a text file listing them one a
    line: :func:`attnkit.textfiles.list_files`), prepared by the folder's image processor."""
    path = picture_path(path)
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    model, processor = load_image_model(model_dir, quiet)
    files = list_files(images)[:count]
    arrays = read_listed(files, read_rgb)  # n x (H, W, 3)
    pixel_values = processor(images=arrays, return_tensors="pt")["pixel_values"]  # (n, 3, S, S)
    return plot_attention_maps(
        model,
        pixel_values,
        path,
        images=shown_images(pixel_values, processor),
        names=[f.path.name for f in files],
        residual=residual,
        head=head,
    )
