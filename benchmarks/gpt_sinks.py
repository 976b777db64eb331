"""Attention sinks in a small character GPT (Xiao et al. 2023, "Efficient Streaming Language
Models with Attention Sinks", §3: models put much of their attention on the first tokens, so a
window cache that drops them breaks down, and keeping 4 "sink" tokens repairs it).

    OMP_NUM_THREADS=1 python benchmarks/gpt_sinks.py --run runs/gpt-sinks-rope \
        --out benchmarks/results/gpt-sinks.json --figure docs/gpt-sinks.png

Without ``--run`` it trains one first (``attnkit train configs/shakespeare-gpt-cpu.yaml
--set model.positions=rope``: 4 layers, 4 heads, 128 wide, context 64, 2,000 updates).

1. **First-position share**: each layer's and head's mean weight on position 0 over the queries
   ``t >= 1`` of random 64-character validation blocks, beside a uniform distribution's.
2. **Loss against position**, teacher-forced one character at a time through the KV cache, on
   ``--stretches`` stretches of ``--length`` validation characters (far past the context):
   ``full`` (every position cached), ``window`` (the last ``W`` positions, the model's
   ``window``), ``window+sinks`` (and the first 4, attnkit's ``sinks``: keys keep their absolute
   positions, so a sink is rotated as ``t`` positions away), ``streaming`` (StreamingLLM as
   published, §3.2: positions within the cache, 4 sinks + ``W - 4`` recent, the sinks' keys
   re-rotated each step to sit just before the oldest kept key; emulated here on attnkit's
   cache) and ``recompute`` (a fresh forward of the last ``W`` characters at every position:
   the sliding-window-with-recomputation baseline). Averaged over position buckets.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import torch
import torch.nn.functional as F

import attnkit
from attnkit.apps.gpt.data import read_corpus
from attnkit.attention.cache import KVCache
from attnkit.attention.rotary import rotate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script, too
from benchmarks.suites.report import Report, Result, script_command  # noqa: E402

EDGES = (0, 64, 256, 1024, 2048, 4096, 8192)
METHODS = ("full", "window", "window+sinks", "streaming", "recompute")


def trained_run(args) -> Path:
    """``--run``, or a run trained here with ``--positions`` (kept under ``runs/``)."""
    if args.run is not None:
        return args.run
    path = Path("runs") / f"gpt-sinks-{args.positions}"
    if not (path / "config.yaml").exists():
        cmd = ["attnkit", "train", "configs/shakespeare-gpt-cpu.yaml", "-o", str(path)]
        cmd += ["--set", f"model.positions={args.positions}"]
        cmd += ["--set", f"train.epochs={args.epochs}"]
        print("training:", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
    return path


@contextmanager
def model_window(model, window: int | None):
    """The model with ``cfg.window`` set to ``window`` inside the block."""
    before = model.cfg.window
    model.cfg.window = window
    try:
        yield model
    finally:
        model.cfg.window = before


@torch.no_grad()
def first_position_share(model, valid: torch.Tensor, block: int, count: int) -> dict:
    """Mean weight on key 0 per layer and head ``(L, H)`` over the queries ``t >= 1`` of
    ``count`` random validation blocks, and a uniform causal distribution's ``1 / (t + 1)``."""
    g = torch.Generator().manual_seed(0)
    starts = torch.randint(len(valid) - block, (count,), generator=g)  # (B,)
    ids = valid[starts[:, None] + torch.arange(block)]  # (B, T)
    with model_window(model, None):
        weights = model(ids, need_weights=True).weights  # L x (B, H, T, T)
    share = [w[:, :, 1:, 0].mean((0, 2)).tolist() for w in weights]  # L x (H,)
    uniform = (1 / torch.arange(2, block + 1, dtype=torch.float64)).mean()
    return {"per_layer_head": share, "uniform": float(uniform), "blocks": count, "block": block}


def relocated(caches: list[KVCache], originals: list, sinks: int, base: float) -> list:
    """StreamingLLM's positions within the cache: once a cache dropped ``d`` positions, its
    sink keys (rotated at ``0 .. S - 1`` when cached) are turned ``d`` further, to sit just
    before the oldest kept key (RoPE's rotations add: ``R_a R_b = R_{a+b}``)."""
    out = []
    for i, c in enumerate(caches):
        if not c.dropped:
            originals[i] = c.key[:, :, :sinks].clone()  # (B, H, S, Dh)
            out.append(c)
            continue
        turned = rotate(originals[i], torch.full((sinks,), c.dropped), base)  # (B, H, S, Dh)
        key = torch.cat([turned, c.key[:, :, sinks:]], 2)  # (B, H, S + W - 1, Dh)
        out.append(KVCache(key, c.value, c.dropped, c.sinks))
    return out


