"""The strict CSV reader, the NAB loader and the solar generator's truth."""

import os
from pathlib import Path

import numpy as np
import pytest

from attnkit.apps.anomaly.solar import generate_solar
from attnkit.apps.anomaly.timeseries import TimeSeriesError, load_nab, read_csv, write_csv

GOOD = (
    "timestamp,a,b\n2024-01-01 00:00:00,1,10\n2024-01-01 01:00:00,2,20\n2024-01-01 02:00:00,4,40\n"
)


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "series.csv"
    path.write_text(text)
    return path


def test_reads_timestamp_and_value_columns(tmp_path):
    s = read_csv(write(tmp_path, GOOD))
    assert s.columns == ["a", "b"] and s.values.shape == (3, 2)
    assert s.values[2].tolist() == [4.0, 40.0]
    assert str(s.timestamps[1]) == "2024-01-01T01:00:00" and s.repairs == []
    assert read_csv(write(tmp_path, GOOD), value_columns=["b"]).values[:, 0].tolist() == [
        10,
        20,
        40,
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD.replace(",2,20", ",,20"), "line 3, column 'a': missing value"),
        (GOOD.replace(",2,20", ",2,abc"), "line 3, column 'b': 'abc' is not a number"),
        (GOOD.replace(",4,40", ",4,inf"), "line 4, column 'b': 'inf' is not a number"),
        (
            GOOD.replace("02:00:00", "00:30:00"),
            "line 4, column 'timestamp': timestamp 2024-01-01T00:30:00 is earlier",
        ),
        (GOOD.replace("02:00:00", "01:00:00"), "line 4, column 'timestamp': duplicate timestamp"),
        (
            GOOD.replace("2024-01-01 01:00:00", "yesterday"),
            "line 3, column 'timestamp': 'yesterday' is not",
        ),
        (GOOD.replace(",2,20", ",2"), "line 3: 2 fields, the header has 3"),
        ("time,a\n2024-01-01,1\n", "line 1: no 'timestamp' column"),
    ],
)
def test_bad_input_names_file_line_and_column(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(TimeSeriesError) as err:
        read_csv(path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_documented_repairs_are_exact_and_reported(tmp_path):
    text = (
        "timestamp,a\n2024-01-01 02:00:00,4\n2024-01-01 00:00:00,0\n"
        "2024-01-01 01:00:00,\n2024-01-01 03:00:00,5\n2024-01-01 03:00:00,7\n"
    )
    s = read_csv(
        write(tmp_path, text), on_missing="interpolate", on_unsorted="sort", on_duplicate="mean"
    )
    assert s.values[:, 0].tolist() == [0.0, 2.0, 4.0, 6.0]  # sorted, 1:00 interpolated, mean
    assert len(s.repairs) == 3
    first = read_csv(
        write(tmp_path, text), on_missing="interpolate", on_unsorted="sort", on_duplicate="first"
    )
    assert first.values[-1, 0] == 5.0
    with pytest.raises(TimeSeriesError, match="not a number"):  # text is never "repaired"
        read_csv(write(tmp_path, GOOD.replace(",2,20", ",x,20")), on_missing="interpolate")


def test_generator_is_deterministic_and_its_truth_is_exact():
    a, b = generate_solar(seed=3), generate_solar(seed=3)
    np.testing.assert_array_equal(a.values, b.values)
    assert a.windows == b.windows and a.kinds == [
        "fault",
        "snow",
        "shading",
        "shading",
        "shading",
        "spike",
    ]
    clean = generate_solar(seed=3, anomalies=())  # same weather and noise, nothing injected
    changed = np.nonzero(a.values[:, 0] != clean.values[:, 0])[0]
    labels = a.labels()
    assert labels[changed].all()  # every changed row is inside a window
    for (first, last), kind in zip(a.windows, a.kinds, strict=True):
        rows = a.values[first : last + 1, 0]
        base = clean.values[first : last + 1, 0]
        if kind == "fault":
            assert (rows == 0).all() and (base > 0).all()
        elif kind == "snow":
            ratio = rows[base > 0] / base[base > 0]
            assert np.allclose(ratio, ratio[0]) and 0.15 <= ratio[0] <= 0.35
        elif kind == "shading":
            assert np.allclose(rows, 0.4 * base)
        else:
            day = clean.values[first // 48 * 48 : (first // 48 + 1) * 48, 0]
            assert rows[0] > 1.6 * day.max()  # 1.8-2.5 times the day's peak
    assert not np.array_equal(generate_solar(seed=4).values, a.values)


def test_write_then_read_round_trip(tmp_path):
    s = generate_solar(days=20, steps_per_day=24, clean_days=5, seed=1)
    write_csv(s, tmp_path / "solar.csv")
    back = read_csv(tmp_path / "solar.csv")
    np.testing.assert_allclose(back.values, s.values, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(back.timestamps, s.timestamps)


NAB = (
    Path(os.environ.get("ATTNKIT_DATA_DIR") or Path(__file__).parents[3] / ".." / "shared" / "data")
    / "nab"
)


@pytest.mark.skipif(not (NAB / "labels").is_dir(), reason=f"NAB not found at {NAB}")
def test_nab_loader_windows_match_the_labels():
    series = load_nab(NAB, ["realKnownCause/nyc_taxi.csv", "artificialNoAnomaly/art_flatline.csv"])
    taxi, flat = series
    assert len(taxi) == 10320 and len(taxi.windows) == 5 and flat.windows == []
    first, last = taxi.windows[0]
    assert str(taxi.timestamps[first]) == "2014-10-30T15:30:00"
    assert str(taxi.timestamps[last]) == "2014-11-03T22:30:00"
