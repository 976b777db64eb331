"""What the translation API returns goes straight into every view; the recording holds the
encoder's self-attention; saved rows label the end-of-sentence step; scores share one scale;
and the `translate` command says what it does (issue 20's newcomer report)."""

import io
import json
import math
import sys

import pytest
import torch
from typer.testing import CliRunner

import attnkit
from attnkit.apps.translation.cli import _lines
from attnkit.apps.translation.config import DecodeConfig, ModelConfig
from attnkit.apps.translation.decode.records import plot_translation
from attnkit.apps.translation.decode.run import load_run
from attnkit.apps.translation.decode.translate import translate_texts
from attnkit.apps.translation.demo import next_steps
from attnkit.apps.translation.models.build import build_model
from attnkit.cli import app
from attnkit.decoding import length_penalty
from attnkit.interpret.heatmap import plot_heatmap
from attnkit.interpret.record import load_attention, save_attention
from attnkit.viz import cross_view, head_view, model_view

runner = CliRunner()
SENTENCES = ["the black cat sleeps .", "a small dog sees the big red table ."]


def test_views_take_what_translate_returns(trained_run, tmp_path):
    run = attnkit.load_run(trained_run[0])
    translations = run.translate(SENTENCES[:1], beam=2, attention=True)
    (t,) = translations
    rows = t.rows()
    for view in (model_view, head_view, cross_view):
        for given in (t, translations):
            payload = view(given).payload
            assert (payload["rows"], payload["cols"]) == (rows, t.src_pieces)
            want = t.attention[0]["cross"].double()  # (H, T_out, S)
            got = torch.tensor(payload["weights"][0], dtype=torch.float64)
            assert torch.allclose(got, want, atol=1e-4)
    named = model_view(t.attention[0]).payload  # one hypothesis' dict: positions as labels
    assert named["rows"] == [str(i) for i in range(len(rows))]
    with pytest.raises(ValueError, match="2 results given"):
        model_view(run.translate(SENTENCES, attention=True))
    assert plot_translation(translations, "cross", tmp_path / "a.png").stat().st_size > 0


def test_saved_rows_label_the_eos_step_so_plot_heatmap_takes_them(trained_run, tmp_path):
    run = attnkit.load_run(trained_run[0])
    out = run.translate(SENTENCES, beam=2, n_best=2, attention=True)
    save_attention(out, tmp_path / "att")
    for i, t in enumerate(out):
        record, meta = load_attention(tmp_path / "att", i, hypothesis=1)
        assert meta["rows"] == [t.rows(0), t.rows(1)]
        assert record.labels["cross"] == (meta["rows"][1], meta["src_pieces"])
        assert meta["rows"][1][-1:] == (["</s>"] if t.finished[1] else meta["rows"][1][-1:])
        weights = record["cross"][-1].mean(0)  # (T_out, S)
        assert weights.shape == (len(meta["rows"][1]), len(meta["src_pieces"]))
        plot_heatmap(weights, meta["src_pieces"], meta["rows"][1], tmp_path / f"{i}.png")
        if t.finished[1]:
            with pytest.raises(ValueError, match="end-of-sentence step"):
                plot_heatmap(weights, meta["src_pieces"], t.tgt_pieces[1], tmp_path / "x.png")


def test_transformer_translation_records_its_encoder_self_attention(trained_run):
    _, tok, _ = load_run(trained_run[0])
    torch.manual_seed(0)
    cfg = ModelConfig(arch="transformer", d_model=16, num_heads=2, d_ff=32, dropout=0.0)
    cfg.encoder_layers = cfg.decoder_layers = 2
    model = build_model(cfg, tok.src_vocab_size, tok.tgt_vocab_size, tok.pad_id).eval()
    decode = DecodeConfig(beam_size=2, max_len_ratio=1.0, max_len_offset=3)
    out = translate_texts(model, tok, SENTENCES, decode, need_weights=True)
    for sentence, t in zip(SENTENCES, out, strict=True):
        src = torch.tensor(tok.encode_src([sentence]))  # (1, S): alone, no padding
        ids = torch.tensor([[tok.bos_id]])
        forced = model(src, torch.ones_like(src, dtype=torch.bool), ids, need_weights=True)
        for layer in range(2):
            got = t.attention[0][f"encoder.layer{layer}"]  # (H, S, S), padding stripped
            want = forced.attention[f"encoder.layer{layer}"][0]  # (H, S, S)
            assert got.shape == want.shape == (2, len(t.src_pieces), len(t.src_pieces))
            assert torch.allclose(got, want, atol=1e-5)
        record = model_view(t, stack="encoder").payload
        assert record["rows"] == record["cols"] == t.src_pieces and record["shape"][0] == 2