@torch.no_grad()
def stepwise(model, ids, window, sinks, streaming=False, share_from=64):
    """Teacher-forced loss ``(B, N)`` of ``ids (B, N + 1)`` one position at a time through the
    KV cache, and each layer's mean weight on the first ``S`` cached keys at ``t >= share_from``
    (the sinks; for ``full``, positions ``0 .. S - 1``)."""
    x, y = ids[:, :-1], ids[:, 1:]  # (B, N) each
    base = getattr(model.blocks[0].attn.position, "base", 10000.0)
    caches, originals, losses = None, [None] * len(model.blocks), []
    share = torch.zeros(len(model.blocks), dtype=torch.float64)
    counted = 0
    with model_window(model, window):
        for t in range(x.size(1)):
            record = sinks > 0 and t >= share_from
            step = x[:, t : t + 1]  # (B, 1)
            out = model(step, caches=caches, use_cache=True, sinks=sinks, need_weights=record)
            losses.append(F.cross_entropy(out.logits[:, 0], y[:, t], reduction="none"))  # (B,)
            if record:
                share += torch.stack([w[..., :sinks].sum(-1).mean() for w in out.weights])
                counted += 1
            caches = out.caches
            if streaming:
                caches = relocated(caches, originals, sinks, base)
    return torch.stack(losses, 1), (share / max(counted, 1)).tolist()  # (B, N), (L,)


@torch.no_grad()
def recompute(model, ids, window: int, chunk: int = 1024) -> torch.Tensor:
    """Loss ``(B, N)`` with a fresh forward of the last ``window`` characters at every position
    (the first ``window`` positions: one causal forward of the start)."""
    x, y = ids[:, :-1], ids[:, 1:]  # (B, N) each
    b, n = x.shape
    with model_window(model, None):
        head = model(x[:, :window]).logits  # (B, W, V)
        windows = x.unfold(1, window, 1)[:, 1:]  # (B, N - W, W): ends at W .. N - 1
        flat = windows.reshape(-1, window)  # (B * (N - W), W)
        last = [model(flat[i : i + chunk]).logits[:, -1] for i in range(0, len(flat), chunk)]
    logits = torch.cat([head, torch.cat(last).view(b, n - window, -1)], 1)  # (B, N, V)
    return F.cross_entropy(logits.transpose(1, 2), y, reduction="none")  # (B, N)


def buckets(losses: torch.Tensor) -> dict:
    """Mean nats/char and perplexity per position bucket of ``losses (B, N)``."""
    out, n = {}, losses.size(1)
    for lo, hi in zip(EDGES, EDGES[1:], strict=False):
        if lo >= n:
            break
        mean = float(losses[:, lo:hi].mean())
        out[f"{lo}-{min(hi, n)}"] = {"nats_per_char": mean, "perplexity": math.exp(mean)}
    return out


