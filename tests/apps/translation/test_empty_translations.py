"""Issue 35 item 4: beam search that ends sentences at once is no longer silent. `predict`
says how many translations came out empty (a note and a warning) and takes ``--beam`` as
``translate`` does; ``translation translate`` warns on stderr, keeping stdout translations."""

from typer.testing import CliRunner

from attnkit.apps.translation.decode.run import TranslationRun
from attnkit.apps.translation.decode.translate import Translation, empty_note
from attnkit.cli import app


def _made(text: str) -> Translation:
    return Translation(text, [text], [0.0], [], [[]], [True])


def test_the_note_counts_the_empty_ones():
    assert empty_note([_made("ein Hund"), _made("Katze")], 5) is None
    note = empty_note([_made(""), _made("Katze"), _made("  ")], 5)
    assert note.startswith("2 of 3 translations are empty") and "beam 5" in note


def test_predict_takes_a_beam_and_notes_empty_output(monkeypatch, trained_run, tmp_path):
    run_dir, _ = trained_run
    beams = []

    def translate(self, texts, *, beam=None, n_best=1, attention=False):
        beams.append(beam)
        return [_made("" if i % 2 == 0 else "ja") for i, _ in enumerate(texts)]

    monkeypatch.setattr(TranslationRun, "translate", translate)
    source = tmp_path / "in.txt"
    source.write_text("a cat .\nthe dog .\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["predict", str(run_dir), str(source), "--beam", "3"])
    assert result.exit_code == 0, result.output
    assert beams == [3]
    assert "1 of 2 translations are empty" in result.output


def test_translate_warns_on_stderr(trained_run, monkeypatch):
    import attnkit.apps.translation.decode.translate as module

    run_dir, _ = trained_run
    real = module.translate_texts

    def emptied(*args, **kwargs):
        out = real(*args, **kwargs)
        out[0].outputs[0] = ""
        return out

    monkeypatch.setattr(module, "translate_texts", emptied)
    result = CliRunner().invoke(app, ["translation", "translate", str(run_dir)], input="a cat .\n")
    assert result.exit_code == 0
    assert "warning: 1 of 1 translations are empty" in result.output
