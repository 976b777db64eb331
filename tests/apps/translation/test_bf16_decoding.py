"""``decode.bf16``: the search runs under bfloat16 autocast, from the library and the CLI."""

from dataclasses import replace

import torch
from typer.testing import CliRunner

from attnkit.apps.translation.decode.run import load_run
from attnkit.apps.translation.decode.translate import translate_texts
from attnkit.cli import app

SENTENCES = ["The red dog sleeps.", "The small cat sees the big blue table."]


def _output_dtypes(model, run):
    """Run ``run()`` and return the dtypes the model's output layer produced."""
    seen = []
    layer = [m for m in model.modules() if isinstance(m, torch.nn.Linear)][-1]
    handle = layer.register_forward_hook(lambda _m, _i, out: seen.append(out.dtype))
    try:
        result = run()
    finally:
        handle.remove()
    return set(seen), result


def test_bf16_decoding_runs_the_products_in_bf16_and_returns_fp32_attention(trained_run):
    cfg, tokenizer, model = load_run(trained_run[0])
    for beam in (1, 2):
        fp32_dtypes, fp32 = _output_dtypes(
            model,
            lambda b=beam: translate_texts(model, tokenizer, SENTENCES, cfg.decode, beam_size=b),
        )
        bf16_decode = replace(cfg.decode, bf16=True)
        bf16_dtypes, bf16 = _output_dtypes(
            model,
            lambda b=beam, d=bf16_decode: translate_texts(
                model, tokenizer, SENTENCES, d, beam_size=b, need_weights=True
            ),
        )
        assert fp32_dtypes == {torch.float32} and bf16_dtypes == {torch.bfloat16}
        assert len(bf16) == len(fp32) == len(SENTENCES)
        for t in bf16:
            for weights in t.attention[0].values():
                assert weights.dtype == torch.float32
                torch.testing.assert_close(
                    weights.sum(-1), torch.ones_like(weights.sum(-1)), atol=2e-2, rtol=0
                )
    # autocast is scoped to the search: the model is fp32 afterwards
    assert all(p.dtype == torch.float32 for p in model.parameters())


def test_cli_bf16_flag_reaches_the_search(trained_run, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    cfg, tokenizer, model = load_run(trained_run[0])
    expected = translate_texts(
        model, tokenizer, SENTENCES, replace(cfg.decode, bf16=True), beam_size=2
    )
    result = CliRunner().invoke(
        app,
        ["translation", "translate", str(trained_run[0]), "--input", str(source)]
        + ["--beam", "2", "--bf16"],
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [t.text for t in expected]
    result = CliRunner().invoke(
        app, ["evaluate", str(trained_run[0]), "--split", "test", "--beam", "1", "--bf16"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{trained_run[0]} test: bleu ")
