"""The stand-alone benchmark scripts write the ``attnkit-bench/1`` report of the suites: each
script's report-building function on made-up figures (no training), checked by the schema."""

import json
import sys
from pathlib import Path

import pytest
from benchmarks.suites.report import SCHEMA, Report, check_schema, plain

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks import captioning, nab, positions, prepared_keys, sst2, vit_digits  # noqa: E402


def _written(report: Report, tmp_path: Path) -> dict:
    report.write(tmp_path / "report.json")
    data = json.loads((tmp_path / "report.json").read_text())
    check_schema(data)
    assert data["schema"] == SCHEMA and data["command"] == report.command
    assert data["settings"]["torch_threads"] >= 1 and len(data["load_average"]["end"]) == 3
    return data


def _result(data: dict, case: str, impl: str) -> dict:
    (row,) = [r for r in data["results"] if r["case"] == case and r["impl"] == impl]
    return row


def _profiles(score: float) -> dict:
    return {
        p: {
            "profile": p,
            "score": score,
            "raw": 1.0,
            "null": -1.0,
            "perfect": 2.0,
            "threshold": 0.5,
            "tp": 3,
            "fn": 1,
            "fp": 2,
        }
        for p in ("standard", "reward_low_FP_rate", "reward_low_FN_rate")
    }


def test_nab_report(tmp_path):
    nab_figures = {"files": 2, "rows": 100, "windows": 3}
    nab_figures["windowed_gaussian"] = _profiles(40.0) | {"seconds": 0.5}
    nab_figures["transformer"] = _profiles(60.0) | {"seconds": 12.0}
    nab_figures["transformer (short window 3)"] = _profiles(55.0) | {"seconds": 0.1}
    solar = {
        "rows_in_windows": {"mass_inside": 0.5, "share": 0.4, "n": 9},
        "pointwise": {"f1": 0.4, "roc_auc": 0.6},
        "eventwise_f1": 0.8,
        "threshold": 0.7,
        "seconds_per_series": [1.0, 3.0, 2.0],
    }
    result = {
        "detectors": {"transformer": {"window": 24}},
        "published": nab.PUBLISHED,
        "nab": nab_figures,
        "solar": {"transformer": solar},
        "seconds": 20.0,
    }
    args = nab._arguments(["--detectors", "transformer", "--cache", "/tmp/c"])
    report = Report("nab", "python benchmarks/nab.py --detectors transformer", vars(args))
    data = _written(nab.nab_report(report, result), tmp_path)
    assert data["options"]["cache"] == "/tmp/c" and data["options"]["skip_solar"] is False
    row = _result(data, "nab", "transformer (short window 3)")
    assert row["params"] == {"detector": "transformer", "variant": "short window 3", "files": 2}
    assert row["metrics"]["standard"]["score"] == 55.0
    assert _result(data, "nab", "transformer")["time_s"]["median"] == 12.0
    row = _result(data, "solar", "transformer")
    assert row["time_s"] == {"median": 2.0, "min": 1.0, "max": 3.0, "n": 3}
    assert row["metrics"]["eventwise_f1"] == 0.8 and "seconds_per_series" not in row["metrics"]
    assert data["data"]["nab_corpus"] == {"files": 2, "rows": 100, "windows": 3}
    assert data["data"]["published"]["numenta_htm"]["standard"] == 70.5


def test_captioning_report(tmp_path):
    test = {
        "bleu": 41.5,
        "exact_match": 0.2,
        "mass_in_box": 0.6,
        "pointing": 0.8,
        "phrase_mass_in_box": 0.5,
        "phrase_pointing": 0.7,
        "nouns": 300,
    }
    rows = [
        {
            "model": m,
            "attention": a,
            "feed_context": True,
            "run_dir": f"runs/scenes-{m}",
            "steps": 400,
            "n_train": 1000,
            "best_step": 300,
            "train_seconds": s,
            "test": test,
        }
        for m, a, s in (("soft", "soft", 120.5), ("none", "none", 80.0))
    ]
    args = captioning._arguments(["--models", "soft,none", "--steps", "400"])
    report = Report("captioning", "python benchmarks/captioning.py", vars(args))
    picture = {"path": "docs/x.png", "caption": "a red square"}
    data = _written(captioning.captioning_report(report, rows, picture), tmp_path)
    assert data["options"]["steps"] == 400
    row = _result(data, "scenes test", "soft")
    assert row["metrics"]["bleu"] == 41.5 and row["metrics"]["best_step"] == 300
    assert row["time_s"]["median"] == 120.5 and row["params"]["attention"] == "soft"
    assert data["data"] == {"target_soft_pointing": 0.8, "picture": picture}


def test_sst2_report(tmp_path):
    rows = [
        {
            "model": "bigru",
            "config": "configs/sst2-bigru.yaml",
            "dev_accuracy": 0.86,
            "best_epoch": 3,
            "device": "cpu",
            "train_seconds": 90.0,
            "wall_seconds": 95.0,
        },
        {
            "model": "tfidf",
            "config": "TF-IDF",
            "dev_accuracy": 0.8165,
            "device": "cpu",
            "wall_seconds": 3.2,
        },
    ]
    args = sst2._arguments(["--models", "bigru,tfidf", "--json", str(tmp_path / "x.json")])
    report = Report("sst2", "python benchmarks/sst2.py", vars(args))
    data = _written(sst2.sst2_report(report, rows), tmp_path)
    assert data["options"]["json"] == str(tmp_path / "x.json")
    row = _result(data, "sst2 dev", "bigru")
    assert row["metrics"]["dev_accuracy"] == 0.86 and row["metrics"]["target"] == 0.85
    assert row["metrics"]["met"] is True and row["time_s"]["median"] == 95.0
    assert _result(data, "sst2 dev", "tfidf")["metrics"]["met"] is None
    assert data["data"]["targets"]["minilm"] == 0.89


