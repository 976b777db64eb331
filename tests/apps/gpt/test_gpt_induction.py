"""The ``repeated`` source (random tokens, then the same again: induction heads, Olsson et al.
2022): its rows repeat their first half, with a fixed or drawn period; training batches are
pure in (seed, epoch); validation splits the loss into the first copy and the repeat (checked
against the model's own cross-entropy) and scores the heads; a few updates through the engine
train, save and reopen; bad combinations are config errors naming the file, line and field."""

import math

import pytest
import torch
import torch.nn.functional as F
import yaml

from attnkit.apps.gpt.config import (
    GPTConfig,
    GPTDataConfig,
    GPTModelConfig,
    GPTTrainConfig,
    load_config,
)
from attnkit.apps.gpt.data import read_corpus, repeated_rows, symbol_vocab
from attnkit.apps.gpt.model import GPT
from attnkit.apps.gpt.run import open_gpt_run
from attnkit.apps.gpt.task import GPTTask, estimate_loss, validate_repeated
from attnkit.config import ConfigError
from attnkit.engine.trainer import fit

HALF, VOCAB = 6, 11


def _config(**train) -> GPTConfig:
    cfg = {
        "name": "tiny-induction",
        "task": "language-model",
        "data": {"source": "repeated", "vocab_size": VOCAB, "half": HALF, "block_size": 2 * HALF},
        "model": {"layers": 2, "heads": 2, "width": 16, "mlp": False, "positions": "rope"},
        "train": {"epochs": 2, "eval_interval": 3, "batch_size": 8, "warmup_steps": 2,
                  "precision": "fp32", "threads": 1, **train},
    }  # fmt: skip
    return GPTConfig(
        cfg["name"],
        cfg["task"],
        GPTDataConfig(**cfg["data"]),
        GPTModelConfig(**cfg["model"]),
        GPTTrainConfig(**cfg["train"]),
    )


def test_rows_repeat_their_first_half_and_a_seed_repeats_them():
    rows = repeated_rows(50, HALF, VOCAB, torch.Generator().manual_seed(3))
    assert rows.shape == (50, 2 * HALF + 1) and int(rows.max()) < VOCAB
    assert torch.equal(rows[:, :HALF], rows[:, HALF : 2 * HALF])
    assert torch.equal(rows[:, -1], rows[:, 0])  # the period continues into the last target
    assert len(rows[:, :HALF].unique()) == VOCAB  # every token drawn somewhere
    assert torch.equal(rows, repeated_rows(50, HALF, VOCAB, torch.Generator().manual_seed(3)))
    assert not torch.equal(rows, repeated_rows(50, HALF, VOCAB, torch.Generator().manual_seed(4)))


def test_drawn_periods_repeat_each_rows_own_first_tokens():
    rows = repeated_rows(200, HALF, 1000, torch.Generator().manual_seed(0), min_period=3)
    periods = set()
    for row in rows:
        period = next(p for p in range(1, HALF + 1) if torch.equal(row[p:], row[:-p]))
        periods.add(period)
    assert periods == {3, 4, 5, 6}


def test_batches_are_pure_in_seed_and_epoch_and_validation_is_fixed():
    task = GPTTask(_config())
    task.prepare(None, resume=False)
    first = task.epoch_batches(1)
    assert len(first) == 3 and first[0].shape == (8, 2 * HALF + 1)
    assert all(torch.equal(a, b) for a, b in zip(first, task.epoch_batches(1), strict=True))
    assert not torch.equal(first[0], task.epoch_batches(2)[0])
    x, y = task.collate(first[0])
    assert torch.equal(x[:, 1:], y[:, :-1]) and task.units(first[0]) == 8 * 2 * HALF
    again = read_corpus(_config().data)
    assert torch.equal(again.valid, task.corpus.valid) and again.vocab == symbol_vocab(VOCAB)
    valid = task.corpus.valid.view(-1, 2 * HALF + 1)  # (N, T + 1)
    assert torch.equal(valid[:, :HALF], valid[:, HALF:-1])


def test_validate_splits_the_loss_into_the_first_copy_and_the_repeat():
    cfg = _config()
    torch.manual_seed(0)
    model = GPT(cfg.model, VOCAB, 2 * HALF)
    corpus = read_corpus(cfg.data)
    scores = validate_repeated(model, corpus.valid, cfg)
    assert set(scores) == {
        "valid_loss",
        "first_half_loss",
        "repeat_loss",
        "prefix_matching",
        "prefix_matching_layer1",
        "previous_token",
    }
    rows = corpus.valid.view(-1, 2 * HALF + 1)  # (N, T + 1)
    with torch.no_grad():
        logits = model(rows[:, :-1]).logits  # (N, T, V)
    losses = F.cross_entropy(logits.transpose(1, 2), rows[:, 1:], reduction="none")  # (N, T)
    assert scores["first_half_loss"] == pytest.approx(float(losses[:, : HALF - 1].mean()), 1e-5)
    assert scores["repeat_loss"] == pytest.approx(float(losses[:, HALF:].mean()), 1e-5)
    assert scores["valid_loss"] == pytest.approx(float(losses.mean()), 1e-5)
    assert scores["valid_loss"] == pytest.approx(estimate_loss(model, corpus.valid, cfg), 1e-6)
    assert scores["repeat_loss"] == pytest.approx(math.log(VOCAB), abs=0.2)  # untrained
    assert 0 < scores["prefix_matching"] < 1 and 0 < scores["previous_token"] < 1


def test_a_few_updates_train_save_and_reopen(tmp_path):
    result = fit(GPTTask(_config()), tmp_path / "run", progress=False)
    assert len(result.history) == 2
    assert {"first_half_loss", "repeat_loss", "prefix_matching"} <= set(result.history[-1])
    run = open_gpt_run(tmp_path / "run")
    assert run.vocab == symbol_vocab(VOCAB)
    loss = estimate_loss(run.model, read_corpus(run.config.data).valid, run.config)
    assert loss == pytest.approx(result.best["valid_loss"], 1e-5)
    assert len(run.generate("0123", 5, temperature=0)) == 5
    from attnkit.application import EvaluateOptions
    from attnkit.apps.gpt.app import APP

    scores = APP.evaluate(tmp_path / "run", EvaluateOptions(split="valid"))
    cfg = run.config.data  # the tokens predicted: block_size of each row's block_size + 1
    assert scores.count == len(read_corpus(cfg).valid) // (cfg.block_size + 1) * cfg.block_size
    assert scores.unit == "tokens"


@pytest.mark.parametrize(
    "data, message",
    [
        ({"source": "repeated", "half": 32}, "data.vocab_size is needed by source 'repeated'"),
        ({"source": "repeated", "vocab_size": 50}, "data.half is needed"),
        ({"source": "repeated", "vocab_size": 50, "half": 16}, "data.half must be block_size / 2"),
        ({"source": "repeated", "vocab_size": 50, "half": 32, "min_period": 40},
         "data.min_period must be at most half (32)"),
        ({"source": "repeated", "vocab_size": 50, "half": 32, "path": "x.txt"},
         "data.path is not read by source 'repeated'"),
        ({"source": "shakespeare", "vocab_size": 50}, "data.vocab_size is for source 'repeated'"),
    ],
)  # fmt: skip
def test_bad_combinations_are_config_errors_naming_the_line(tmp_path, data, message):
    path = tmp_path / "c.yaml"
    cfg = {"name": "x", "task": "language-model", "data": {"block_size": 64, **data}}
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert message in str(err.value) and f"{path}, line " in str(err.value)
