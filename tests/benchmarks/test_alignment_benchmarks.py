"""The alignment benchmark scripts on tiny data: benchmarks/shift_att.py (layer and shift chosen
on development sentences) and benchmarks/eflomal_aer.py (the statistical peer)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from attnkit.apps.translation.align.aer import diagonal_links
from attnkit.apps.translation.align.extract import generated_gold, run_attention
from attnkit.apps.translation.data.generated import generate_aligned_pairs
from attnkit.interpret.alignments import argmax_links, symmetrise
from attnkit.metrics.aer import aer_by_length, alignment_error_rate

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))


def test_shift_att_script_scores_every_setting_and_chooses_on_dev(tiny_run, tmp_path):
    out = tmp_path / "sa.json"
    command = [sys.executable, str(REPO / "benchmarks" / "shift_att.py"), "--gold", "generated"]
    command += ["--run", str(tiny_run.dir), "--dev", "5", "--json", str(out), "--threads", "1"]
    printed = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    record = json.loads(out.read_text())
    rows = {r["method"]: r for r in record["rows"]}
    kinds = ("argmax", "argmax per source word", "grow-diag of both argmaxes")
    settings = ("layer mean", "layer mean, shift")  # a recurrent run has one attention
    assert set(rows) == {"diagonal (no model)"} | {f"{s}: {k}" for s in settings for k in kinds}
    gold = generated_gold(tiny_run.cfg.data.generated_sizes, tiny_run.cfg.data.generated_seed)
    diagonal = [
        diagonal_links(len(s.split()), len(t.split()))
        for s, t in zip(gold.source, gold.target, strict=True)
    ]
    expected = alignment_error_rate(gold.gold[5:], diagonal[5:]).aer
    assert rows["diagonal (no model)"]["report"]["aer"] == pytest.approx(100 * expected)
    english = [len(s.split()) for s in gold.source]  # an en->de run: English is the source
    bins = aer_by_length(gold.gold[5:], diagonal[5:], english[5:])
    assert rows["diagonal (no model)"]["report"]["by_length"] == [b.percent() for b in bins]
    assert sum(b.sentences for b in bins) == len(gold.gold) - 5
    assert "reported AER by English length in words" in printed
    pairs = list(zip(gold.source, gold.target, strict=True))
    columns = [
        argmax_links(w, per="source") for w in run_attention(tiny_run.dir, pairs, detok=True)
    ]
    expected = alignment_error_rate(gold.gold[5:], columns[5:]).aer
    assert rows["layer mean: argmax per source word"]["report"]["aer"] == pytest.approx(
        100 * expected
    )
    best = min(record["rows"][1:], key=lambda r: r["dev"]["aer"])
    assert record["chosen"] == best["method"] and f"chosen on dev: {best['method']}" in printed


def test_shift_att_script_scores_the_product_of_both_runs(tiny_run, tmp_path):
    from attnkit.interpret.agreement import agreement_links

    out = tmp_path / "sa.json"
    command = [sys.executable, str(REPO / "benchmarks" / "shift_att.py"), "--gold", "generated"]
    command += ["--run", str(tiny_run.dir), "--reverse-run", str(tiny_run.dir), "--dev", "5"]
    subprocess.run(
        [*command, "--json", str(out), "--threads", "1"], check=True, capture_output=True
    )
    rows = {r["method"]: r for r in json.loads(out.read_text())["rows"]}
    gold = generated_gold(tiny_run.cfg.data.generated_sizes, tiny_run.cfg.data.generated_seed)
    pairs = list(zip(gold.source, gold.target, strict=True))
    ahead = run_attention(tiny_run.dir, pairs, detok=True)
    back = run_attention(tiny_run.dir, [(t, s) for s, t in pairs], detok=True)
    links = [agreement_links(f, b) for f, b in zip(ahead, back, strict=True)]
    expected = alignment_error_rate(gold.gold[5:], links[5:]).aer
    row = rows["layer mean x reverse layer mean: product"]
    assert row["report"]["aer"] == pytest.approx(100 * expected)


def test_words_split_punctuation_and_lowercase_like_the_gold():
    from eflomal_aer import words

    assert words("Wir glauben nicht, daß wir's tun.") == "wir glauben nicht , dass wir's tun ."
    assert words('Das "Crémant"-Gebiet: 3.5 Mio!') == 'das " crémant " - gebiet : 3.5 mio !'


def test_eflomal_aligns_generated_text_far_better_than_the_diagonal(tmp_path):
    pytest.importorskip("eflomal")
    from eflomal_aer import eflomal_links, write_priors

    pairs = generate_aligned_pairs(1500, seed=4, max_len=15)
    src = [" ".join(p.en).lower() for p in pairs]
    tgt = [" ".join(p.de).lower() for p in pairs]
    gold = [p.alignment for p in pairs]
    fwd, rev = eflomal_links(src, tgt)
    links = [symmetrise(f, r, "grow-diag-final-and") for f, r in zip(fwd, rev, strict=True)]
    diagonal = [diagonal_links(len(p.en), len(p.de)) for p in pairs]
    aer, base = alignment_error_rate(gold, links).aer, alignment_error_rate(gold, diagonal).aer
    assert aer < 0.2 and aer < base - 0.2, (aer, base)
    # priors from those links align unseen sentences on their own
    priors = write_priors(src, tgt, fwd, rev, tmp_path / "priors")
    fwd2, rev2 = eflomal_links(src[:50], tgt[:50], priors)
    again = [symmetrise(f, r, "grow-diag-final-and") for f, r in zip(fwd2, rev2, strict=True)]
    assert alignment_error_rate(gold[:50], again).aer < 0.2


def test_eflomal_writes_guidance_labels_that_guided_training_reads(tmp_path):
    pytest.importorskip("eflomal")
    from attnkit.apps.translation.config import load_experiment
    from attnkit.apps.translation.training import train

    config = tmp_path / "c.yaml"
    config.write_text(
        "data: {corpus: default, generated_sizes: [300, 20, 20], vocab_size: 150, max_len: 150}\n"
        "model: {arch: transformer, d_model: 16, num_heads: 2, d_ff: 32, encoder_layers: 1,"
        " decoder_layers: 2}\n"
        "train: {epochs: 1, max_tokens: 1500}\n"
    )
    links = tmp_path / "links.align"
    script = [sys.executable, str(REPO / "benchmarks" / "eflomal_aer.py"), "--config", str(config)]
    subprocess.run([*script, "--write-train", str(links)], check=True, capture_output=True)
    assert len(links.read_text().splitlines()) == 300
    cfg = load_experiment(config, [f"train.guided_alignment.file={links}"])
    result = train(cfg, tmp_path / "run", progress=False)
    assert result.history[-1]["train_align_loss"] > 0


def test_guided_agreement_is_zero_against_the_run_s_own_argmax(tiny_run, tmp_path, capsys):
    """benchmarks/guided_agreement.py pairs each training pair with its label line: labels that
    are the run's own argmax links score AER 0 one way."""
    from guided_agreement import main

    from attnkit.apps.translation.align.guided import tokenized
    from attnkit.apps.translation.config import load_experiment
    from attnkit.apps.translation.data import clean_corpus
    from attnkit.apps.translation.prepare import load_configured_corpus
    from attnkit.interpret.alignments import write_pharaoh

    config = tiny_run.dir / "config.yaml"
    train = clean_corpus(load_configured_corpus(load_experiment(config, []).data)).train
    pairs = [(tokenized(p.src), tokenized(p.tgt)) for p in train[:12]]
    own = [argmax_links(w) for w in run_attention(tiny_run.dir, pairs, detok=True)]
    labels = write_pharaoh(tmp_path / "labels.align", own + [own[0]] * (len(train) - 12))
    main(
        [
            "--config",
            str(config),
            "--labels",
            str(labels),
            "--run",
            str(tiny_run.dir),
            "--layer",
            "mean",
            "--n",
            "12",
        ]
    )
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].endswith("pairs 1-12, one way: AER 0.0"), printed
    assert "both ways" in printed[1]
