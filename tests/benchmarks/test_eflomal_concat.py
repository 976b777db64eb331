"""benchmarks/eflomal_aer.py with data.concat: --write-train aligns exactly the joined training
pairs `attnkit train` reads (guided training accepts the file, one line per pair), --limit
writes the first N, and scores carry AER by English length."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from attnkit.interpret.alignments import Alignment

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
CONFIG = (
    "data: {corpus: default, generated_sizes: [90, 10, 10], vocab_size: 150, max_len: 400,"
    " concat: [2, 4], concat_seed: 7}\n"
    "model: {arch: transformer, d_model: 16, num_heads: 2, d_ff: 32, encoder_layers: 1,"
    " decoder_layers: 2}\n"
    "train: {epochs: 1, max_tokens: 3000}\n"
)


def test_write_train_aligns_the_joined_pairs_guided_training_reads(tmp_path):
    pytest.importorskip("eflomal")
    from attnkit.apps.translation.align.guided import guidance_targets
    from attnkit.apps.translation.config import load_experiment
    from attnkit.apps.translation.prepare import prepare

    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    script = [sys.executable, str(REPO / "benchmarks" / "eflomal_aer.py"), "--config", str(config)]
    links = tmp_path / "links.align"
    subprocess.run([*script, "--write-train", str(links)], check=True, capture_output=True)
    cfg = load_experiment(config, [])
    data = prepare(cfg.data, tmp_path / "run")
    pairs = [(p.src, p.tgt) for p in data.corpus.train]
    assert 90 / 4 <= len(pairs) <= 90 / 2 + 1  # 90 generated pairs joined 2-4 at a time
    assert len(links.read_text().splitlines()) == len(pairs)
    targets = guidance_targets(data.tokenizer, pairs, links, data.train)
    # one target per kept example, found by its index into the joined pairs (max_len may drop
    # some long examples; the file still has a line for each)
    assert set(targets) == {e.index for e in data.train} and len(data.train) > len(pairs) / 2
    short = tmp_path / "short.align"
    command = [*script, "--write-train", str(short), "--limit", "5"]
    subprocess.run(command, check=True, capture_output=True)
    assert len(short.read_text().splitlines()) == 5


def test_scores_hold_the_reported_sentences_aer_by_length():
    from eflomal_aer import median_bins, score

    gold = [Alignment({(0, 0)}), Alignment({(0, 0), (1, 1)}), Alignment({(0, 1)})]
    fwd = rev = [{(0, 0)}, {(0, 0), (1, 1)}, {(0, 0)}]
    out = score(gold, fwd, rev, dev=1, lengths=[3, 4, 25])
    bins = {b["bin"]: b for b in out["union"]["by_length"]}
    assert (bins["1-10"]["sentences"], bins["1-10"]["aer"]) == (1, 0.0)
    assert (bins["21-30"]["sentences"], bins["21-30"]["aer"]) == (1, 100.0)
    assert bins["41+"]["aer"] is None
    runs = [out["union"]["by_length"], [dict(b, aer=50.0) for b in out["union"]["by_length"]]]
    assert median_bins(runs)[0] == dict(bin="1-10", sentences=1, aer=25.0)
