"""The ``train`` and ``decode`` suites on tiny models and a few real Multi30k pairs, without
JoeyNMT (it is not installed for the tests): what attnkit's side measures and records."""

import os
from pathlib import Path

import pytest
from benchmarks.suites import run_suite
from benchmarks.suites.runner import BenchOptions
from benchmarks.suites.seq2seq_suites import MAX_OUTPUT

_DATA = Path(
    os.environ.get("ATTNKIT_DATA_DIR") or Path(__file__).parents[2] / ".." / "shared" / "data"
)


@pytest.fixture(scope="module")
def opts(tmp_path_factory):
    if not (_DATA / "multi30k").is_dir():
        pytest.skip(f"Multi30k not found under {_DATA}")
    work = tmp_path_factory.mktemp("bench-translation")
    return BenchOptions(
        tiny=True, repeats=1, pairs=40, sentences=4, data_dir=str(_DATA), work_dir=str(work)
    )


def test_train_times_fp32_and_bf16_on_the_same_tokens(opts, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNKIT_BF16_NATIVE", "1")  # a CPU with native bfloat16
    data = run_suite("train", opts, tmp_path / "train.json")
    rows = {(r["case"], r["impl"]): r for r in data["results"]}
    for model in ("rnn", "transformer"):
        fp32, bf16 = rows[(f"train {model}", "attnkit")], rows[(f"train {model}", "attnkit bf16")]
        assert fp32["metrics"]["tokens"] == bf16["metrics"]["tokens"] > 0
        assert fp32["metrics"]["tokens/s"] > 0 and bf16["metrics"]["tokens/s"] > 0
    assert data["comparisons"] == []  # nothing to compare with: JoeyNMT was not given
    assert any("JoeyNMT skipped" in note for note in data["notes"])


def test_train_without_bf16_times_fp32_only(opts, tmp_path):
    from dataclasses import replace

    data = run_suite("train", replace(opts, dtypes=("fp32",)), tmp_path / "train.json")
    assert {r["impl"] for r in data["results"]} == {"attnkit"}


def test_bf16_rows_are_skipped_and_said_where_the_cpu_lacks_bf16(opts, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNKIT_BF16_NATIVE", "0")  # e.g. an AVX2-only CPU
    data = run_suite("train", opts, tmp_path / "train.json")
    assert {r["impl"] for r in data["results"]} == {"attnkit"}
    assert any(n.startswith("bf16 rows skipped: ATTNKIT_BF16_NATIVE=0") for n in data["notes"])


def test_decode_forces_every_sentence_to_the_step_limit(opts, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNKIT_BF16_NATIVE", "1")
    data = run_suite("decode", opts, tmp_path / "decode.json")
    cases = {r["case"] for r in data["results"]}
    assert cases == {
        f"decode {m} {s}" for m in ("rnn", "transformer") for s in ("greedy", "beam 5")
    }
    for row in data["results"]:
        assert row["metrics"]["out_tokens"] == MAX_OUTPUT
        assert row["metrics"]["sentences"] == opts.sentences
    # both precisions are timed on every case (bf16 autocast is in the default dtypes)
    impls = {(r["case"], r["impl"]) for r in data["results"]}
    assert impls == {(c, i) for c in cases for i in ("attnkit", "attnkit bf16")}
