"""Pictures of a segmentation: the input, the truth, the prediction and where each attention
gate lets the skip connection through (its coefficients α over the image, Oktay et al. Fig. 3).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F


def upsample(gate: torch.Tensor | np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """A gate's coefficients ``(h, w)`` resized to the image's ``size`` (bilinear)."""
    g = torch.as_tensor(np.asarray(gate), dtype=torch.float32)[None, None]  # (1, 1, h, w)
    return F.interpolate(g, size=size, mode="bilinear", align_corners=False)[0, 0].numpy()


def plot_segmentation(
    image: np.ndarray,
    prob: np.ndarray,
    path: str | Path,
    *,
    truth: np.ndarray | None = None,
    gates: list[np.ndarray] = (),
    title: str = "",
) -> Path:
    """Write a PNG with one panel each: ``image (H, W)``, ``truth (H, W)`` (if given), the
    predicted probability ``prob (H, W)``, and each gate ``(h, w)`` over the image (finest
    first; the colour is α in [0, 1], on the same scale for every gate)."""
    from attnkit.runtime import files_backend

    files_backend()
    import matplotlib.pyplot as plt

    panels = [("input", image, "gray", None)]
    if truth is not None:
        panels.append(("truth", truth, "gray", (0, 1)))
    panels.append(("prediction", prob, "gray", (0, 1)))
    for level, gate in enumerate(gates):
        panels.append(
            (f"gate {level + 1} ({gate.shape[0]}×{gate.shape[1]})", gate, "magma", (0, 1))
        )
    fig, axes = plt.subplots(1, len(panels), figsize=(2.4 * len(panels), 2.7), squeeze=False)
    for ax, (name, data, cmap, limits) in zip(axes[0], panels, strict=True):
        if name.startswith("gate"):
            ax.imshow(image, cmap="gray")
            shown = ax.imshow(upsample(data, image.shape), cmap=cmap, vmin=0, vmax=1, alpha=0.6)
        else:
            lo, hi = limits or (None, None)
            shown = ax.imshow(data, cmap=cmap, vmin=lo, vmax=hi, interpolation="nearest")
        ax.set_title(name, fontsize=9)
        ax.set_axis_off()
    if gates:
        fig.colorbar(shown, ax=axes[0, -1], fraction=0.046, label="gate α")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
