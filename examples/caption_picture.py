"""Draw a captioning run's per-word attention on a test scene, choosing the first scene with the
most objects that it captions right (``--wrong``: the first it captions wrong).

    python examples/caption_picture.py --run runs/hard-attention/soft --out docs/caption-right.png
"""

from __future__ import annotations

import argparse

import attnkit
from attnkit.apps.captioning.scenes import as_arrays
from attnkit.apps.captioning.views import plot_caption


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True)
    parser.add_argument("--out", default="caption.png")
    parser.add_argument("--wrong", action="store_true", help="a wrongly captioned scene")
    parser.add_argument("--first", type=int, default=200, help="test scenes to search")
    args = parser.parse_args(argv)
    run = attnkit.load_run(args.run)
    scenes = sorted(run.scenes("test")[: args.first], key=lambda s: -len(s.objects))
    captions = run.predict(as_arrays(scenes))
    for scene, cap in zip(scenes, captions, strict=True):
        if (cap.text == scene.caption) != args.wrong:
            boxes = [o.box for o in scene.objects]
            plot_caption(scene.image, cap.words, cap.alpha, args.out, boxes=boxes)
            print(f"{args.out}: {cap.text!r} (truth: {scene.caption!r})")
            return
    raise SystemExit(f"no {'wrong' if args.wrong else 'right'} caption among {args.first} scenes")


if __name__ == "__main__":
    main()
