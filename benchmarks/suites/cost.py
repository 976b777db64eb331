"""Suite ``cost``: a self-attention layer against an LSTM layer over length n and width d.

The lectures' claim (Vaswani et al. 2017, Table 1): self-attention does ``O(n^2 d)`` work, a
recurrent layer ``O(n d^2)``, so attention is cheaper while ``n < 4d`` (``2d`` once the four
projections are counted). Here both layers are timed, forward at batch 1 and a training step
(forward+backward) at batch ``TRAIN_BATCH``, and set beside the FLOP prediction of
:mod:`attnkit.attention.cost` (full layer: projections included). The measured crossover is
the length where the two times cross (log-linear interpolation between measured lengths).
"""

from __future__ import annotations

import math
import statistics

import torch

from attnkit.attention import MultiHeadAttention
from attnkit.attention.cost import crossover_length, recurrent_cost, self_attention_cost
from benchmarks.suites.measure import interleave
from benchmarks.suites.report import Comparison, Report, Result

TRAIN_BATCH = 8
HEADS = 8


def _layers(d: int):
    torch.manual_seed(0)
    return MultiHeadAttention(d, HEADS if d % HEADS == 0 else 1), torch.nn.LSTM(
        d, d, batch_first=True
    )


def _fns(attention, lstm, x: torch.Tensor, train: bool):
    def attn():
        out = attention(x).context
        if train:
            out.sum().backward()

    def rnn():
        out = lstm(x)[0]
        if train:
            out.sum().backward()

    if train:
        return {"self-attention": attn, "LSTM": rnn}
    return {"self-attention": torch.no_grad()(attn), "LSTM": torch.no_grad()(rnn)}


def measured_crossover(lengths, ratios) -> float | None:
    """The n where LSTM time / attention time last falls through 1 (beyond it attention is
    the costlier layer), interpolated in log n; None when it never does. The last crossing,
    not the first: at short lengths both layers take well under a millisecond and the ratio
    is at its noisiest."""
    pairs = list(zip(lengths, ratios, strict=True))
    found = None
    for (n0, r0), (n1, r1) in zip(pairs, pairs[1:], strict=False):
        if r0 >= 1 > r1:
            f = (math.log(r0)) / (math.log(r0) - math.log(r1))
            found = math.exp(math.log(n0) + f * (math.log(n1) - math.log(n0)))
    return found


def run_cost(opts, report: Report) -> None:
    widths = (16, 32) if opts.tiny else (256, 512)
    lengths = opts.lengths or ((8, 16, 32) if opts.tiny else (64, 128, 256, 512, 1024, 2048))
    series = []
    for mode, batch in (("forward b=1", 1), (f"train b={TRAIN_BATCH}", TRAIN_BATCH)):
        for d in widths:
            series.append(_series(opts, report, mode, batch, d, lengths))
    report.options["series"] = series
    for s in series:
        found = (
            "beyond the lengths measured"
            if s["measured_crossover"] is None
            else (f"n = {s['measured_crossover']:.0f}")
        )
        report.notes.append(
            f"{s['mode']}, d={s['d']}: measured crossover {found}; FLOPs predict "
            f"n = {s['predicted_crossover']} (projections included)"
        )
    if opts.plot:
        plot_crossover(series, opts.plot)
        report.notes.append(f"plot: {opts.plot}")


def _series(opts, report: Report, mode: str, batch: int, d: int, lengths) -> dict:
    """One width and mode over the lengths: timings into ``report``, the ratio curve out."""
    train = mode.startswith("train")
    attention, lstm = _layers(d)
    attention.train(train)
    lstm.train(train)
    ratios, used = [], []
    for n in lengths:
        if train and n > 1024 and not opts.tiny:
            continue  # the LSTM's training step at n=2048 costs minutes here
        x = torch.randn(batch, n, d, requires_grad=train)
        times = interleave(_fns(attention, lstm, x, train), opts.repeats)
        predicted = {
            "self-attention": self_attention_cost(n, d, include_projections=True).flops,
            "LSTM": recurrent_cost(n, d).flops,
        }
        case, params = f"{mode} d={d} n={n}", {"mode": mode, "batch": batch, "d": d, "n": n}
        for name, ts in times.items():
            gflop = predicted[name] * batch * (3 if train else 1) / 1e9
            extra = {
                "GFLOP": gflop,
                "predicted_ratio": predicted["LSTM"] / predicted["self-attention"],
            }
            report.results.append(Result(case, name, params, ts, extra))
        per_repeat = [a / b for a, b in zip(times["LSTM"], times["self-attention"], strict=True)]
        kind = "time LSTM/self-attention (above 1: attention cheaper)"
        report.comparisons.append(Comparison(case, "LSTM", "self-attention", per_repeat, kind=kind))
        ratios.append(statistics.median(per_repeat))
        used.append(n)
    return {
        "mode": mode,
        "d": d,
        "lengths": used,
        "measured_ratio": ratios,
        "predicted_ratio": [
            recurrent_cost(n, d).flops / self_attention_cost(n, d, include_projections=True).flops
            for n in used
        ],
        "measured_crossover": measured_crossover(used, ratios),
        "predicted_crossover": crossover_length(d, include_projections=True),
    }


def plot_crossover(series: list[dict], path: str) -> None:
    """Measured LSTM/attention time ratio against the FLOP prediction, per width and mode."""
    from attnkit.runtime import files_backend

    files_backend()
    import matplotlib.pyplot as plt

    modes = sorted({s["mode"] for s in series})
    fig, axes = plt.subplots(1, len(modes), figsize=(6 * len(modes), 4.2), squeeze=False)
    for ax, mode in zip(axes[0], modes, strict=True):
        for i, s in enumerate(x for x in series if x["mode"] == mode):
            color = f"C{i}"
            ax.plot(
                s["lengths"], s["measured_ratio"], "o-", color=color, label=f"d={s['d']} measured"
            )
            ax.plot(
                s["lengths"], s["predicted_ratio"], "--", color=color, label=f"d={s['d']} FLOPs"
            )
            if s["measured_crossover"]:
                ax.axvline(s["measured_crossover"], color=color, lw=0.8, alpha=0.6)
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="sequence length n",
            ylabel="LSTM time / self-attention time",
            title=mode,
        )
        ax.legend(fontsize=8)
    fig.suptitle(
        "Self-attention layer (8 heads, projections) vs LSTM layer: above 1, attention is cheaper",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
