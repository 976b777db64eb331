"""Alignment-guided training (attnkit.apps.translation.align.guided; Garg et al. 2019 eq. 4): the
loss's gradient, word links to piece targets, the errors, and a run whose guided head learns
the generator's gold alignment."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from attnkit.apps.translation.align.guided import (
    batch_targets,
    guidance_targets,
    guided_alignment_loss,
    head_weights,
    piece_target,
    split_words,
    tokenized,
)
from attnkit.apps.translation.config import load_experiment
from attnkit.errors import DataError
from attnkit.interpret.alignments import Alignment


def test_the_loss_gradient_is_softmax_minus_the_target_on_aligned_rows():
    torch.manual_seed(0)
    scores = torch.randn(2, 3, 4, requires_grad=True)  # (B, T, S)
    target = torch.zeros(2, 3, 4)
    target[0, 0, 1] = 1.0
    target[0, 2, 0] = target[0, 2, 3] = 0.5  # a word linked to two source words
    target[1, 1, 2] = 1.0  # rows (0, 1), (1, 0), (1, 2) are unaligned
    weights = scores.softmax(-1)
    loss = guided_alignment_loss(weights, target)
    loss.backward()
    aligned = target.sum(-1, keepdim=True)  # 1 on aligned rows, 0 elsewhere
    expected = (weights.detach() - target) * aligned  # d(-sum G log softmax)/d scores
    torch.testing.assert_close(scores.grad, expected)
    manual = -(torch.log(weights[0, 0, 1]) + 0.5 * torch.log(weights[0, 2, [0, 3]]).sum())
    manual = manual - torch.log(weights[1, 1, 2])
    torch.testing.assert_close(loss, manual)


def test_word_links_become_piece_targets():
    # source: 2 words in 3 pieces (piece 2 and half of piece 1 belong to word 1);
    # target: 2 words in 3 pieces (pieces 1 and 2 are word 1)
    src_pool = torch.tensor([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]], dtype=torch.float64)
    tgt_pool = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]], dtype=torch.float64)
    links = Alignment(frozenset({(1, 0)}), frozenset({(0, 1), (1, 1)}))
    g = piece_target(links, src_pool, tgt_pool)
    # word 1's share is spread over its pieces in proportion: piece 1 gets 0.5/1.5, piece 2 1/1.5
    word1 = torch.tensor([0.0, 1 / 3, 2 / 3])
    word0 = torch.tensor([2 / 3, 1 / 3, 0.0])
    expected = torch.stack([word1, (word0 + word1) / 2, (word0 + word1) / 2])
    torch.testing.assert_close(g, expected)
    with pytest.raises(DataError, match="here: link 2-0 .* 2 source and 2 target words"):
        piece_target(Alignment(frozenset({(2, 0)})), src_pool, tgt_pool, "here")


def test_split_words_gives_byte_spans_of_words_and_marks():
    text = "Die Straße, forty-five Äpfel."
    spans = split_words(text)
    data = text.encode("utf-8")
    words = [data[a:b].decode() for a, b in spans]
    assert words == ["Die", "Straße", ",", "forty-five", "Äpfel", "."]
    assert tokenized(text) == "Die Straße , forty-five Äpfel ."


def test_batch_targets_pad_and_head_weights_pick_one_head():
    g = batch_targets([torch.ones(2, 3), torch.ones(1, 1)], 3, 4)
    assert g.shape == (2, 3, 4) and g.sum() == 7
    attention = {f"layer{l}.cross": torch.rand(2, 4, 3, 5) + l for l in range(3)}
    attention["layer0.self"] = torch.zeros(1)
    torch.testing.assert_close(head_weights(attention, -2, 3), attention["layer1.cross"][:, 3])
    rnn = {"cross": torch.rand(2, 1, 3, 5)}
    torch.testing.assert_close(head_weights(rnn, -2, 0), rnn["cross"][:, 0])


class _Pieces:
    """Pieces = words (each word one piece), ids by a small table."""

    def __init__(self):
        self.ids = {}

    def encode(self, text, return_type):
        pieces = []
        for a, b in split_words(text):
            word = text.encode()[a:b].decode()
            pieces.append(
                SimpleNamespace(id=self.ids.setdefault(word, len(self.ids)), begin=a, end=b)
            )
        return SimpleNamespace(pieces=pieces)


def test_guidance_file_errors_name_the_file_and_line(tmp_path):
    side = _Pieces()
    tok = SimpleNamespace(src=side, tgt=side)
    pairs = [("a b", "x y"), ("c", "z")]
    examples = [
        SimpleNamespace(
            index=n,
            src=[p.id for p in side.encode(s, 0).pieces],
            tgt=[p.id for p in side.encode(t, 0).pieces],
        )
        for n, (s, t) in enumerate(pairs)
    ]
    path = tmp_path / "links.align"
    path.write_text("0-0 1-1\n0-0\n")
    targets = guidance_targets(tok, pairs, path, examples)
    torch.testing.assert_close(targets[0], torch.eye(2))
    path.write_text("0-0\n")
    with pytest.raises(DataError, match="links.align: 1 lines of alignments for 2 training pairs"):
        guidance_targets(tok, pairs, path, examples)
    path.write_text("0-0\n0-3\n")
    with pytest.raises(DataError, match=r"links.align, line 2: link 0-3 .* 1 source and 1 target"):
        guidance_targets(tok, pairs, path, examples)


def test_config_refuses_a_head_that_does_not_exist(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(
        "data: {corpus: default}\n"
        "model: {arch: transformer, d_model: 16, num_heads: 2, decoder_layers: 2}\n"
        "train: {guided_alignment: {file: links.align, head: 2}}\n"
    )
    with pytest.raises(Exception, match="c.yaml.*layer -2, head 2 do not exist"):
        load_experiment(config)
    config.write_text(config.read_text().replace("head: 2", "weight: 0"))
    with pytest.raises(Exception, match="c.yaml.*weight must be positive"):
        load_experiment(config)


def test_a_guided_head_learns_the_gold_alignment(tmp_path):
    """Two tiny Transformers, the same seed and data; one with its layer-0 head 0 guided by the
    generator's gold: that head's AER on held-out sentences is far lower."""
    from attnkit.apps.translation.align.extract import (
        generated_gold,
        run_attention,
        write_generated,
    )
    from attnkit.apps.translation.config import (
        DataConfig,
        ModelConfig,
        TrainConfig,
        TranslationConfig,
    )
    from attnkit.apps.translation.training import train
    from attnkit.interpret.alignments import argmax_links
    from attnkit.metrics.aer import alignment_error_rate

    sizes = (600, 30, 60)
    write_generated(tmp_path / "data", sizes, seed=1)
    model = ModelConfig(arch="transformer", d_model=32, num_heads=2, d_ff=64, dropout=0.0)
    model.encoder_layers = model.decoder_layers = 2
    gold = generated_gold(sizes, seed=1, split="test")
    pairs = list(zip(gold.source, gold.target, strict=True))
    aer = {}
    for guided in (False, True):
        train_cfg = TrainConfig(epochs=3, max_tokens=1500, learning_rate=0.003, schedule="constant")
        if guided:
            train_cfg.guided_alignment.file = str(tmp_path / "data" / "train.en-de.align")
            train_cfg.guided_alignment.one_based, train_cfg.guided_alignment.weight = True, 1.0
        data = DataConfig(generated_sizes=sizes, vocab_size=150, max_len=150)
        cfg = TranslationConfig(name="g", data=data, model=model, train=train_cfg)
        run = tmp_path / f"run-{guided}"
        train(cfg, run, progress=False)
        weights = run_attention(run, pairs, layer=0, head=0, shift=False, detok=True)
        aer[guided] = alignment_error_rate(gold.gold, [argmax_links(w) for w in weights]).aer
    assert aer[True] < 0.5 * aer[False], aer
