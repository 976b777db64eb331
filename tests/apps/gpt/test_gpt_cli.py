"""The language model through the command line: train on one's own text file, generate from
``--prompt`` (seeded: the same text twice), score the validation split and one's own file, and
the bad inputs issue 37 names (an empty corpus, a prompt with characters outside the
vocabulary, ``--max-new`` below 1, generation options on a run that does not generate), each
one line and exit 2."""

import pytest
import torch
import torch.nn.functional as F
import yaml
from typer.testing import CliRunner

from attnkit.cli import app

TEXT = "ROMEO:\nBut soft, what light through yonder window breaks?\n\n" * 40


def _config(tmp_path, text: str = TEXT):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text, encoding="utf-8")
    cfg = {
        "name": "tiny-gpt",
        "task": "language-model",
        "data": {"source": "text", "path": str(corpus), "block_size": 16},
        "model": {"layers": 1, "heads": 2, "width": 16},
        "train": {"epochs": 2, "eval_interval": 20, "eval_iters": 2, "batch_size": 8,
                  "warmup_steps": 5, "learning_rate": 0.01, "precision": "fp32"},
    }  # fmt: skip
    path = tmp_path / "gpt.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("gpt")
    result = invoke("train", _config(root), "-o", root / "run")
    assert result.exit_code == 0, result.output
    return root / "run"


def test_predict_continues_the_prompt_and_a_seed_repeats_it(run):
    args = ("predict", run, "--prompt", "ROMEO:", "--max-new", 30, "--seed", 4)
    first, second = invoke(*args), invoke(*args)
    assert first.exit_code == 0, first.output
    assert first.stdout == second.stdout
    assert first.stdout.startswith("ROMEO:") and len(first.stdout.rstrip("\n")) >= 30
    other = invoke(*args[:-1], 5)
    assert other.stdout != first.stdout


def test_evaluate_scores_the_validation_split_and_ones_own_file(run, tmp_path):
    result = invoke("evaluate", run, "--json")
    assert result.exit_code == 0, result.output
    assert '"split": "valid"' in result.stdout and '"perplexity"' in result.stdout
    own = tmp_path / "own.txt"
    own.write_text("But soft, what light", encoding="utf-8")
    result = invoke("evaluate", run, "--src", own)
    assert result.exit_code == 0 and "(19 characters)" in result.stdout, result.output


@pytest.mark.parametrize(
    "extra, message",
    [
        (("--prompt", "ROMEO: ü"), "1 character(s) the model never saw ('ü')"),
        (("--prompt", ""), "the prompt is empty"),
        (("--prompt", "R", "--max-new", 0), "--max-new"),
        (("--prompt", "R", "--top-p", 1.5), "--top-p"),
        (("--prompt", "R", "--beam", 3), "--beam: not taken by language-model runs"),
    ],
)
def test_bad_generation_input_is_one_line(run, extra, message):
    result = invoke("predict", run, *extra)
    assert result.exit_code == 2 and message in result.output, result.output


def test_an_empty_corpus_is_named(tmp_path):
    result = invoke("train", _config(tmp_path, text=""), "-o", tmp_path / "run")
    assert result.exit_code == 2
    assert "corpus.txt" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_generation_options_are_refused_by_other_runs(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.yaml").write_text("task: stocks\nname: s\n", encoding="utf-8")
    result = invoke("predict", tmp_path / "run", "--prompt", "x", "--seed", 0)
    assert result.exit_code == 2
    assert "--prompt, --seed: not taken by stocks runs" in result.output


def test_a_texts_loss_is_its_blocks_cross_entropy_and_equals_the_files(run, tmp_path):
    import attnkit

    gpt = attnkit.load_run(run)
    text = "But soft, what light through yonder window breaks?"  # 51 characters: 4 blocks
    ids = gpt.encode(text)[0]
    with torch.no_grad():  # block by block, 16 predicted characters each
        parts = [ids[i : i + 17] for i in range(0, len(ids) - 1, 16)]
        total = sum(
            float(F.cross_entropy(gpt.model(p[None, :-1]).logits[0], p[1:], reduction="sum"))
            for p in parts
        )
    assert gpt.loss(text) == pytest.approx(total / (len(ids) - 1), rel=1e-5)
    own = tmp_path / "own.txt"
    own.write_text(text, encoding="utf-8")
    assert gpt.file_loss(own) == (pytest.approx(gpt.loss(text)), len(text) - 1)
