"""Translation's own commands: ``attnkit translation translate | align | data | experiment``
(the generic ``train | evaluate | predict | report | serve`` are :mod:`.app`'s)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from attnkit.apps.translation.align.cli import align_app
from attnkit.commands import Debug, Device, run_or_exit
from attnkit.commands import setup_logging as _logging

commands = typer.Typer()  # gathered into `attnkit` by attnkit.cli
NBest = Annotated[
    int,
    typer.Option(
        help="Print this many hypotheses per sentence, each with its score (needs a beam at "
        "least as wide)."
    ),
]


@commands.command(rich_help_panel="Translation")
def translate(
    run_dir: Annotated[Path, typer.Argument(help="A trained run directory.")],
    input_file: Annotated[
        Path | None, typer.Option("--input", "-i", help="One sentence per line (default: stdin).")
    ] = None,
    beam: Annotated[int | None, typer.Option(help="Beam size (1 = greedy).")] = None,
    n_best: NBest = 1,
    checkpoint: Annotated[str, typer.Option(help="best, averaged or last.")] = "best",
    bf16: Annotated[
        bool | None, typer.Option(help="bfloat16 autocast (default: the config's decode.bf16).")
    ] = None,
    save_attention: Annotated[
        Path | None, typer.Option(help="Write each sentence's attention (all layers and heads).")
    ] = None,
    interactive: Annotated[bool, typer.Option(help="Prompt for sentences one at a time.")] = False,
    device: Device = None,
    debug: Debug = False,
) -> None:
    """Translate sentences from a file, stdin, or interactively (prompts on stderr).

    With --n-best N > 1 each line is `translation<TAB>score`, the score the GNMT
    length-normalised log-probability (higher is better), for greedy and beam output alike."""

    def work() -> None:
        from dataclasses import replace

        from attnkit.apps.translation.decode.translate import empty_note, translate_texts
        from attnkit.interpret.record import save_attention as save

        cfg, tokenizer, model = _load(run_dir, checkpoint, device or "auto")
        _check_n_best(n_best, cfg.decode.beam_size if beam is None else beam)
        decode = replace(cfg.decode, n_best=n_best)
        if bf16 is not None:
            decode = replace(decode, bf16=bf16)
        want_weights = save_attention is not None
        count = 0
        if n_best > 1:
            _err(f"# each line: translation<TAB>score; {SCORE} (alpha = {decode.length_penalty})")

        def run(lines: list[str]) -> None:
            nonlocal count
            out = translate_texts(
                model, tokenizer, lines, decode, beam_size=beam, need_weights=want_weights
            )
            for t in out:
                for text, score in zip(t.outputs, t.scores, strict=True):
                    typer.echo(f"{text}\t{score:.4f}" if n_best > 1 else text)
            if want_weights:
                save(out, save_attention, start=count)
            count += len(out)
            if (note := empty_note(out, beam or cfg.decode.beam_size)) and not interactive:
                _err(f"warning: {note}")

        if interactive:
            _prompt(run)
        else:
            run(_lines(input_file))

    run_or_exit(work, "translation translate", debug)


def _load(run_dir: Path, checkpoint: str, device: str = "auto"):
    """The translation run ``run_dir`` (config, tokenizer, model on ``device``); a run of
    another kind is refused in one line."""
    from attnkit import devices
    from attnkit.apps import require_kind
    from attnkit.apps.translation.app import APP
    from attnkit.apps.translation.decode.run import load_run

    require_kind(run_dir, APP.name)
    cfg, tokenizer, model = load_run(run_dir, checkpoint)
    return cfg, tokenizer, model.to(devices.pick(device))


SCORE = (
    "score = log p(y|x) / ((5 + |y|) / 6)^alpha, the length-normalised log-probability beam "
    "search ranks by (Wu et al. 2016, eq. 14), the same for greedy output; higher is better"
)


def _err(message: str) -> None:
    """A note for the person at the terminal: stderr, so piped output stays translations."""
    typer.echo(message, err=True)


def _check_n_best(n_best: int, beam: int) -> None:
    if n_best < 1:
        raise ValueError(f"--n-best must be at least 1, got {n_best}")
    if n_best > beam:
        kept = "greedy decoding keeps one" if beam == 1 else f"a beam of {beam} keeps {beam}"
        raise ValueError(
            f"--n-best {n_best} needs a beam of at least {n_best} ({kept} hypothesis per "
            f"sentence): add --beam {n_best}"
        )


def _prompt(run) -> None:
    """Translate what the user types, one sentence at a time, until end of input. The prompt
    goes to stderr, so the translations on stdout can be piped."""
    _err("Type a sentence and press Enter; Ctrl-D (end of input) stops.")
    while True:
        sys.stderr.write("> ")
        sys.stderr.flush()
        line = sys.stdin.readline()
        if not line:
            break
        if line.strip():
            run([line.strip()])


def _lines(input_file: Path | None) -> list[str]:
    """The sentences of ``input_file``, one per line, else of stdin (with a hint on a terminal,
    where stdin would otherwise wait in silence)."""
    if input_file is not None:
        from attnkit.apps.translation.data.corpora import read_lines

        return read_lines(input_file)
    if sys.stdin.isatty():
        _err(
            "Reading sentences from the terminal, one per line; Ctrl-D ends the input. "
            "(Or pipe text in, give --input FILE, or use --interactive.)"
        )
    return [line.rstrip("\n") for line in sys.stdin]


data_app = typer.Typer(
    help="Corpora: download the known ones, write the generated one with its gold alignments.",
    no_args_is_help=True,
)
commands.add_typer(data_app, name="data", rich_help_panel="Translation")
commands.add_typer(align_app, name="align", rich_help_panel="Tools")


@data_app.command("download")
def data_download(
    name: Annotated[str, typer.Argument(help="A known corpus, e.g. multi30k, tatoeba-eng-deu.")],
    to: Annotated[Path, typer.Option("--to", help="Directory to download into.")],
    base_url: Annotated[str | None, typer.Option(help="Mirror to download from.")] = None,
    debug: Debug = False,
) -> None:
    """Download a corpus, verify its sha256 checksums, resume partial files."""

    def work() -> None:
        from attnkit.apps.translation.data.download import download

        paths = download(name, to, base_url=base_url, progress=sys.stderr.isatty())
        for path in paths:
            typer.echo(str(path))

    run_or_exit(work, "translation data download", debug)


@data_app.command("generate")
def data_generate(
    to: Annotated[Path, typer.Option("--to", help="Directory to write into.")],
    sizes: Annotated[tuple[int, int, int], typer.Option(help="Train, valid and test pairs.")] = (
        20_000,
        1000,
        1000,
    ),
    seed: Annotated[int, typer.Option(help="The corpus seed (data.generated_seed).")] = 0,
    debug: Debug = False,
) -> None:
    """Write the generated English-German corpus: running text ({split}.en, .de), tokens
    ({split}.tok.en, .tok.de) and gold word alignments ({split}.en-de.align, 1-based)."""

    def work() -> None:
        from attnkit.apps.translation.align.extract import write_generated

        for path in write_generated(to, sizes, seed):
            typer.echo(str(path))

    run_or_exit(work, "translation data generate", debug)


experiment_app = typer.Typer(help="Experiments that compare models.", no_args_is_help=True)
commands.add_typer(experiment_app, name="experiment", rich_help_panel="Translation")


@experiment_app.command("bottleneck")
def experiment_bottleneck(
    out: Annotated[Path, typer.Option("--run-dir", "-o", help="Where the runs go.")] = Path(
        "runs/bottleneck"
    ),
    config: Annotated[
        list[Path] | None,
        typer.Option(help="Configs to compare instead of the built-in three (repeatable)."),
    ] = None,
    retrain: Annotated[bool, typer.Option(help="Train again even if runs exist.")] = False,
    debug: Debug = False,
) -> None:
    """No attention vs Bahdanau vs Transformer, BLEU by source length, and the plot."""

    def work() -> None:
        from attnkit.apps.translation.config import load_experiment
        from attnkit.apps.translation.experiments import compare as cmp

        _logging()
        if config:
            cfgs = {load_experiment(p).name: load_experiment(p) for p in config}
        else:
            cfgs = {n: cmp.packaged_config(f"bottleneck-{n}") for n in cmp.BOTTLENECK_MODELS}
        results = cmp.compare(cfgs, out, progress=sys.stderr.isatty(), reuse=not retrain)
        _print_buckets(results)
        typer.echo(f"plot: {cmp.plot_by_length(results, out / 'bleu_by_length.png')}")

    run_or_exit(work, "translation experiment bottleneck", debug)


@experiment_app.command("positions")
def experiment_positions(
    out: Annotated[Path, typer.Option("--run-dir", "-o", help="Where the runs go.")] = Path(
        "runs/positions"
    ),
    scheme: Annotated[
        list[str] | None,
        typer.Option(help="Position schemes to train (repeatable); default all six."),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a field of every run's config: KEY=VALUE."),
    ] = None,
    retrain: Annotated[bool, typer.Option(help="Train again even if runs exist.")] = False,
    debug: Debug = False,
) -> None:
    """Train on sentences of up to 20 words, test on up to 50: BLEU by length, the cost, and
    the position term of every scheme."""

    def work() -> None:
        from attnkit.apps.translation.experiments import positions as pos
        from attnkit.apps.translation.experiments.compare import plot_by_length
        from attnkit.apps.translation.experiments.position_terms import plot_position_terms

        _logging()
        schemes = tuple(scheme) if scheme else pos.POSITIONS
        overrides, progress = tuple(set_ or ()), sys.stderr.isatty()
        results, costs = pos.run_positions(
            out, schemes, overrides=overrides, reuse=not retrain, progress=progress
        )
        _print_buckets(results)
        _print_table(*pos.length_table(results), "Output / reference length")
        _print_table(*pos.cost_table(costs), "Cost (this run)")
        seen = pos.EDGES.index(pos.TRAIN_MAX_WORDS) + 1  # buckets up to 20 words
        typer.echo(f"plot: {plot_by_length(results, out / 'bleu_by_length.png', seen)}")
        runs = {scheme: out / scheme for scheme in schemes}
        typer.echo(f"position terms: {plot_position_terms(runs, out / 'position_terms.png')}")

    run_or_exit(work, "translation experiment positions", debug)


def _print_table(header, rows, title) -> None:
    from rich.table import Table

    table = Table(*header, title=title)
    for row in rows:
        table.add_row(*row)
    Console().print(table)


def _print_buckets(results) -> None:
    from attnkit.apps.translation.experiments.compare import bucket_table

    _print_table(*bucket_table(results), "BLEU by source length (test)")
