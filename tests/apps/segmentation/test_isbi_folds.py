"""ISBI cross-validation: data.fold / data.folds split the 30 slices into contiguous blocks."""

from __future__ import annotations

import pytest
from test_segmentation_data import _fake_isbi

from attnkit.apps.segmentation.config import load_config
from attnkit.apps.segmentation.data import isbi_slices, load_isbi


def test_folds_partition_the_slices_and_fold_4_is_the_fixed_split():
    tests = [list(isbi_slices("test", k, 5)) for k in range(5)]
    assert sorted(s for t in tests for s in t) == list(range(30))
    for k in range(5):
        assert sorted(isbi_slices("train", k, 5) + tests[k]) == list(range(30))
    assert tests[4] == list(isbi_slices("test")) == list(range(24, 30))
    assert list(isbi_slices("train", 1, 5)) == [*range(6), *range(12, 30)]
    assert list(isbi_slices("test", 2, 10)) == [6, 7, 8]


def test_load_isbi_reads_a_fold(tmp_path):
    root = _fake_isbi(tmp_path / "isbi-em")
    test = load_isbi(root, "test", fold=0)
    assert [s.name for s in test] == [f"{i}.png" for i in range(6)]
    assert len(load_isbi(root, "train", fold=0)) == 24


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{source: isbi, fold: 5}", "data.fold must be 0 to 4, got 5"),
        ("{source: isbi, fold: 0, folds: 7}", "folds must divide the 30 slices"),
        ("{source: shapes, fold: 0}", "source: isbi"),
    ],
)
def test_bad_folds_name_the_field_and_line(tmp_path, data, message):
    path = tmp_path / "c.yaml"
    path.write_text(f"name: x\ntask: segmentation\ndata: {data}\n")
    with pytest.raises(ValueError, match="line 3") as err:
        load_config(path)
    assert message in str(err.value)
