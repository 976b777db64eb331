"""Issue 35 item 5: a practitioner scores their own test files, ``evaluate RUN --src FILE
--ref FILE``, with the report a corpus split gets (BLEU, chrF, BLEU by length); the files
must pair up, and only runs that translate take them."""

import json

from typer.testing import CliRunner

from attnkit.apps.translation.decode.run import load_run
from attnkit.apps.translation.prepare import load_configured_corpus
from attnkit.cli import app


def test_own_files_score_as_the_split_they_hold(trained_run, tmp_path):
    run_dir, _ = trained_run
    cfg, _, _ = load_run(run_dir)
    pairs = load_configured_corpus(cfg.data).splits["test"]
    src, ref = tmp_path / "mine.de", tmp_path / "mine.en"
    src.write_text("".join(p.src + "\n" for p in pairs), encoding="utf-8")
    ref.write_text("".join(p.tgt + "\n" for p in pairs), encoding="utf-8")
    runner = CliRunner()
    own = runner.invoke(app, ["evaluate", str(run_dir), "--src", str(src), "--ref", str(ref),
                              "--json"])  # fmt: skip
    split = runner.invoke(app, ["evaluate", str(run_dir), "--split", "test", "--json"])
    assert own.exit_code == 0 and split.exit_code == 0, own.output + split.output
    mine, theirs = json.loads(own.stdout), json.loads(split.stdout)
    assert mine["metrics"]["bleu"] == theirs["metrics"]["bleu"]
    assert mine["split"] == str(src) and mine["count"] == len(pairs)


def test_files_that_do_not_pair_up_are_named(trained_run, tmp_path):
    run_dir, _ = trained_run
    src, ref = tmp_path / "a.txt", tmp_path / "b.txt"
    src.write_text("one .\ntwo .\n", encoding="utf-8")
    ref.write_text("eins .\n", encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(app, ["evaluate", str(run_dir), "--src", str(src), "--ref", str(ref)])
    assert result.exit_code == 2
    assert f"{src} has 2 lines and {ref} 1" in result.output
    result = runner.invoke(app, ["evaluate", str(run_dir), "--src", str(src)])
    assert result.exit_code == 2 and "give --src and --ref together" in result.output
