"""Suite ``kernels``: attnkit's attention against PyTorch's own, per length, dtype and mask.

Pairs (same inputs, same parameters, run interleaved):

- :func:`attnkit.attention.attend` without weights (it calls the fused kernel) vs
  ``F.scaled_dot_product_attention`` with the same boolean mask (True = may attend in both);
  ``attend`` with weights (the readable path) and chunked (``attend_chunked``) are timed beside.
- :class:`attnkit.attention.MultiHeadAttention` vs ``nn.MultiheadAttention`` (``batch_first``,
  its mask convention is the opposite: True = masked). Forward runs in ``eval()`` under
  ``no_grad`` so that PyTorch takes its inference fast path when weights are not requested;
  with weights it is called with ``average_attn_weights=False`` (per-head weights, as attnkit
  returns them).

FLOPs are counted dense (a causal mask still counts all ``L^2`` scores, which is what both
sides compute with a mask tensor): attention ``4 B H L^2 Dh``, projections ``8 B L D^2``,
forward+backward three times the forward.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from attnkit import devices
from attnkit.attention import MultiHeadAttention, attend, causal_mask, key_padding_mask
from attnkit.attention.functional import attend_chunked
from benchmarks.suites.measure import interleave, matmul_peak, peak_rss
from benchmarks.suites.report import Comparison, Report, Result

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


@dataclass
class KernelOptions:
    lengths: tuple[int, ...] = (128, 512, 1024, 2048, 4096)
    batch: int = 2
    heads: int = 4
    head_dim: int = 64
    dtypes: tuple[str, ...] = ("fp32", "bf16")
    modes: tuple[str, ...] = ("fwd", "fwd+bwd")
    masks: tuple[str, ...] = ("causal", "padding")
    repeats: int = 3
    chunk: int = 256
    peak_size: int = 2048
    memory: bool = True
    device: str = "cpu"  # attnkit.devices: auto, cpu, cuda, cuda:N, mps


def _masks(kind: str, b: int, length: int):
    """(attnkit/SDPA mask, nn.MultiheadAttention keyword arguments)."""
    if kind == "causal":
        ours = causal_mask(length)  # (L, L), True = may attend
        return ours, {"attn_mask": ~ours}
    if kind not in ("causal", "padding", "none"):
        raise ValueError(f"unknown mask {kind!r}; choose causal, padding or none")
    if kind == "padding":
        keep = torch.ones(b, length, dtype=torch.bool)
        keep[b // 2 :, length - length // 4 :] = False  # half the batch: last quarter padded
        return key_padding_mask(keep), {"key_padding_mask": ~keep}  # (B, 1, 1, L)
    return None, {}


def _torch_twin(ours: MultiHeadAttention, dtype) -> torch.nn.MultiheadAttention:
    d = ours.d_model
    ref = torch.nn.MultiheadAttention(d, ours.num_heads, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(
            torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight])
        )
        ref.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
        ref.out_proj.load_state_dict(ours.out_proj.state_dict())
    return ref.to(dtype).eval()


def _runner(fn, backward: bool, *inputs):
    """A closure that runs ``fn`` forward (under no_grad) or forward+backward, and waits
    for the device to finish (CUDA runs asynchronously: a host clock would time the launch)."""
    sync = _synchronizer(inputs[0].device)
    if not backward:

        def forward():
            with torch.no_grad():
                out = fn()
            sync()
            return out

        return forward

    def step():
        for x in inputs:
            x.grad = None
        out = fn()
        out.float().sum().backward()
        sync()

    return step


def _synchronizer(device: torch.device):
    if device.type == "cuda":
        return lambda: torch.cuda.synchronize(device)
    if device.type == "mps":
        return torch.mps.synchronize
    return lambda: None


def _case_functions(opts: KernelOptions, dtype, mode: str, mask_kind: str, length: int):
    b, h, dh = opts.batch, opts.heads, opts.head_dim
    backward = mode == "fwd+bwd"
    device = devices.pick(opts.device)
    g = torch.Generator().manual_seed(length)
    q, k, v = (torch.randn(b, h, length, dh, generator=g).to(device, dtype) for _ in range(3))
    x = torch.randn(b, length, h * dh, generator=g).to(device, dtype)
    for t in (q, k, v, x):
        t.requires_grad_(backward)
    mask, torch_kwargs = _masks(mask_kind, b, length)
    mask = None if mask is None else mask.to(device)
    torch_kwargs = {key: value.to(device) for key, value in torch_kwargs.items()}
    torch.manual_seed(0)
    mha = MultiHeadAttention(h * dh, h).to(device, dtype).eval()
    ref = _torch_twin(mha, dtype).to(device)
    fns = {
        "attend": lambda: attend(q, k, v, mask, need_weights=False).context,
        "sdpa": lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
        "attend+weights": lambda: attend(q, k, v, mask).context,
        "MHA": lambda: mha(x, mask=mask).context,
        "nn.MHA": lambda: ref(x, x, x, need_weights=False, **torch_kwargs)[0],
        "MHA+weights": lambda: mha(x, mask=mask, need_weights=True).context,
        "nn.MHA+weights": lambda: ref(
            x, x, x, need_weights=True, average_attn_weights=False, **torch_kwargs
        )[0],
    }
    if not backward:  # the memory-bounded mode is for inference and inspection
        fns["attend+weights chunked"] = lambda: attend_chunked(q, k, v, mask, chunk=opts.chunk)
        fns["MHA+weights chunked"] = lambda: (
            mha(x, mask=mask, need_weights=True, weights_chunk=opts.chunk).context
        )
    runners = {name: _runner(fn, backward, q, k, v, x) for name, fn in fns.items()}
    core = 4 * b * h * length**2 * dh
    proj = 8 * b * length * (h * dh) ** 2
    factor = 3 if backward else 1
    flops = {name: factor * (core + (proj if "MHA" in name else 0)) for name in fns}
    return runners, flops


COMPARE = (
    ("attend", "sdpa", None),
    ("MHA", "nn.MHA", 1.05),
    ("MHA+weights", "nn.MHA+weights", 1.0),
    ("MHA+weights chunked", "nn.MHA+weights", 1.0),
)


def run_kernels(opts: KernelOptions, report: Report) -> None:
    peaks = {}
    for name in opts.dtypes:
        gflops = matmul_peak(DTYPES[name], opts.peak_size, device=devices.pick(opts.device))
        peaks[name] = statistics.median(gflops)
        report.results.append(
            Result(
                f"matmul peak {name} n={opts.peak_size}",
                "torch.mm",
                {"dtype": name, "n": opts.peak_size},
                [2 * opts.peak_size**3 / (g * 1e9) for g in gflops],
                {"GFLOP/s": peaks[name]},
            )
        )
    for name in opts.dtypes:
        for mode in opts.modes:
            for mask_kind in opts.masks:
                for length in opts.lengths:
                    _run_case(opts, report, name, mode, mask_kind, length, peaks[name])


def _run_case(opts, report, dtype_name, mode, mask_kind, length, peak) -> None:
    runners, flops = _case_functions(opts, DTYPES[dtype_name], mode, mask_kind, length)
    case = f"{dtype_name} {mode} {mask_kind} L={length}"
    memory = {}
    if opts.memory and devices.pick(opts.device).type == "cpu":  # host memory: the CPU only
        # one untimed call each, sampled, doubles as the warm-up
        memory = {name: peak_rss(fn) for name, fn in runners.items()}
    times = interleave(runners, opts.repeats, warmup=0 if memory else 1)
    params = {
        "dtype": dtype_name,
        "mode": mode,
        "mask": mask_kind,
        "L": length,
        "B": opts.batch,
        "H": opts.heads,
        "Dh": opts.head_dim,
    }
    for name, ts in times.items():
        median = statistics.median(ts)
        gflops = flops[name] / median / 1e9
        metrics = {"GFLOP/s": gflops, "of_peak": gflops / peak}
        if name in memory:
            metrics["peak_MB"] = memory[name] / 2**20
        report.results.append(Result(case, name, params, ts, metrics))
    for ours, ref, target in COMPARE:
        if ours not in times:
            continue
        ratios = [a / b for a, b in zip(times[ours], times[ref], strict=True)]
        met = None if target is None else statistics.median(ratios) <= target
        label = None if target is None else f"<= {target}"
        report.comparisons.append(Comparison(case, ours, ref, ratios, target=label, met=met))
