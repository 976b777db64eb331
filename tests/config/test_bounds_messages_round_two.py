"""Issue 35, messages: a seed too large for NumPy and torch is refused at its line (it was
"Overflow when unpacking long long" from torch), integer bounds are written exactly, and an
unknown --split names what the corpus has instead of a "missing key" line."""

import pytest
from typer.testing import CliRunner

from attnkit.cli import app
from attnkit.config.bounds import Bounds
from attnkit.engine.settings import TrainSettings


def test_a_seed_beyond_numpy_and_torch_is_refused_in_words():
    with pytest.raises(ValueError, match=r"seed must be in \[0, 4294967296\), got 99999999999"):
        TrainSettings(seed=99999999999)
    TrainSettings(seed=2**32 - 1)  # the largest accepted


def test_integer_bounds_are_written_exactly():
    assert Bounds(ge=0, lt=2**32).describe() == "in [0, 4294967296)"
    assert Bounds(ge=1_000_000).describe() == "at least 1000000"
    assert Bounds(gt=0.5).describe() == "greater than 0.5"


def test_seed_override_through_the_command_line_is_one_line(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("data: {generated_sizes: [30, 5, 5]}\nmodel: {}\n", encoding="utf-8")
    result = CliRunner().invoke(
        app, ["train", str(config), "-o", str(tmp_path / "r"), "--set", "train.seed=" + "9" * 23]
    )
    assert result.exit_code == 2
    assert "train.seed must be in [0, 4294967296)" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_an_unknown_split_names_the_corpus_splits(trained_run):
    run_dir, _ = trained_run
    result = CliRunner().invoke(app, ["evaluate", str(run_dir), "--split", "tset"])
    assert result.exit_code == 2
    assert "--split tset: corpus" in result.output and "missing key" not in result.output
    assert "valid" in result.output and "test" in result.output


def test_a_damaged_metrics_json_names_the_file_line_and_column(trained_run, tmp_path):
    import shutil

    run_dir, _ = trained_run
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    (copy / "metrics.json").write_text('{"history": [\n  {"epoch": 1,}\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["report", str(copy)])
    assert result.exit_code == 2
    assert "metrics.json, line 2, column" in result.output and "not valid JSON" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_failed_train_removes_the_folders_it_made(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("data: {generated_sizes: [0, 5, 5]}\nmodel: {}\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(config), "-o", str(tmp_path / "a/b/c")])
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "a").exists()  # not c alone: a/b and a were made for it too


def test_a_picture_given_as_a_folder_is_refused(tmp_path):
    from tests.test_load_run_every_task import train_tiny

    run = train_tiny("stocks", tmp_path)  # stocks draws its forecast with --picture
    (tmp_path / "pictures").mkdir()
    args = ["predict", str(run), "--csv", str(tmp_path / "c.yaml")]
    result = CliRunner().invoke(app, [*args, "--picture", str(tmp_path / "pictures")])
    assert result.exit_code == 2
    assert "--picture" in result.output and "a folder; name the image file" in result.output
    assert not (tmp_path / "pictures.png").exists()


def test_a_folder_given_as_the_config_is_called_a_folder(tmp_path):
    result = CliRunner().invoke(app, ["train", str(tmp_path)])
    assert result.exit_code == 2
    assert f"{tmp_path}: a folder, not a config file" in result.output
