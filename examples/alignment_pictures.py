"""Draw one generated sentence's alignments: a run's raw cross-attention, its Shift-Att reading
and a guided head, each with its argmax links and the generator's gold (docs/alignment.md).

    python examples/alignment_pictures.py --run runs/gen-transformer \\
        --guided-run runs/gen-transformer-guided --sentence 7 --out docs/alignment-generated.png

The sentence is from the test split of the run's generated corpus (its sizes and seed).
"""

from __future__ import annotations

import argparse

from attnkit.apps.translation.align.extract import generated_gold, run_attention
from attnkit.apps.translation.decode.run import load_run
from attnkit.interpret.alignment_plot import plot_alignments


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a run on the generated corpus")
    parser.add_argument("--guided-run", help="a run whose guided head is drawn too")
    parser.add_argument("--guided-head", type=int, default=0)
    parser.add_argument("--guided-layer", type=int, default=-2)
    parser.add_argument("--sentence", type=int, default=0, help="0-based test sentence")
    parser.add_argument("--out", default="alignment.png")
    args = parser.parse_args(argv)

    data = load_run(args.run)[0].data
    gold = generated_gold(data.generated_sizes, data.generated_seed, reverse=data.src_lang == "de")
    n = args.sentence
    pair = [(gold.source[n], gold.target[n])]
    maps = {
        "cross-attention, mean of layers": run_attention(args.run, pair, detok=True)[0],
        "the same, Shift-Att": run_attention(args.run, pair, detok=True, shift=True)[0],
    }
    if args.guided_run:
        name = f"guided: layer {args.guided_layer}, head {args.guided_head}"
        maps[name] = run_attention(
            args.guided_run, pair, layer=args.guided_layer, head=args.guided_head, detok=True
        )[0]
    title = "crosses: each target word's argmax; squares: gold sure links; dots: possible"
    path = plot_alignments(
        maps, gold.source[n].split(), gold.target[n].split(), args.out, gold.gold[n], title
    )
    print(path)


if __name__ == "__main__":
    main()
