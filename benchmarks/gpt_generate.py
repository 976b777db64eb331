"""Greedy generation speed with the KV cache: attnkit's GPT against Hugging Face's
``GPT2LMHeadModel.generate`` with the same weights (issue 37; target: attnkit's tokens/s at
least 1.5x ``generate``'s at batch 1).

    OMP_NUM_THREADS=1 python benchmarks/gpt_generate.py --out benchmarks/results/gpt-generate.json

A GPT-2-shaped model is built at random from ``GPT2Config`` (no download: by default 6 layers,
384 wide, 6 heads, GPT-2's vocabulary of 50,257 and context of 1,024), its weights moved off
their near-zero initialisation (so greedy choices are not near-ties), saved with
``save_pretrained`` and read back into attnkit by :func:`~attnkit.apps.gpt.hf_gpt2.load_gpt2`
(GPT-2: Radford et al. 2019). Each round generates ``--new`` tokens after a ``--prompt``-token
prompt with both, the order rotated per round (:func:`interleave`), on one thread; the tokens
must be identical. Tokens/s counts the generated tokens of every row; the ratio is taken per
round. ``--ablate-head`` adds attnkit without :class:`~attnkit.apps.gpt.generate.ColumnHead`
(the output layer read as ``nn.Linear``'s ``(V, D)``). ``--profile`` prints where each one's
time goes at batch 1 (``torch.profiler``, operators by self CPU time) and records the first
operators' shares.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import torch

import attnkit.apps.gpt.generate as gen
from attnkit.apps.gpt.generate import Sampling, generate
from attnkit.apps.gpt.hf_gpt2 import load_gpt2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script, too
from benchmarks.suites.measure import interleave  # noqa: E402
from benchmarks.suites.report import Comparison, Report, Result, script_command  # noqa: E402

OURS, PEER = "attnkit generate", "transformers GPT2LMHeadModel.generate"
LINEAR = "attnkit generate, nn.Linear head"  # --ablate-head: without ColumnHead


def build(args, folder: Path):
    """A random Hugging Face GPT-2 of the given sizes, and attnkit's GPT with its weights."""
    import transformers

    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=args.vocab,
        n_positions=args.context,
        n_embd=args.width,
        n_layer=args.layers,
        n_head=args.heads,
        bos_token_id=None,
        eos_token_id=None,  # no early stop: both generate exactly --new tokens
    )
    hf = transformers.GPT2LMHeadModel(config).eval()
    with torch.no_grad():  # off the 0.02-normal init, so logits are not flat (near-ties)
        for p in hf.parameters():
            p.add_(0.05 * torch.randn_like(p))
    hf.generation_config.eos_token_id = None
    hf.generation_config.pad_token_id = 0
    hf.save_pretrained(folder, safe_serialization=True)
    return hf, load_gpt2(folder)


def runners(hf, ours, prompt: torch.Tensor, new: int) -> dict:
    """Greedy generation of ``new`` tokens after ``prompt (B, T)`` by each, returning ids."""
    mask = torch.ones_like(prompt)  # (B, T)

    def peer():
        with torch.no_grad():
            return hf.generate(
                prompt,
                attention_mask=mask,
                max_new_tokens=new,
                do_sample=False,
                use_cache=True,
            )

    def attnkit():
        return generate(ours, prompt, new, Sampling(temperature=0), use_cache=True)

    def linear_head():  # generation reading the output layer as nn.Linear's (V, D)
        chosen = gen._column_head
        gen._column_head = lambda model: False
        try:
            return attnkit()
        finally:
            gen._column_head = chosen

    return {OURS: attnkit, PEER: peer, LINEAR: linear_head}


