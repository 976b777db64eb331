"""Training throughput of attnkit's Attention U-Net against MONAI's ``AttentionUnet`` of the
same widths, on the same images and threads (issue 18's speed peer).

    OMP_NUM_THREADS=2 python benchmarks/segmentation_speed.py --out FILE

Each round times one training step (forward, BCE + Dice loss, backward, Adam) of every model
on the same batch, the order rotated per round, so the images-per-second ratio is measured
under the same load; the report gives medians and the per-round ratios (target: attnkit's
throughput at least MONAI's, ratio >= 1.0). MONAI is a test dependency (``pip install monai``).
``--channels-last`` adds attnkit's Attention U-Net in the NHWC layout (``train.channels_last``)
and its ratio to the default layout; ``--bf16`` runs every forward under bfloat16 autocast.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

from attnkit.apps.segmentation.model import UNet, UNetConfig
from attnkit.apps.segmentation.shapes import generate_shapes
from attnkit.apps.segmentation.training import dice_loss

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script, too
from benchmarks.suites.measure import interleave  # noqa: E402
from benchmarks.suites.report import Comparison, Report, Result, script_command  # noqa: E402

GATED = "attnkit Attention U-Net"
GATED_NHWC = "attnkit Attention U-Net, channels last"


def models(channels: tuple[int, ...]) -> dict[str, torch.nn.Module]:
    """attnkit's Attention U-Net and U-Net and MONAI's AttentionUnet, all with ``channels``."""
    from monai.networks.nets import AttentionUnet

    torch.manual_seed(0)
    built = {
        GATED: UNet(UNetConfig(channels=channels, gates=True)),
        "attnkit U-Net": UNet(UNetConfig(channels=channels, gates=False)),
        "MONAI AttentionUnet": AttentionUnet(
            spatial_dims=2,
            in_channels=1,
            out_channels=1,
            channels=channels,
            strides=(2,) * (len(channels) - 1),
        ),
    }
    return built


def step_fn(model, images, masks, bf16: bool = False):
    """One training step of ``model`` (its logits: attnkit's ``.logits`` or MONAI's tensor)."""
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()

    def step() -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            out = model(images)
        logits = (out.logits if hasattr(out, "logits") else out).float()  # (B, 1, H, W)
        bce = F.binary_cross_entropy_with_logits(logits, masks)
        loss = bce + dice_loss(logits, masks).mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()

    return step


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--size", type=int, default=128, help="image side in pixels")
    parser.add_argument("--channels", type=int, nargs="+", default=[16, 32, 64, 128])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None, help="write the report here (JSON)")
    parser.add_argument("--channels-last", action="store_true", help="also the NHWC layout")
    parser.add_argument("--bf16", action="store_true", help="bfloat16 autocast for every model")
    args = parser.parse_args(argv)
    report = Report(
        "segmentation-speed", script_command("benchmarks/segmentation_speed.py", argv), vars(args)
    )
    images, masks = generate_shapes(args.batch, args.size, seed=0)
    images, masks = torch.from_numpy(images).float(), torch.from_numpy(masks).float()
    built = models(tuple(args.channels))
    steps = {name: step_fn(m, images, masks, args.bf16) for name, m in built.items()}
    if args.channels_last:  # the same weights in NHWC, fed NHWC images
        nhwc = copy.deepcopy(built[GATED]).to(memory_format=torch.channels_last)
        built[GATED_NHWC] = nhwc
        images_nhwc = images.contiguous(memory_format=torch.channels_last)  # (B, 1, H, W)
        steps[GATED_NHWC] = step_fn(nhwc, images_nhwc, masks, args.bf16)
    times = interleave(steps, args.repeats, warmup=2)
    case = f"train step B{args.batch} {args.size}x{args.size} channels {args.channels}"
    print(f"threads={torch.get_num_threads()} repeats={args.repeats} (medians)")
    for name, seconds in times.items():
        n_params = sum(p.numel() for p in built[name].parameters())
        rate = [args.batch / s for s in seconds]
        metrics = {"images/s": statistics.median(rate), "parameters": n_params}
        report.results.append(Result(case, name, {"channels": args.channels}, seconds, metrics))
        print(f"{name:<26} {statistics.median(rate):8.1f} images/s  {n_params:>9,} parameters")
    peer = times["MONAI AttentionUnet"]
    for ours in (GATED, "attnkit U-Net"):
        ratios = [m / a for a, m in zip(times[ours], peer, strict=True)]  # throughput ratio
        met = statistics.median(ratios) >= 1.0 if ours == GATED else None
        report.comparisons.append(
            Comparison(
                case,
                ours,
                "MONAI AttentionUnet",
                ratios,
                kind="throughput ours/reference (higher is better)",
                target=">= 1.0" if met is not None else None,
                met=met,
            )
        )
        print(f"{ours} / MONAI: {statistics.median(ratios):.2f}x images/s")
    if args.channels_last:
        ratios = [c / n for c, n in zip(times[GATED], times[GATED_NHWC], strict=True)]
        report.comparisons.append(
            Comparison(
                case, GATED_NHWC, GATED, ratios, kind="throughput NHWC/NCHW (higher is better)"
            )
        )
        print(f"{GATED_NHWC} / default layout: {statistics.median(ratios):.2f}x images/s")
    if args.out is not None:
        report.write(args.out)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
