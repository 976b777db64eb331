"""The applications' model configs (``model:`` sections) declare their bounds on the fields and
keep only the rules between fields in ``check``: a bad value in a shipped config is refused by
the loader with the file, the line and the field, and the same value refused with the same
words when the dataclass is built in code."""

from __future__ import annotations

import dataclasses

import pytest
import yaml
from tests.config.test_config_bounds import CONFIGS, _broken

from attnkit.apps.captioning.config import load_experiment as load_captioning
from attnkit.apps.captioning.model import CaptionerConfig
from attnkit.apps.im2latex.config import load_config as load_im2latex
from attnkit.apps.im2latex.model import FormulaModelConfig
from attnkit.apps.segmentation.config import load_config as load_segmentation
from attnkit.apps.segmentation.model import UNetConfig
from attnkit.apps.speech.config import load_config as load_speech
from attnkit.apps.speech.model import SpeechModelConfig
from attnkit.apps.stocks.config import load_config as load_stocks
from attnkit.apps.stocks.model import StockModelConfig
from attnkit.apps.vision.config import load_config as load_vision
from attnkit.apps.vision.model import ViTConfig
from attnkit.config import ConfigError

SHIPPED = {  # each model config class: a shipped config of its application and its loader
    ViTConfig: ("digits-vit.yaml", load_vision),
    StockModelConfig: ("stocks-alpha-t-rim.yaml", load_stocks),
    FormulaModelConfig: ("formulas-im2latex.yaml", load_im2latex),
    UNetConfig: ("shapes-unet.yaml", load_segmentation),
    CaptionerConfig: ("scenes-soft-small.yaml", load_captioning),
    SpeechModelConfig: ("fsdd-las.yaml", load_speech),
}
POOLS = "[[2, 2], [2, 0], [2, 1], [1, 2]]"
CASES = [  # (class, model key, bad value, the message after the field)
    (ViTConfig, "patch_size", "0", "must be at least 1, got 0"),
    (ViTConfig, "channels", "2", "must be 1 or 3, got 2"),
    (ViTConfig, "dropout", "1.0", "must be in [0, 1), got 1.0"),
    (ViTConfig, "patch_size", "3", "3 does not divide image_size 8; choose a divisor"),
    (ViTConfig, "num_heads", "3", "3 does not divide d_model 64; choose a divisor"),
    (StockModelConfig, "cells", "0", "must be at least 1, got 0"),
    (StockModelConfig, "dropout", "1.0", "must be in [0, 1), got 1.0"),
    (StockModelConfig, "active", "7", "(7) must not exceed cells (6)"),
    (FormulaModelConfig, "d_row", "0", "must be at least 1, got 0"),
    (FormulaModelConfig, "block", "[2, 0]", "must all be at least 1, got [2, 0]"),
    (FormulaModelConfig, "dropout", "-0.1", "must be in [0, 1), got -0.1"),
    (
        FormulaModelConfig,
        "pools",
        POOLS,
        f"must each be [rows, columns], both at least 1, got {POOLS}",
    ),
    (UNetConfig, "in_channels", "0", "must be at least 1, got 0"),
    (UNetConfig, "channels", "[16, 1]", "must all be at least 2, got [16, 1]"),
    (UNetConfig, "channels", "[16]", "needs two or more levels, got [16]"),
    (CaptionerConfig, "hard_expectation", "1.5", "must be in [0, 1], got 1.5"),
    (CaptionerConfig, "grid", "0", "must be at least 1, got 0"),
    (
        CaptionerConfig,
        "canvas",
        "24",
        "24 must be grid 4 times a power of two; change model.grid or model.canvas",
    ),
    (SpeechModelConfig, "pyramid", "-1", "must be at least 0, got -1"),
    (SpeechModelConfig, "ctc_weight", "1.5", "must be in [0, 1], got 1.5"),
    (
        SpeechModelConfig,
        "conv_width",
        "4",
        "must be odd (a filter centred on each annotation), got 4",
    ),
]


@pytest.mark.parametrize(
    ("cls", "key", "value", "message"), CASES, ids=[f"{c[0].__name__}.{c[1]}={c[2]}" for c in CASES]
)
def test_a_bad_model_value_is_refused_in_a_file_and_in_code(tmp_path, cls, key, value, message):
    name, load = SHIPPED[cls]
    path, line = _broken(tmp_path, name, "model", key, value)
    with pytest.raises(ConfigError) as err:
        load(path)
    assert str(err.value) == f"{path}, line {line}: model.{key} {message}"
    shipped = load(CONFIGS / name).model
    assert type(shipped) is cls
    with pytest.raises(ValueError) as err:  # built in code: the same words, less the place
        dataclasses.replace(shipped, **{key: yaml.safe_load(value)})
    assert str(err.value) == f"{key} {message}"
