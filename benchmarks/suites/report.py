"""What a benchmark run records: the machine, the versions, the settings, the timings.

A :class:`Report` holds one suite's results; :meth:`Report.write` saves it as JSON (the
``attnkit-bench/1`` schema, checked by :func:`check_schema`) and :func:`print_table` prints it.
Times are medians over repeats with their min-max; a comparison's ratio is taken per repeat
(attnkit's time over the reference's, the two run back to back), then summarised the same way.
"""

from __future__ import annotations

import datetime as _dt
import json
import shlex
import statistics
import sys
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path

from benchmarks.suites.environment import load_average, machine, settings, versions

SCHEMA = "attnkit-bench/1"


def summary(times: list[float]) -> dict:
    """Median and min-max of repeated measurements (seconds or ratios)."""
    return {
        "median": statistics.median(times),
        "min": min(times),
        "max": max(times),
        "n": len(times),
    }


@dataclass
class Result:
    """One implementation on one case: ``times`` in seconds, plus derived ``metrics``
    (GFLOP/s, fraction of peak, peak memory, tokens/s, ...)."""

    case: str
    impl: str
    params: dict
    times: list[float]
    metrics: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {**plain(asdict(self)), "time_s": summary(self.times)}


@dataclass
class Comparison:
    """attnkit (``ours``) against a reference on one case: per-repeat time ratios
    ours/reference (below 1 = attnkit faster), or for throughputs ours/reference (above 1 =
    attnkit faster) as ``kind`` says."""

    case: str
    ours: str
    reference: str
    ratios: list[float]
    kind: str = "time ours/reference (lower is better)"
    target: str | None = None
    met: bool | None = None

    def to_json(self) -> dict:
        return {**asdict(self), "ratio": summary(self.ratios)}


@dataclass
class Report:
    suite: str
    command: str
    options: dict
    results: list[Result] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    data: dict = field(default_factory=dict)  # other figures; written as "data" if any
    extra_versions: dict = field(default_factory=dict)
    started: str = field(default_factory=lambda: _dt.datetime.now(_dt.UTC).isoformat())
    load_start: list[float] = field(default_factory=load_average)

    def to_json(self) -> dict:
        return {
            "schema": SCHEMA,
            "suite": self.suite,
            "command": self.command,
            "started": self.started,
            "finished": _dt.datetime.now(_dt.UTC).isoformat(),
            "machine": machine(),
            "versions": versions(self.extra_versions),
            "settings": settings(),
            "load_average": {"start": self.load_start, "end": load_average()},
            "options": plain(self.options),
            "results": [r.to_json() for r in self.results],
            "comparisons": [c.to_json() for c in self.comparisons],
            "notes": self.notes,
        } | ({"data": plain(self.data)} if self.data else {})

    def write(self, path: str | Path) -> dict:
        data, path = self.to_json(), Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        return data


def plain(value):
    """``value`` in JSON types: tuples and sets as lists, dataclasses as dicts, paths as str."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(v) for v in (sorted(value, key=str) if isinstance(value, set) else value)]
    if is_dataclass(value) and not isinstance(value, type):
        return plain(asdict(value))
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return plain(value.item()) if callable(getattr(value, "item", None)) else str(value)


def script_command(script: str, argv: list[str] | None = None) -> str:
    """A stand-alone script's command line: ``python benchmarks/nab.py --skip-solar``."""
    return shlex.join(["python", script, *(sys.argv[1:] if argv is None else argv)])


_REQUIRED = {
    "schema": str,
    "suite": str,
    "command": str,
    "started": str,
    "finished": str,
    "machine": dict,
    "versions": dict,
    "settings": dict,
    "load_average": dict,
    "options": dict,
    "results": list,
    "comparisons": list,
    "notes": list,
}


