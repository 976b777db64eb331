"""No data is an error, no validation split is not (issue 15, item 2).

Training used to exit 0 with an untrained model when every pair was dropped or the validation
file was empty, and crashed after epoch 1 without a validation split."""

import logging

import pytest

from attnkit.apps.translation.config import (
    DataConfig,
    ModelConfig,
    TrainConfig,
    TranslationConfig,
)
from attnkit.apps.translation.training import train
from attnkit.errors import DataError


def _files(tmp_path, n_valid: int = 0, *, blank_valid: int = 0):
    for lang, word in (("en", "a b c"), ("de", "x y z")):
        (tmp_path / f"train.{lang}").write_text("".join(f"{word} {i}\n" for i in range(60)))
        lines = [f"{word} {i}\n" for i in range(n_valid)] + ["\n"] * blank_valid
        (tmp_path / f"valid.{lang}").write_text("".join(lines))


def _config(tmp_path, *, valid: bool = True, max_len: int = 100) -> TranslationConfig:
    data = DataConfig(
        corpus="files",
        train=str(tmp_path / "train"),
        src_lang="en",
        tgt_lang="de",
        vocab_size=40,
        max_len=max_len,
        valid=str(tmp_path / "valid") if valid else None,
    )
    return TranslationConfig(
        name="empty",
        data=data,
        model=ModelConfig(embed_dim=8, hidden_dim=8),
        train=TrainConfig(epochs=2, threads=1),
    )


def test_every_training_pair_dropped_names_the_files_and_counts(tmp_path):
    _files(tmp_path, 3)
    with pytest.raises(DataError) as err:
        train(_config(tmp_path, max_len=1), tmp_path / "run", progress=False)
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'train'}.en and {tmp_path / 'train'}.de:")
    assert "read 60 lines: 0 with an empty side, 60 longer than data.max_len = 1" in message


@pytest.mark.parametrize("blank", [0, 4])
def test_an_empty_validation_file_is_an_error(tmp_path, blank):
    _files(tmp_path, 0, blank_valid=blank)
    with pytest.raises(DataError, match="the validation split is empty") as err:
        train(_config(tmp_path), tmp_path / "run", progress=False)
    assert f"valid.en and {tmp_path / 'valid'}.de" in str(err.value)
    assert f"read {blank} lines: {blank} with an empty side" in str(err.value)
    assert not (tmp_path / "run" / "model.safetensors").exists()


def test_no_validation_split_trains_and_keeps_the_last_epoch(tmp_path, caplog):
    _files(tmp_path)
    with caplog.at_level(logging.INFO):
        result = train(_config(tmp_path, valid=False), tmp_path / "run", progress=False)
    assert result.best_epoch == 2  # the last epoch: nothing to compare epochs with
    assert (tmp_path / "run" / "model.safetensors").is_file()
    assert "no validation split" in caplog.text
    assert "no validation data: the model of the last epoch is kept" in caplog.text
    assert "plateau schedule follows the training loss" in caplog.text
