"""How the train and decode suites (:mod:`.seq2seq_suites`) record attnkit against JoeyNMT:
per-round times as results, per-round ratios as comparisons."""

from __future__ import annotations

import statistics

from benchmarks.suites.report import Comparison, Report, Result


def record_train(report: Report, name: str, rounds: dict) -> None:
    case = f"train {name}"
    rates = {}
    for impl, rows in rounds.items():
        if not rows:
            continue
        rates[impl] = [tokens / seconds for seconds, tokens, *_ in rows]
        report.results.append(
            Result(
                case,
                impl,
                {"model": name},
                [row[0] for row in rows],
                {
                    "tokens/s": statistics.median(rates[impl]),
                    "tokens": rows[0][1],
                    "steps": rows[0][2],
                    "parameters": rows[0][3],
                },
            )
        )
    for ours in ("attnkit", "attnkit bf16"):  # JoeyNMT trains in fp32 (its fp16 is CUDA-only)
        if ours not in rates or "JoeyNMT" not in rates:
            continue
        ratios = [a / b for a, b in zip(rates[ours], rates["JoeyNMT"], strict=True)]
        _versus_joey(report, case, ours, ratios, "tokens/s", target=2.0)


def record_decode(report: Report, name: str, beam: int, n: int, times: dict) -> None:
    case = f"decode {name} {'greedy' if beam == 1 else f'beam {beam}'}"
    rates = {}
    for impl, rows in times.items():
        if not rows:
            continue
        rates[impl] = [n / seconds for seconds, _ in rows]
        report.results.append(
            Result(
                case,
                impl,
                {"model": name, "beam": beam, "sentences": n},
                [s for s, _ in rows],
                {
                    "sentences/s": statistics.median(rates[impl]),
                    "sentences": n,
                    "out_tokens": rows[0][1],
                    "out_tokens/s": statistics.median(n * length / s for s, length in rows),
                },
            )
        )
    if "JoeyNMT" not in rates:
        return
    lengths = {impl: rows[0][1] for impl, rows in times.items() if rows}
    for ours in ("attnkit", "attnkit bf16"):  # JoeyNMT decodes in fp32
        if ours not in rates:
            continue
        if abs(lengths[ours] - lengths["JoeyNMT"]) > 0.05 * lengths[ours]:
            report.notes.append(
                f"{case}: unequal work, mean output {lengths[ours]:.1f} tokens ({ours}) "
                f"vs {lengths['JoeyNMT']:.1f} (JoeyNMT); the ratio is not comparable"
            )
        ratios = [a / b for a, b in zip(rates[ours], rates["JoeyNMT"], strict=True)]
        target = None if beam == 1 else (5.0 if name == "transformer" else 2.0)
        _versus_joey(report, case, ours, ratios, "sentences/s", target)


def _versus_joey(
    report: Report, case: str, ours: str, ratios: list[float], unit: str, target: float | None
) -> None:
    """Record attnkit's ``unit`` over JoeyNMT's per repeat, met when the median reaches
    ``target`` (no target: nothing to meet)."""
    met = None if target is None else statistics.median(ratios) >= target
    report.comparisons.append(
        Comparison(
            case,
            ours,
            "JoeyNMT",
            ratios,
            kind=f"{unit} attnkit/JoeyNMT (higher is better)",
            target=None if target is None else f">= {target}",
            met=met,
        )
    )
