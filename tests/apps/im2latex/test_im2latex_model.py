"""The im2markup model (Deng et al. 2017) against its own definitions: teacher forcing equals
step-by-step decoding, beam 1 equals greedy, padding gets no attention, the row encoder's
positional embedding is per row, and decoded attention lands back on each image's grid."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnkit.apps.im2latex.images import batch, fit, grid_maps, grid_size
from attnkit.apps.im2latex.model import FormulaModelConfig, FormulaReader
from attnkit.apps.im2latex.vocab import BOS, EOS
from attnkit.decoding.beam import beam_search
from attnkit.decoding.greedy import greedy_decode

SMALL = dict(
    channels=[4, 8],
    pools=[[2, 2], [2, 2]],
    d_row=6,
    max_rows=8,
    d_embed=5,
    d_hidden=12,
    d_attention=7,
    dropout=0.0,
)


def _model(**kw) -> FormulaReader:
    torch.manual_seed(0)
    return FormulaReader(FormulaModelConfig(**{**SMALL, **kw}), vocab=11).eval()


def _images() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.random((13, 30), dtype=np.float32), rng.random((6, 9), dtype=np.float32)]


def test_batch_pads_and_masks_the_real_cells():
    src, mask = batch(_images(), (4, 4))
    assert src.shape == (2, 1, 16, 32)  # 13 x 30 rounded up to the stride
    assert grid_size(6, 9, (4, 4)) == (2, 3)
    grid = mask.view(2, 4, 8)
    assert grid[0].all() and grid[1, :2, :3].all() and grid[1].sum() == 6
    assert torch.equal(src[1, 0, :6, :9], torch.from_numpy(_images()[1]))
    assert src[1, 0, 6:].abs().sum() == 0 and src[1, 0, :, 9:].abs().sum() == 0


TRANSFORMER = dict(decoder="transformer", layers=2, heads=3, d_ff=16)
COARSE = dict(attention="coarse_to_fine", block=[2, 3])  # blocks that do not tile the grid
DECODERS = [{}, COARSE, TRANSFORMER]  # the paper's LSTM, coarse-to-fine, the Transformer


@pytest.mark.parametrize("attention", ["additive", "general", "coarse_to_fine"])
@pytest.mark.parametrize("rows", [True, False])
def test_teacher_forcing_equals_step_by_step(attention, rows):
    model = _model(attention=attention, row_encoder=rows)
    _check_teacher_forcing(model)


@pytest.mark.parametrize("rows", [True, False])
def test_transformer_decoder_teacher_forcing_equals_step_by_step(rows):
    """The causal mask of teacher forcing and the key/value cache of decoding agree."""
    _check_teacher_forcing(_model(row_encoder=rows, **TRANSFORMER))


def _check_teacher_forcing(model: FormulaReader) -> None:
    src, mask = batch(_images(), model.stride)
    tgt = torch.tensor([[BOS, 5, 6, 7], [BOS, 4, 9, 0]])
    forced = model(src, mask, tgt, need_weights=True)
    memory = model.encode(src, mask)
    state = model.init_state(memory)
    for t in range(tgt.size(1)):
        step = model.decode_step(memory, state, tgt[:, t], need_weights=True)
        torch.testing.assert_close(step.logits, forced.logits[:, t], rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(step.attention["cross"], forced.attention["cross"][:, :, t])
        state = step.state


@pytest.mark.parametrize("decoder", DECODERS)
def test_padding_gets_no_attention_and_weights_sum_to_one(decoder):
    model = _model(**decoder)
    src, mask = batch(_images(), model.stride)
    w = model(src, mask, torch.tensor([[BOS, 5], [BOS, 6]]), need_weights=True).attention["cross"]
    assert w.shape == (2, 1, 2, mask.size(1))
    assert torch.all(w[1, 0][:, ~mask[1]] == 0)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 1, 2))


@pytest.mark.parametrize("decoder", DECODERS)
def test_beam_one_is_greedy_and_attention_comes_back_on_the_grid(decoder):
    model = _model(**decoder)
    images = _images()
    src, mask = batch(images, model.stride)
    kw = dict(
        bos_id=BOS, eos_id=EOS, max_len=9, max_len_ratio=0.0, max_len_offset=9, need_weights=True
    )
    greedy = greedy_decode(model, src, mask, **kw)
    beams = beam_search(model, src, mask, beam_size=1, length_penalty=0.0, **kw)
    for g, (b,) in zip(greedy, beams, strict=True):
        assert g.tokens == b.tokens and g.score == pytest.approx(b.score, abs=1e-5)
    maps = grid_maps(greedy[1].attention["cross"][0], *images[1].shape, model.stride)
    assert maps.shape == (greedy[1].length, 2, 3)
    np.testing.assert_allclose(maps.sum((1, 2)), 1.0, rtol=1e-5)


def test_each_row_starts_from_its_own_learned_state():
    """Two identical rows of features give different annotations only through the per-row
    initial state (the paper's positional embedding); equal embeddings give equal rows."""
    model = _model()
    rows = model.rows
    features = torch.ones(1, 8, 2, 5)  # two identical rows
    out = rows(features).view(1, 2, 5, -1)
    assert not torch.allclose(out[0, 0], out[0, 1])
    with torch.no_grad():
        rows.initial.weight[1] = rows.initial.weight[0]
    out = rows(features).view(1, 2, 5, -1)
    torch.testing.assert_close(out[0, 0], out[0, 1])


def test_too_many_rows_is_a_clear_error():
    model = _model(max_rows=2)
    src, mask = batch([np.zeros((40, 8), np.float32)], model.stride)
    with pytest.raises(ValueError, match="max_rows"):
        model.encode(src, mask)


def test_fit_scales_down_keeping_the_aspect_and_leaves_small_images():
    image = np.zeros((40, 400), np.float32)
    image[10:30, 100:300] = 1
    small = fit(image, 32, 200)
    assert small.shape == (20, 200) and 0.9 < small.max() <= 1.0
    same = fit(image[:20, :100], 32, 200)
    assert same.shape == (20, 100) and np.array_equal(same, image[:20, :100])


def test_upsampling_keeps_the_grid_on_the_image():
    """``upsample: 2`` with one more 2 x 2 pool gives the grid of the plain model: the same
    stride on the image, the same mask, and teacher forcing still equals decoding."""
    plain = _model()
    up = _model(upsample=2, channels=[4, 8, 8], pools=[[2, 2], [2, 2], [2, 2]])
    assert up.stride == plain.stride == (4, 4)
    src, mask = batch(_images(), up.stride)
    assert up.encode(src, mask).states.shape[:2] == plain.encode(src, mask).states.shape[:2]
    _check_teacher_forcing(up)


def test_upsampling_sees_the_image_larger():
    """The first convolution runs on the image scaled up by 2, bilinearly."""
    up = _model(upsample=2, channels=[4, 8, 8], pools=[[2, 2], [2, 2], [2, 2]])
    seen = {}
    up.cnn.net[0].register_forward_hook(lambda m, i, o: seen.update(input=i[0]))
    src, mask = batch(_images(), up.stride)
    up.encode(src, mask)
    expected = torch.nn.functional.interpolate(src, scale_factor=2, mode="bilinear")
    assert seen["input"].shape == (2, 1, 2 * src.shape[2], 2 * src.shape[3])
    torch.testing.assert_close(seen["input"], expected)


def test_upsample_must_divide_the_pools():
    with pytest.raises(ValueError, match="upsample"):
        FormulaModelConfig(**{**SMALL, "upsample": 3})