def figure(curves: dict, path: Path, title: str, smooth: int = 64) -> None:
    """Loss against position (a moving mean over ``smooth`` positions, over the stretches), and
    each method's difference from ``recompute``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def smoothed(losses: torch.Tensor) -> torch.Tensor:
        mean = losses.mean(0)[None, None]  # (1, 1, N)
        return F.avg_pool1d(mean, smooth, 1)[0, 0]  # (N - smooth + 1,)

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True, height_ratios=(3, 2))
    reference = smoothed(curves["recompute"]) if "recompute" in curves else None
    for name, losses in curves.items():
        line = smoothed(losses)
        where = torch.arange(len(line)) + smooth // 2
        top.plot(where, line, label=name, lw=1.2)
        if reference is not None:
            bottom.plot(where, line - reference, label=name, lw=1.2)
    for ax in (top, bottom):
        ax.axvline(64, color="grey", ls=":", lw=1)
    top.set(xscale="log", ylabel="loss (nats/char)", title=title)
    bottom.set(xlabel="position (characters)", ylabel="minus recompute")
    top.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def stretches(valid: torch.Tensor, length: int, count: int) -> torch.Tensor:
    """``count`` stretches of ``length + 1`` characters, evenly spaced over the text."""
    step = (len(valid) - length - 1) // max(count - 1, 1)
    starts = torch.arange(count) * step  # (B,)
    return valid[starts[:, None] + torch.arange(length + 1)]  # (B, N + 1)


def evaluate(model, ids, window: int, sinks: int, only: tuple[str, ...]) -> tuple:
    """Each method's losses ``(B, N)``, mean weight per layer on the first ``sinks`` keys and
    seconds."""
    plans = {
        "full": (None, 0, False),
        "window": (window, 0, False),
        "window+sinks": (window, sinks, False),
        "streaming": (window - sinks, sinks, True),
    }
    losses, shares, seconds = {}, {}, {}
    for name in only:
        print(f"{name} ...", flush=True)
        start = time.perf_counter()
        if name == "recompute":
            losses[name] = recompute(model, ids, window)
            seconds[name] = time.perf_counter() - start
            continue
        w, s, streaming = plans[name]
        if name == "full":  # the share of positions 0 .. S - 1, seen from far away
            w, s = None, sinks
        losses[name], share = stepwise(model, ids, w, s, streaming, share_from=window)
        seconds[name] = time.perf_counter() - start
        if s:
            shares[name] = share
    return losses, shares, seconds


def notes(args) -> list[str]:
    """What the figures are measured against."""
    w, s = args.window, args.sinks
    return [
        "first_position_share: mean weight on key 0 over queries t >= 1 of random validation "
        "blocks of the trained context; 'uniform' is 1/(t+1) averaged the same way",
        f"sink_share_far: per layer, the mean weight (over heads, rows, positions t >= {w}) on "
        f"the first {s} cached keys; spread evenly it would be {s}/{w + s} = {s / (w + s):.3f} "
        f"for window+sinks (the query, {w - 1} recent keys and {s} sinks), {s}/{w} = "
        f"{s / w:.3f} for streaming ({w - s} recent and {s} sinks), {s}/(t+1) for full",
        "window+sinks keeps attnkit's absolute positions (a sink's key is rotated t positions "
        "from the query); streaming re-rotates the sinks to sit just before the oldest kept "
        "key, as StreamingLLM assigns positions within the cache (Xiao et al. 2023, §3.2)",
        "recompute: a fresh forward of the last W characters at every position t >= W",
    ]


def saved_or_evaluated(args, model, ids) -> tuple[dict, dict, dict]:
    """:func:`evaluate`, or the figures ``--losses`` saved by an earlier run (to replot)."""
    if args.losses is not None and args.losses.exists():
        saved = torch.load(args.losses)
        return saved["losses"], saved["shares"], saved["seconds"]
    out = evaluate(model, ids, args.window, args.sinks, tuple(args.methods))
    if args.losses is not None:
        torch.save(dict(zip(("losses", "shares", "seconds"), out, strict=True)), args.losses)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, default=None, help="a trained GPT run")
    parser.add_argument("--positions", default="rope", choices=("rope", "alibi"))
    parser.add_argument("--epochs", type=int, default=8, help="when training here")
    parser.add_argument("--length", type=int, default=4096)
    parser.add_argument("--stretches", type=int, default=8)
    parser.add_argument("--window", type=int, default=64)
    parser.add_argument("--sinks", type=int, default=4)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--out", type=Path, default=None, help="write the report here (JSON)")
    parser.add_argument("--figure", type=Path, default=None, help="the loss plot (PNG)")
    parser.add_argument("--losses", type=Path, default=None, help="save (or reuse) the losses")
    args = parser.parse_args(argv)
    run = attnkit.load_run(trained_run(args))
    model = run.model.float().eval()
    if model.cfg.positions == "alibi":  # attnkit refuses sinks with a relative bias
        args.methods = [m for m in args.methods if m not in ("window+sinks", "streaming")]
    valid = read_corpus(run.config.data, run.vocab).valid
    share = first_position_share(model, valid, run.config.data.block_size, 256)
    ids = stretches(valid, args.length, args.stretches)  # (B, N + 1)
    losses, sink_shares, seconds = saved_or_evaluated(args, model, ids)
    report = Report("gpt-sinks", script_command("benchmarks/gpt_sinks.py", argv), vars(args))
    table = {name: buckets(v) for name, v in losses.items()}
    for name, rows in table.items():
        print(f"{name:<13}", "  ".join(f"{k}: {v['nats_per_char']:.3f}" for k, v in rows.items()))
        case = f"{args.stretches} x {args.length} validation characters"
        report.results.append(Result(case, name, {}, [seconds[name]], {"buckets": rows}))
    for layer, heads in enumerate(share["per_layer_head"]):
        print(f"layer {layer} first-position share:", " ".join(f"{h:.3f}" for h in heads))
    print(f"uniform: {share['uniform']:.3f}; far sink share per layer: {sink_shares}")
    report.notes += notes(args)
    report.data = {
        "run": str(run.path),
        "model": run.config.model,
        "train": run.config.train,
        "first_position_share": share,
        "sink_share_far": sink_shares,
        "buckets": table,
    }
    if args.out is not None:
        report.write(args.out)
        print(f"wrote {args.out}")
    if args.figure is not None:
        title = f"{model.cfg.positions} char GPT, context 64: W={args.window}, S={args.sinks}"
        figure(losses, args.figure, title)


if __name__ == "__main__":
    main()