def profile(fn, rows: int = 12) -> tuple[str, dict]:
    """The operators by self CPU time of one ``fn()`` call (``torch.profiler``): the table,
    and the ``rows`` first operators' shares of the total."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    events = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in events)
    shares = {e.key: (e.self_cpu_time_total / total, e.count) for e in events[:rows]}
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=rows)
    return table, {"self_cpu_s": total / 1e6, "top (share, calls)": shares}


def measure_batch(report: Report, fns: dict, batch: int, args) -> None:
    """Check the tokens are identical, time interleaved rounds and record tokens/s."""
    expected = fns[PEER]()
    same = all(torch.equal(fn(), expected) for name, fn in fns.items() if name != PEER)
    times = interleave(fns, args.repeats, warmup=1)
    case = f"greedy B{batch} prompt {args.prompt} new {args.new}"
    params = {"batch": batch, "prompt": args.prompt, "new": args.new}
    rates = {}
    for name, seconds in times.items():
        rates[name] = [batch * args.new / s for s in seconds]
        metrics = {"tokens/s": statistics.median(rates[name]), "identical_tokens": same}
        report.results.append(Result(case, name, params, seconds, metrics))
        lo, hi = min(rates[name]), max(rates[name])
        print(f"B{batch} {name:<40} {metrics['tokens/s']:8.1f} tokens/s ({lo:.1f}-{hi:.1f})")
    ratios = [p / o for o, p in zip(times[OURS], times[PEER], strict=True)]  # throughput
    met = statistics.median(ratios) >= 1.5 if batch == 1 else None
    report.comparisons.append(
        Comparison(
            case,
            OURS,
            PEER,
            ratios,
            kind="throughput ours/reference (higher is better)",
            target=">= 1.5" if batch == 1 else None,
            met=met,
        )
    )
    if LINEAR in times:  # what ColumnHead gives: attnkit's throughput over the ablation's
        gain = [a / o for o, a in zip(times[OURS], times[LINEAR], strict=True)]
        kind = "throughput ColumnHead / nn.Linear head (higher is better)"
        report.comparisons.append(Comparison(case, OURS, LINEAR, gain, kind=kind))
        print(f"B{batch} ColumnHead gain {statistics.median(gain):.2f}x")
    print(
        f"B{batch} ratio {statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f}),"
        f" identical tokens: {same}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--width", type=int, default=384)
    parser.add_argument("--heads", type=int, default=6)
    parser.add_argument("--vocab", type=int, default=50257)
    parser.add_argument("--context", type=int, default=1024)
    parser.add_argument("--prompt", type=int, default=32, help="prompt tokens")
    parser.add_argument("--new", type=int, default=128, help="generated tokens")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="profile both at batch 1")
    parser.add_argument("--ablate-head", action="store_true", help="also without ColumnHead")
    parser.add_argument("--out", type=Path, default=None, help="write the report here (JSON)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    import transformers

    report = Report(
        "gpt-generate",
        script_command("benchmarks/gpt_generate.py", argv),
        vars(args),
        extra_versions={"transformers": transformers.__version__},
    )
    with tempfile.TemporaryDirectory() as folder:
        hf, ours = build(args, Path(folder))
    n_params = sum(p.numel() for p in ours.parameters())
    report.notes.append(
        f"random GPT-2 ({args.layers} layers, {args.width} wide, {args.heads} heads, vocabulary "
        f"{args.vocab}, {n_params:,} parameters), HF attention {hf.config._attn_implementation}"
    )
    print(report.notes[-1], f"threads={torch.get_num_threads()}")
    g = torch.Generator().manual_seed(1)
    for batch in args.batches:
        prompt = torch.randint(0, args.vocab, (batch, args.prompt), generator=g)  # (B, T)
        fns = runners(hf, ours, prompt, args.new)
        if not args.ablate_head:
            del fns[LINEAR]
        measure_batch(report, fns, batch, args)
        if args.profile and batch == 1:
            for name, fn in fns.items():
                table, report.data[f"profile B1 {name}"] = profile(fn)
                print(name, "\n", table)
    if args.out is not None:
        report.write(args.out)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