def check_schema(data: dict) -> None:
    """Raise ``ValueError`` naming the first field that breaks the ``attnkit-bench/1`` schema."""
    for key, kind in _REQUIRED.items():
        if not isinstance(data.get(key), kind):
            raise ValueError(f"report field {key!r} missing or not a {kind.__name__}")
    if data["schema"] != SCHEMA:
        raise ValueError(f"report schema {data['schema']!r}, expected {SCHEMA!r}")
    for key in ("cpu_model", "logical_cpus", "usable_cpus"):
        if key not in data["machine"]:
            raise ValueError(f"report machine.{key} missing")
    if "torch" not in data["versions"] or "torch_threads" not in data["settings"]:
        raise ValueError("report versions.torch or settings.torch_threads missing")
    for end in ("start", "end"):
        if len(data["load_average"].get(end, [])) != 3:
            raise ValueError(f"report load_average.{end} is not three numbers")
    for i, row in enumerate(data["results"]):
        stats = row.get("time_s", {})
        if not all(k in stats for k in ("median", "min", "max", "n")):
            raise ValueError(f"report results[{i}].time_s lacks median/min/max/n")
        if not stats["min"] <= stats["median"] <= stats["max"]:
            raise ValueError(f"report results[{i}].time_s is not ordered min <= median <= max")
    for i, row in enumerate(data["comparisons"]):
        if not all(k in row.get("ratio", {}) for k in ("median", "min", "max", "n")):
            raise ValueError(f"report comparisons[{i}].ratio lacks median/min/max/n")
    if not isinstance(data.get("data", {}), dict):
        raise ValueError("report field 'data' is not a dict")


def print_table(data: dict, metrics: tuple[str, ...] = ()) -> None:
    """The results and comparisons of a report as two rich tables."""
    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(Console().width, 150))
    load = data["load_average"]
    console.print(
        f"[bold]{data['suite']}[/] on {data['machine']['cpu_model']} "
        f"({data['machine']['usable_cpus']} CPUs), torch {data['versions']['torch']}, "
        f"{data['settings']['torch_threads']} threads, load {load['start'][0]} -> {load['end'][0]}"
    )
    table = Table("case", "impl", "median", "min-max", *metrics)
    for row in data["results"]:
        t = row["time_s"]
        cells = [_fmt(row["metrics"].get(m)) for m in metrics]
        table.add_row(
            row["case"],
            row["impl"],
            _seconds(t["median"]),
            f"{_seconds(t['min'])}-{_seconds(t['max'])}",
            *cells,
        )
    console.print(table)
    if data["comparisons"]:
        table = Table("case", "attnkit", "reference", "ratio", "min-max", "target", "met")
        for row in data["comparisons"]:
            r = row["ratio"]
            met = {True: "yes", False: "NO", None: ""}[row["met"]]
            table.add_row(
                row["case"],
                row["ours"],
                row["reference"],
                f"{r['median']:.2f}",
                f"{r['min']:.2f}-{r['max']:.2f}",
                row["target"] or "",
                met,
            )
        console.print(table)
    for note in data["notes"]:
        console.print(f"note: {note}")


def _seconds(s: float) -> str:
    return f"{s * 1e3:.1f} ms" if s < 10 else f"{s:.1f} s"


def _fmt(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def markdown(data: dict, metrics: tuple[str, ...] = (), comparisons_only: bool = False) -> str:
    """A report's comparisons (and results, unless ``comparisons_only``) as Markdown tables."""
    lines = []
    if not comparisons_only:
        head = ["case", "impl", "median", "min-max", *metrics]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for row in data["results"]:
            t = row["time_s"]
            cells = [_fmt(row["metrics"].get(m)) for m in metrics]
            span = f"{_seconds(t['min'])}-{_seconds(t['max'])}"
            lines.append(
                f"| {row['case']} | {row['impl']} | {_seconds(t['median'])} | {span} | "
                + " | ".join(cells)
                + (" |" if cells else "|")
            )
        lines.append("")
    if data["comparisons"]:
        head = ["case", "attnkit", "reference", "ratio (median)", "min-max", "target", "met"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for row in data["comparisons"]:
            r = row["ratio"]
            met = {True: "yes", False: "**no**", None: ""}[row["met"]]
            lines.append(
                f"| {row['case']} | {row['ours']} | {row['reference']} | {r['median']:.2f} | "
                f"{r['min']:.2f}-{r['max']:.2f} | {row['target'] or ''} | {met} |"
            )
    return "\n".join(lines) + "\n"