def test_vit_digits_report(tmp_path):
    deletion = {"zero": [{"k": 1, "rollout": 0.9, "random": 0.95}]}
    runs = [
        {
            "seed": s,
            "test_accuracy": a,
            "train_accuracy": 1.0,
            "train_seconds": w,
            "train_cpu_seconds": w * 2,
            "load_average_1min_before_after": [1.0, 1.5],
            "deletion": deletion,
        }
        for s, a, w in ((0, 0.99, 60.0), (1, 0.98, 80.0), (2, 0.985, 70.0))
    ]
    base = {"rbf_svm": {"test_accuracy": 0.99, "seconds": 0.2, "model": "SVC()"}}
    args = vit_digits._arguments(["--seeds", "0,1,2", "--figure", "none"])
    report = Report("vit_digits", "python benchmarks/vit_digits.py", vars(args))
    data = _written(vit_digits.vit_report(report, runs, base, deletion), tmp_path)
    assert data["options"]["seeds"] == [0, 1, 2] and data["options"]["figure"] is None
    row = _result(data, "digits test", "vit")
    assert row["time_s"] == {"median": 70.0, "min": 60.0, "max": 80.0, "n": 3}
    assert row["metrics"]["test_accuracy_mean"] == pytest.approx(0.985)
    assert row["metrics"]["test_accuracy_per_seed"] == [0.99, 0.98, 0.985]
    assert _result(data, "digits test", "rbf_svm")["metrics"]["test_accuracy"] == 0.99
    assert data["data"]["runs"][1]["seed"] == 1 and data["data"]["deletion_mean_over_seeds"]


def test_prepared_keys_writes_a_report(tmp_path, capsys):
    out = tmp_path / "keys.json"
    argv = ["--batch", "2", "--src-len", "4", "--tgt-len", "3", "--hidden", "8"]
    prepared_keys.main([*argv, "--repeats", "2", "--out", str(out)])
    data = json.loads(out.read_text())
    check_schema(data)
    assert {r["impl"] for r in data["results"]} == {"keys once", "keys every step"}
    assert (
        data["comparisons"][0]["ratio"]["n"] == 2 and "ratio every/once" in capsys.readouterr().out
    )


def test_schema_takes_reports_with_and_without_data(tmp_path):
    report = Report("x", "python x.py", {"path": Path("/tmp"), "sizes": (1, 2)})
    data = _written(report, tmp_path)
    assert "data" not in data and data["options"] == {"path": "/tmp", "sizes": [1, 2]}
    report.data = {"figures": {"a": (1, 2)}}
    assert _written(report, tmp_path)["data"] == {"figures": {"a": [1, 2]}}
    with pytest.raises(ValueError, match="data"):
        check_schema({**data, "data": [1]})
    assert plain({1: {2}, "p": Path("a")}) == {"1": [2], "p": "a"}


def test_suite_reports_on_disk_still_pass_the_schema():
    checked = 0
    for path in sorted((ROOT / "benchmarks" / "results").glob("*.json")):
        data = json.loads(path.read_text())
        if data.get("schema") == SCHEMA:
            check_schema(data)
            checked += 1
    assert checked > 0


def test_positions_report(tmp_path):
    args = positions.argparse.Namespace(batch=4, train_len=5, decode_batch=2, decode_len=7)
    times = {
        ("train", "absolute"): [1.0, 2.0],
        ("train", "shaw"): [1.5, 2.8],
        ("decode", "absolute"): [0.5, 0.5],
        ("decode", "shaw"): [0.5, 1.0],
    }
    report = Report("positions", "python benchmarks/positions.py", vars(args))
    data = _written(positions.positions_report(report, times, args), tmp_path)
    assert _result(data, "train B4 T5", "shaw")["time_s"]["median"] == 2.15
    train, decode = data["comparisons"]
    assert train["ratios"] == [1.5, 1.4] and train["met"] is False  # median 1.45x > 1.3x
    assert decode["case"] == "greedy B2 S=T=7" and decode["target"] is None


def test_im2latex_speed_report(tmp_path, capsys):
    from benchmarks import im2latex_speed

    out = tmp_path / "speed.json"
    im2latex_speed.main(
        [
            "--config",
            str(ROOT / "configs/formulas-im2latex.yaml"),
            "--batch",
            "2",
            "--height",
            "32",
            "--width",
            "64",
            "--tokens",
            "3",
            "--vocab",
            "20",
            "--repeats",
            "2",
            "--out",
            str(out),
        ]
    )
    data = json.loads(out.read_text())
    check_schema(data)
    assert {r["impl"] for r in data["results"]} == {"float32", "bf16 autocast"}
    (comparison,) = data["comparisons"]
    assert len(comparison["ratios"]) == 2 and all(r > 0 for r in comparison["ratios"])
    assert "bf16 / float32:" in capsys.readouterr().out
