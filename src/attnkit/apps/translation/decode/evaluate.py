"""Evaluate a trained run on a split of its corpus: BLEU, chrF and BLEU by source length."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from attnkit import devices
from attnkit.apps.translation.data.corpora import read_lines
from attnkit.apps.translation.decode.run import load_run
from attnkit.apps.translation.decode.translate import Translation, translate_texts
from attnkit.apps.translation.prepare import load_configured_corpus
from attnkit.metrics.bleu import Scores, bleu_by_length, score_corpus
from attnkit.textfiles import check_paired


@dataclass
class Evaluation:
    """Scores of one run on one split, with the translations that produced them."""

    split: str
    beam_size: int
    scores: Scores
    by_length: list[dict]
    translations: list[Translation]
    references: list[str]


def evaluate_run(
    run_dir: str | Path,
    split: str = "test",
    *,
    beam_size: int | None = None,
    checkpoint: str = "best",
    data_dir: str | None = None,
    limit: int | None = None,
    progress=None,
    bf16: bool | None = None,
    device: str = "auto",
    files: tuple[Path, Path] | None = None,
) -> Evaluation:
    """Translate ``split`` of the run's corpus and score it with sacreBLEU.

    ``beam_size`` overrides the run's ``decode.beam_size``; ``data_dir`` where named corpora
    live (if not the one the run was trained with); ``limit`` the first N sentences only;
    ``bf16`` overrides ``decode.bf16`` (bfloat16 autocast); ``device``: where to decode
    (:mod:`attnkit.devices`).
    """
    cfg, tokenizer, model = load_run(run_dir, checkpoint)
    model = model.to(devices.pick(device))
    if files is not None:  # the user's own test files, line by line
        sources, references = own_files(*files)
        split = str(files[0])
    else:
        sources, references = _split(cfg, split, data_dir)
    sources, references = sources[:limit], references[:limit]
    beam = cfg.decode.beam_size if beam_size is None else beam_size
    decode = cfg.decode if bf16 is None else replace(cfg.decode, bf16=bf16)
    translations = translate_texts(
        model, tokenizer, sources, decode, beam_size=beam, progress=progress
    )
    hypotheses = [t.text for t in translations]
    return Evaluation(
        split,
        beam,
        score_corpus(hypotheses, references),
        bleu_by_length(sources, hypotheses, references),
        translations,
        references,
    )


def _split(cfg, split: str, data_dir: str | None) -> tuple[list[str], list[str]]:
    """Sources and references of ``split`` of the run's corpus."""
    data_cfg = cfg.data if data_dir is None else replace(cfg.data, data_dir=data_dir)
    corpus = load_configured_corpus(data_cfg)
    if split not in corpus.splits:
        raise ValueError(
            f"--split {split}: corpus {corpus.name!r} has no such split (has "
            f"{', '.join(corpus.splits)}); score your own files with --src FILE --ref FILE"
        )
    pairs = corpus.splits[split]
    return [p.src for p in pairs], [p.tgt for p in pairs]


def own_files(src: Path, ref: Path) -> tuple[list[str], list[str]]:
    """A source file and its reference translations, one sentence a line (``*.gz`` too);
    unequal line counts, or an empty file, are an error naming both files."""
    sources, references = read_lines(src), read_lines(ref)
    check_paired(sources, references, src, ref, "the source and reference files")
    return sources, references
