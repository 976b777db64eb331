"""The benchmark runner: its JSON report on a tiny kernels case, the schema check, the memory
sampler, and the crossover interpolation of the cost suite."""

import json

import pytest
import torch
from benchmarks.suites import check_schema, run_suite
from benchmarks.suites.cost import measured_crossover
from benchmarks.suites.measure import interleave, peak_rss
from benchmarks.suites.runner import BenchOptions


@pytest.fixture(scope="module")
def tiny_kernels(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "kernels.json"
    opts = BenchOptions(lengths=(16,), repeats=2, tiny=True, dtypes=("fp32",), memory=True)
    data = run_suite("kernels", opts, out)
    return data, json.loads(out.read_text())


def test_kernels_report_follows_the_schema(tiny_kernels):
    data, on_disk = tiny_kernels
    check_schema(on_disk)
    assert on_disk["suite"] == "kernels" and on_disk["versions"]["torch"] == torch.__version__
    assert on_disk["settings"]["torch_threads"] == torch.get_num_threads()
    assert "OMP_WAIT_POLICY" in on_disk["settings"]["env"]
    assert on_disk["machine"]["usable_cpus"] >= 1


def test_kernels_report_has_every_case_and_pair(tiny_kernels):
    _, data = tiny_kernels
    cases = {(r["params"].get("mode"), r["params"].get("mask")) for r in data["results"]}
    assert {("fwd", "causal"), ("fwd+bwd", "padding")} <= cases
    impls = {r["impl"] for r in data["results"]}
    assert {"attend", "sdpa", "MHA", "nn.MHA", "MHA+weights chunked", "torch.mm"} <= impls
    for row in data["results"]:
        assert row["time_s"]["n"] == (5 if row["impl"] == "torch.mm" else 2)
        if row["impl"] != "torch.mm":
            assert row["metrics"]["GFLOP/s"] > 0 and "peak_MB" in row["metrics"]
    pairs = {(c["ours"], c["reference"]) for c in data["comparisons"]}
    assert ("MHA", "nn.MHA") in pairs and ("MHA+weights", "nn.MHA+weights") in pairs
    for c in data["comparisons"]:  # ratio per repeat of the two interleaved timings
        assert c["ratio"]["n"] == 2 and c["ratio"]["min"] <= c["ratio"]["max"]


def test_markdown_has_one_row_per_comparison(tiny_kernels):
    from benchmarks.suites.report import markdown

    _, data = tiny_kernels
    text = markdown(data, comparisons_only=True)
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == len(data["comparisons"]) + 1  # the header
    assert "| MHA | nn.MHA |" in text


def test_check_schema_names_the_broken_field(tiny_kernels):
    _, data = tiny_kernels
    broken = json.loads(json.dumps(data))
    broken["results"][0]["time_s"]["median"] = broken["results"][0]["time_s"]["max"] + 1
    with pytest.raises(ValueError, match=r"results\[0\]"):
        check_schema(broken)
    del broken["load_average"]
    with pytest.raises(ValueError, match="load_average"):
        check_schema(broken)


def test_peak_rss_sees_a_large_temporary():
    def allocate():
        x = torch.ones(64 * 2**20 // 4)  # 64 MiB, touched
        return float(x.sum())

    assert peak_rss(allocate) >= 48 * 2**20
    assert peak_rss(lambda: 1 + 1) < 16 * 2**20


def test_interleave_rotates_and_counts():
    calls = []
    times = interleave({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, 3)
    assert calls == ["a", "b", "a", "b", "b", "a", "a", "b"]  # warm-up, then rotated rounds
    assert [len(t) for t in times.values()] == [3, 3]


def test_measured_crossover_interpolates_in_log_length():
    assert measured_crossover([100, 400], [2.0, 0.5]) == pytest.approx(200.0)
    assert measured_crossover([100, 400], [2.0, 1.5]) is None
    # the last fall through 1 counts: noise at short lengths does not decide it
    assert measured_crossover([50, 100, 200, 400], [2.0, 0.5, 2.0, 0.5]) == pytest.approx(283, 1e-2)
