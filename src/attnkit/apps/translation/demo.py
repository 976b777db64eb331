"""``attnkit demo``: the bottleneck and its cure in a few minutes on a laptop CPU.

Trains Bahdanau attention and the no-attention baseline on the generated corpus, prints a few
test translations of each, their BLEU and BLEU by source length, and writes an attention
heatmap of one test sentence.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from attnkit.apps.translation.decode.records import plot_translation
from attnkit.apps.translation.decode.run import load_run
from attnkit.apps.translation.decode.translate import translate_texts
from attnkit.apps.translation.experiments.compare import (
    bucket_table,
    compare,
    packaged_config,
    plot_by_length,
)

DEMO_MODELS = ("none", "bahdanau")


def run_demo(out_dir: str | Path, *, reuse: bool = True, progress: bool = False, console=None):
    """Run the demo into ``out_dir``; returns the comparison results."""
    console = console or Console()
    out_dir = Path(out_dir)
    configs = {name: packaged_config(f"demo-{name}") for name in DEMO_MODELS}
    results = compare(configs, out_dir, progress=progress, reuse=reuse)

    examples = Table("", "text", title="Test translations", show_lines=True)
    first = results[0].evaluation
    for i in _examples(first.translations):
        examples.add_row("source", first.translations[i].source)
        examples.add_row("reference", first.references[i])
        for r in results:
            examples.add_row(r.name, r.evaluation.translations[i].text)
    console.print(examples)

    header, rows = bucket_table(results)
    table = Table(*header, title="BLEU by source length (test, sacreBLEU)")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    for r in results:
        console.print(
            f"{r.name}: BLEU {r.evaluation.scores.bleu:.2f}, chrF "
            f"{r.evaluation.scores.chrf:.2f}, trained {r.result.seconds:.0f} s"
        )

    plot = plot_by_length(results, out_dir / "bleu_by_length.png")
    heatmap = _heatmap(out_dir / "bahdanau", first.translations, out_dir / "heatmap.png")
    console.print(f"wrote {plot} and {heatmap}")
    console.print(next_steps(out_dir / "bahdanau"), soft_wrap=True, highlight=False)
    return results


def next_steps(run: Path) -> str:
    """What to try next with the demo's attention run (``run``), printed at the demo's end."""
    steps = [
        (f"attnkit translation translate {run} --interactive", "type English, read German"),
        (f"attnkit report {run}", "one HTML page: scores, curves, heatmaps"),
        (f"attnkit serve {run}", "the attention explorer in your browser"),
    ]
    width = max(len(command) for command, _ in steps)
    lines = "".join(f"  {command.ljust(width)}   # {what}\n" for command, what in steps)
    return (
        f"\nThe demo's runs: {run.parent / 'none'} (no attention) and {run} (Bahdanau). "
        f"Try next:\n{lines}and the lessons (lessons/, or the site: make docs)."
    )


def _examples(translations, n: int = 3) -> list[int]:
    """A short, a medium and a long test sentence."""
    by_length = sorted(range(len(translations)), key=lambda i: len(translations[i].source))
    return [by_length[int(q * (len(by_length) - 1))] for q in (0.1, 0.5, 0.9)][:n]


def _heatmap(run_dir: Path, translations, path: Path) -> Path:
    """Re-translate a medium test sentence with attention and plot it."""
    cfg, tokenizer, model = load_run(run_dir)
    index = _examples(translations)[1]
    (t,) = translate_texts(
        model, tokenizer, [translations[index].source], cfg.decode, need_weights=True
    )
    return plot_translation(t, "cross", path)
