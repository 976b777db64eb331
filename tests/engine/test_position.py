"""The typed data position a checkpoint saves and a resume reads back."""

from __future__ import annotations

import json

import pytest

from attnkit.engine.position import DataPosition


def test_a_position_survives_json_and_sums_its_updates():
    p = DataPosition.start_of(3)
    p.advance(2, loss_sum=6.0, units=4.0, stats={"acc": 0.5})
    p.advance(1, loss_sum=2.0, units=4.0, stats={"acc": 0.25})
    assert (p.epoch, p.batch, p.steps, p.mean_loss) == (3, 3, 2, 1.0)
    assert p.stats == {"acc": 0.75}
    back = DataPosition.from_dict(json.loads(json.dumps(p.as_dict())), epoch=99)
    assert back == p  # the saved epoch wins over the default


def test_older_checkpoints_and_damaged_ones():
    legacy = DataPosition.from_dict({"batch": 4, "tokens": 120}, epoch=2)
    assert (legacy.epoch, legacy.batch, legacy.units) == (2, 4, 120.0)
    with pytest.raises(ValueError, match=r"unknown fields \['bacth'\]"):
        DataPosition.from_dict({"bacth": 4}, epoch=1)
