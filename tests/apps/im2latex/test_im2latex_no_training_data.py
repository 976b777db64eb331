"""Nothing to train on is an error (issue 35 item 1): im2latex with no training formulas used
to log "0 training formulas", record ``steps: 0`` and write an untrained model as the best."""

from __future__ import annotations

from typer.testing import CliRunner

from attnkit.cli import app


def test_no_training_formulas_is_refused_and_leaves_no_model(tmp_path):
    real = tmp_path / "formulas"
    real.mkdir()
    (real / "formulas.tsv").write_text("")  # a folder of real pairs that holds none
    config = tmp_path / "empty.yaml"
    config.write_text(
        f"name: empty\ntask: im2latex\ndata:\n  generated: [0, 4, 4]\n  max_tokens: 8\n"
        f"  real: {real}\ntrain:\n  epochs: 1\n  batch_size: 4\n"
    )
    run = tmp_path / "run"
    result = CliRunner().invoke(app, ["train", str(config), "-o", str(run)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().endswith(
        "empty: no training examples (an epoch has no batches); check the data section of the "
        "config and the files it names"
    )
    assert not (run / "model.safetensors").exists() and not run.exists()