def test_greedy_and_beam_scores_share_one_scale(trained_run):
    run = attnkit.load_run(trained_run[0])
    alpha = run.config.decode.length_penalty
    greedy = run.translate(SENTENCES, beam=1)
    beam = run.translate(SENTENCES, beam=4)
    for g, b in zip(greedy, beam, strict=True):
        length = len(g.tgt_pieces[0]) + g.finished[0]
        assert g.scores[0] == pytest.approx(g.log_probs[0] / length_penalty(length, alpha))
        if g.text == b.text:  # the same output scores the same, whichever search found it
            assert g.scores[0] == pytest.approx(b.scores[0], abs=1e-4)
        assert b.scores[0] >= g.scores[0] - 1e-4  # the beam ranks by this score


def test_n_best_wider_than_the_beam_is_refused(trained_run):
    result = runner.invoke(
        app, ["translation", "translate", str(trained_run[0]), "--n-best", "3", "--beam", "1"]
    )
    assert result.exit_code == 2
    assert "--n-best 3 needs a beam of at least 3" in result.output and "--beam 3" in result.output


def test_n_best_lines_and_the_score_note(trained_run):
    args = ["translation", "translate", str(trained_run[0]), "--n-best", "2", "--beam", "2"]
    result = runner.invoke(app, args, input=SENTENCES[0] + "\n")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and all(math.isfinite(float(x.split("\t")[1])) for x in lines)
    assert "log p(y|x)" in result.stderr and "log p(y|x)" not in result.stdout


def test_interactive_prompts_go_to_stderr(trained_run):
    result = runner.invoke(
        app,
        ["translation", "translate", str(trained_run[0]), "--interactive"],
        input="\n".join(SENTENCES) + "\n",
    )
    assert result.exit_code == 0, result.output
    want = [t.text for t in attnkit.load_run(trained_run[0]).translate(SENTENCES)]
    assert result.stdout.splitlines() == want
    assert result.stderr.count("> ") == 3 and "Ctrl-D" in result.stderr


def test_a_terminal_gets_a_hint_instead_of_silence(monkeypatch, capsys):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Terminal("a dog runs .\n"))
    assert _lines(None) == ["a dog runs ."]
    assert "Ctrl-D" in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdin", io.StringIO("a dog runs .\n"))
    assert _lines(None) == ["a dog runs ."] and capsys.readouterr().err == ""


def test_a_directory_of_runs_says_which_to_pick(trained_run, tmp_path):
    for name in ("none", "bahdanau"):
        (tmp_path / "demo" / name).mkdir(parents=True)
        (tmp_path / "demo" / name / "config.yaml").write_text("name: x\n")
    result = runner.invoke(app, ["translation", "translate", str(tmp_path / "demo")])
    assert result.exit_code == 2
    assert "holds the runs" in result.output
    assert str(tmp_path / "demo" / "bahdanau") in result.output.replace("\n", "")
    with pytest.raises(FileNotFoundError, match="holds the runs"):
        attnkit.load_run(tmp_path / "demo")


def test_the_demo_ends_with_commands_that_parse(tmp_path):
    import typer.main

    text = next_steps(tmp_path / "demo" / "bahdanau")
    commands = [line.split("#")[0].split() for line in text.splitlines() if "  attnkit " in line]
    assert len(commands) == 3
    run = str(tmp_path / "demo" / "bahdanau")
    for words in commands:
        at = words.index(run)  # attnkit [GROUP] COMMAND RUN ...
        command = typer.main.get_command(app)
        for name in words[1:at]:
            command = command.get_command(None, name)
        command.make_context(words[at - 1], words[at:])  # raises on an unknown option
    json.dumps(text)  # plain text, printable anywhere
