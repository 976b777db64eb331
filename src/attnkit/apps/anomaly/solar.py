"""Daily solar-inverter-like series with injected anomalies whose truth is known (the kinds of
anomaly in Pereira & Silveira 2018: faults, snow, shading, spikes)."""

from __future__ import annotations

import numpy as np

from attnkit.apps.anomaly.timeseries import TimeSeries

SOLAR_KINDS = ("fault", "snow", "shading", "spike")


def generate_solar(
    days: int = 60,
    steps_per_day: int = 48,
    *,
    anomalies: tuple[str, ...] = SOLAR_KINDS,
    clean_days: int = 14,
    noise: float = 0.02,
    seed: int = 0,
) -> TimeSeries:
    """A daily solar-inverter-like output series with injected anomalies and their truth.

    Normal output on day ``d`` at hour ``h`` is ``peak_d * max(0, sin(pi (h - 6) / 12))`` plus
    Gaussian noise (``peak_d`` varies with the weather in [0.75, 1.0]). After ``clean_days``
    normal days, one anomaly of each kind in ``anomalies`` is injected, in order, in separate
    days (as in the anomalies of Pereira & Silveira 2018):

    - ``fault``: output drops to zero for 4 to 8 daylight hours;
    - ``snow``: output scaled by 0.15 to 0.35 for 1 to 2 days;
    - ``shading``: the afternoon (13:00-17:00) scaled by 0.4 on 3 consecutive days (one
      window per afternoon);
    - ``spike``: one reading at 1.8 to 2.5 times the day's peak.

    Returns a :class:`TimeSeries` whose ``windows`` are the exact rows changed (the truth) and
    whose ``kinds`` name each. The same ``seed`` gives the same series.
    """
    rng = np.random.default_rng(seed)
    hours = (np.arange(days * steps_per_day) % steps_per_day) * 24.0 / steps_per_day
    peak = np.repeat(rng.uniform(0.75, 1.0, days), steps_per_day)
    clear = np.clip(np.sin(np.pi * (hours - 6.0) / 12.0), 0.0, None)
    values = peak * clear + noise * rng.standard_normal(days * steps_per_day) * (clear > 0)
    values = np.clip(values, 0.0, None)
    free = days - clean_days
    need = {"fault": 2, "snow": 3, "shading": 4, "spike": 2}
    if sum(need[k] for k in anomalies) > free:
        raise ValueError(f"{days} days leave no room for {anomalies} after {clean_days} clean")
    windows, kinds = [], []
    day = clean_days + 1
    for kind in anomalies:
        if kind not in need:
            raise ValueError(f"unknown anomaly kind {kind!r}; choose from {SOLAR_KINDS}")
        for window in _inject(kind, values, peak, day * steps_per_day, steps_per_day, rng):
            windows.append(window)
            kinds.append(kind)
        day += need[kind]
    start = np.datetime64("2024-03-01T00:00:00", "s")
    ts = start + (np.arange(days * steps_per_day) * int(86400 / steps_per_day)).astype(
        "timedelta64[s]"
    )
    return TimeSeries(f"solar-seed{seed}", ts, values[:, None], ["power"], windows, kinds)


def _inject(kind: str, values, peak, base: int, steps_per_day: int, rng) -> list[tuple[int, int]]:
    """Change ``values`` in place from row ``base`` on by one anomaly of ``kind``; returns the
    windows of rows changed (shading: one per afternoon)."""
    step = steps_per_day / 24.0
    if kind == "fault":
        length = int(rng.integers(4, 9) * step)
        first = base + int(rng.integers(8, 17 - length / step + 1) * step)
        last = first + length - 1
        values[first : last + 1] = 0.0
        return [(int(first), int(last))]
    if kind == "snow":
        first, last = base, base + int(rng.integers(1, 3)) * steps_per_day - 1
        values[first : last + 1] *= rng.uniform(0.15, 0.35)
        return [(int(first), int(last))]
    if kind == "shading":
        windows = []
        for k in range(3):  # one window per shaded afternoon
            first = base + k * steps_per_day + int(13 * step)
            last = base + k * steps_per_day + int(17 * step) - 1
            values[first : last + 1] *= 0.4
            windows.append((int(first), int(last)))
        return windows
    first = base + int(rng.integers(10, 15) * step)
    values[first] = peak[first] * rng.uniform(1.8, 2.5)
    return [(int(first), int(first))]
