"""attnkit.viz for long inputs and big models (issue 36, item 2): layers=/heads= embed exactly
what they select, labelled by true numbers; the row and log colour scales and the sink modes
draw the numbers NumPy gives (read back from the canvas pixels in headless Chromium); a page
is bounded by MAX_PAGE_CHARS, and the weights travel compactly."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

from attnkit.viz import cross_view, head_view, model_view, views
from attnkit.viz.view_options import decode

DATA = re.compile(r'<script type="application/json" class="akv-data">(.*?)</script>', re.S)
TOKENS = ["<s>", "the", "cat", "sat"]
# a hand-made attention (Tq = Tk = 4) with a sink on key 0: row 0 has nothing else, row 1's
# rest is tiny and finer than the 4 embedded decimals (0.00042 : 0.00031 : 0.00027)
SINKY = np.array(
    [
        [1.0, 0.0, 0.0, 0.0],
        [0.999, 0.00042, 0.00031, 0.00027],
        [0.6, 0.3, 0.1, 0.0],
        [0.2, 0.05, 0.25, 0.5],
    ]
)


def page_data(html: str) -> dict:
    return json.loads(DATA.findall(html)[0])


def decoded(html: str) -> tuple[dict, np.ndarray, np.ndarray | None]:
    """The page's data, its weights (L, H, Tq, Tk) and rest (L, H, Tq) or None, decoded."""
    data = page_data(html)
    rest = data["rest"] and decode(data["rest"], data["shape"][:3])
    return data, decode(data["weights"], data["shape"]), rest


def distinct(n_layers=6, n_heads=5, t=4) -> torch.Tensor:
    """(L, H, T, T) softmax weights, every (layer, head) different."""
    return torch.randn(n_layers, n_heads, t, t).mul(3).softmax(-1)


def renormalised(w: np.ndarray) -> np.ndarray:
    """The NumPy reference of the sink modes: key 0 raw, keys 1.. over their own sum."""
    rest = w[..., 1:].sum(-1, keepdims=True)
    out = w.copy()
    out[..., 1:] = np.divide(w[..., 1:], rest, out=np.zeros_like(w[..., 1:]), where=rest > 0)
    return out


# ---- selection -------------------------------------------------------------------------------


def test_selected_layers_and_heads_are_exactly_those_embedded():
    w = distinct()
    data, got, _ = decoded(model_view(w, layers=[4, -1, 1], heads=[3, 0]).html)
    assert data["layerIds"] == [1, 4, 5] and data["headIds"] == [0, 3]
    assert data["shape"] == [3, 2, 4, 4]
    want = w[[1, 4, 5]][:, [0, 3]].double().round(decimals=4).numpy()
    np.testing.assert_allclose(got, want, atol=1e-9)
    data, got, _ = decoded(head_view(w, layers=[2, 4], layer=4, heads=1).html)
    assert (data["layerIds"], data["layer"], data["heads"]) == ([2, 4], 4, [1])
    assert data["headIds"] == list(range(5))  # every head of the embedded layers travels
    np.testing.assert_allclose(got, w[[2, 4]].double().round(decimals=4).numpy(), atol=1e-9)
    data, got, _ = decoded(cross_view(w, layers=range(1, 3)).html)
    assert data["layerIds"] == [1, 2] and data["layer"] == 2  # default: the last embedded
    assert page_data(head_view(w, layers=-2).html)["layer"] == 4  # default: the first


def test_selection_errors_say_what_to_do():
    w = distinct()
    with pytest.raises(ValueError, match="layers= selects no layer"):
        model_view(w, layers=[])
    with pytest.raises(IndexError, match="layer 6 out of range: the attention has 6 layers"):
        model_view(w, layers=[0, 6])
    with pytest.raises(IndexError, match="head -6 out of range"):
        model_view(w, heads=-6)
    with pytest.raises(ValueError, match=r"layer 3 is not embedded .* layers \[2\]"):
        head_view(w, layers=[2], layer=3)
    with pytest.raises(ValueError, match=r"head 1 is not embedded .* heads \[0, 2\]"):
        model_view(w, heads=[0, 2], zoom=(0, 1))
    with pytest.raises(TypeError, match="layers= takes an int or a sequence"):
        model_view(w, layers="0")


def test_only_the_selected_layers_are_read():
    w = list(distinct(3))
    w[2] = torch.full_like(w[2], float("nan"))  # a layer that is never embedded
    assert page_data(model_view(w, layers=[0, 1]).html)["layerIds"] == [0, 1]
    with pytest.raises(ValueError, match="NaN"):
        model_view(w)


def test_options_are_validated_naming_the_allowed_values():
    w = distinct(1, 1)
    with pytest.raises(ValueError, match="scale='rows': choose one of 'linear', 'row', 'log'"):
        model_view(w, scale="rows")
    with pytest.raises(ValueError, match="sink='hide': choose one of 'show', 'drop', 'separate'"):
        head_view(w, sink="hide")
    with pytest.raises(ValueError, match=r"needs at least two keys; .* Tk = 1"):
        cross_view(torch.ones(3, 1), sink="drop")
    with pytest.raises(ValueError, match=r"must lie in \[0, 6.5535\]"):
        model_view(torch.full((2, 2), -0.5))


@pytest.mark.parametrize("sink", ["drop", "separate"])
def test_sink_modes_renormalise_the_other_keys_in_full_precision(sink):
    data, shown, rest = decoded(model_view(torch.tensor(SINKY), TOKENS, sink=sink).html)
    assert data["sink"] == sink and data["scale"] == "linear"
    want = renormalised(SINKY)
    np.testing.assert_allclose(shown[0, 0], want, atol=5e-5)
    np.testing.assert_allclose(shown[0, 0, 1], [0.999, 0.42, 0.31, 0.27], atol=5e-5)
    np.testing.assert_allclose(rest[0, 0], SINKY[:, 1:].sum(-1), atol=5e-5)
    # the raw weights come back from the page: key 0 as is, key j >= 1 as shown * rest
    raw = np.concatenate([shown[..., :1], shown[..., 1:] * rest[..., None]], -1)
    np.testing.assert_allclose(raw[0, 0], SINKY, atol=1e-4)
    assert not page_data(model_view(torch.tensor(SINKY)).html)["rest"]  # "show": raw only


def test_a_page_over_the_bound_raises_and_layers_cut_it():
    w = torch.randn(6, 12, 128, 128).softmax(-1)  # 6 layers x 12 heads x 128 tokens
    with pytest.raises(ValueError) as error:
        model_view(w)
    message = str(error.value)
    assert "MAX_PAGE_CHARS = 2,000,000" in message and "layers=" in message
    size = int(re.search(r"a page of ([\d,]+) characters", message).group(1).replace(",", ""))
    assert 3_000_000 < size < 3_300_000  # 1.18 M weights at 8/3 characters each
    view = model_view(w, layers=[0])
    assert len(view.html) <= views.MAX_PAGE_CHARS
    with pytest.raises(ValueError, match="pass layers="):
        head_view(w)
    assert page_data(head_view(w, layers=-1).html)["layerIds"] == [5]


def test_the_size_is_known_exactly_before_rendering(monkeypatch):
    w = distinct(2, 3, 7)
    for kwargs in ({}, {"sink": "separate", "title": "</s> é"}):
        size = len(model_view(w, list("abcdefg"), **kwargs).html)
        monkeypatch.setattr(views, "MAX_PAGE_CHARS", size)
        model_view(w, list("abcdefg"), **kwargs)  # exactly at the bound: fits
        monkeypatch.setattr(views, "MAX_PAGE_CHARS", size - 1)
        with pytest.raises(ValueError, match=f"a page of {size:,} characters"):
            model_view(w, list("abcdefg"), **kwargs)
        monkeypatch.undo()


def test_a_minilm_sized_model_view_is_much_smaller():
    # all-MiniLM-L6-v2 on 13 tokens: 6 layers x 12 heads x 13 x 13. With the weights as JSON
    # numbers (4 decimals) this page was 103,470 characters (105,824 with the real model's
    # weights on "The cat sat on the mat near the old door."); base64 uint16 gives 61,823
    # (61,875): 28,685 of inlined script and style, 32,448 of weights
    w = torch.randn(6, 12, 13, 13).mul(3).softmax(-1)
    html = model_view(w).html
    as_numbers = len(json.dumps(w.double().round(decimals=4).tolist(), separators=(",", ":")))
    assert as_numbers > 80_000
    assert 55_000 < len(html) < 0.65 * 103_470
    assert len(page_data(html)["weights"]) == 4 * -(-2 * 6 * 12 * 13 * 13 // 3) == 32_448


# ---- drawn, in headless Chromium ---------------------------------------------------------------

PIXELS = """(selector) => {
    const c = document.querySelector(selector);
    const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    return [c.height, c.width, Array.from(px)];
}"""


@pytest.fixture
def page(browser):
    """A fresh page that fails the test on a console error, a script error or any request."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("request", lambda r: problems.append(r.url))
    page.set_default_timeout(20_000)
    yield page
    context.close()
    assert not problems, problems


def show(page, view) -> None:
    page.set_content(f"<!DOCTYPE html><body>{view.html}</body>")
    page.wait_for_selector(".akv[data-ready=true]")


def tip(page) -> str:  # the tooltip's text
    return page.locator(".akv-tip").inner_text()


def levels(page, selector="canvas.akv-thumb") -> tuple[np.ndarray, np.ndarray]:
    """A thumbnail's colour levels (0 white .. 1 dark, from the red channel of the ramp
    255 -> 8) and its alpha, each (Tq, width)."""
    height, width, data = page.evaluate(PIXELS, selector)
    px = np.array(data, dtype=float).reshape(height, width, 4)
    return (255 - px[..., 0]) / (255 - 8), px[..., 3]


LEVELS = {  # the NumPy references of the colour scales
    "linear": lambda w: w,
    "row": lambda w: w / w.max(-1, keepdims=True),
    "log": lambda w: (np.log10(np.maximum(w, 1e-4)) + 4) / 4,  # clipped at 1e-4
}


@pytest.mark.parametrize("scale", LEVELS)
def test_the_colour_scales_draw_numpys_levels(page, scale):
    w = np.array([[0.5, 0.3, 0.2], [0.05, 0.03, 0.02], [0.001, 0.009, 0.99]])
    reference = LEVELS[scale]
    show(page, model_view(torch.tensor(w), scale=scale))
    drawn, _ = levels(page)
    np.testing.assert_allclose(drawn, reference(w), atol=0.005)
    page.click("canvas.akv-thumb")  # the zoomed heatmap, same levels; tooltips stay raw
    cells = ".akv-zoom rect.akv-cell"
    fills = page.eval_on_selector_all(cells, "r => r.map(x => x.getAttribute('fill'))")
    red = np.array([int(re.match(r"rgb\((\d+)", f).group(1)) for f in fills]).reshape(3, 3)
    np.testing.assert_allclose((255 - red) / 247, reference(w), atol=0.005)
    page.hover(".akv-zoom rect.akv-cell[data-i='1'][data-j='2']")
    assert tip(page).endswith(": 0.020")


@pytest.mark.parametrize("sink", ["drop", "separate"])
def test_sink_modes_draw_the_renormalised_rest_and_key_zero_apart(page, sink):
    show(page, model_view(torch.tensor(SINKY), TOKENS, sink=sink, scale="row", zoom=(0, 0)))
    drawn, alpha = levels(page)
    rest = renormalised(SINKY)[:, 1:]
    top = rest.max(-1, keepdims=True)
    want_rest = np.divide(rest, top, out=np.zeros_like(rest), where=top > 0)  # row scale
    if sink == "drop":
        assert drawn.shape == (4, 3)  # key 0 left out
        np.testing.assert_allclose(drawn, want_rest, atol=0.005)
    else:
        assert drawn.shape == (4, 5)  # key 0, a transparent pixel, keys 1..3
        assert (alpha[:, 1] == 0).all() and (alpha[:, [0, 2, 3, 4]] == 255).all()
        np.testing.assert_allclose(drawn[:, 0], SINKY[:, 0], atol=0.005)  # raw, linear
        np.testing.assert_allclose(drawn[:, 2:], want_rest, atol=0.005)
    cells = page.locator(".akv-zoom rect.akv-cell")
    assert cells.count() == 4 * (3 if sink == "drop" else 4)
    assert page.locator(".akv-zoom rect[data-j='0']").count() == (0 if sink == "drop" else 4)
    if sink == "separate":  # key 0 stands apart: a gap before key 1
        x = page.eval_on_selector_all(
            ".akv-zoom rect[data-i='0']", "r => r.map(c => +c.getAttribute('x'))"
        )
        assert x[2] - x[1] < x[1] - x[0]
    page.hover(".akv-zoom rect.akv-cell[data-i='1'][data-j='1']")
    assert tip(page) == "the \u2192 the: 0.000 (0.420 renormalised without key 0)"
    caption = page.locator(".akv-options").inner_text()
    assert "renormalised" in caption and "\u201c<s>\u201d" in caption
    assert "largest weight" in caption


def test_labels_show_true_layer_and_head_numbers(page):
    w = distinct(6, 5, 4)
    show(page, model_view(w, layers=[4, 1], heads=[3, 0], zoom=(4, 3)))
    assert page.locator(".akv-rowhead").all_text_contents() == ["1", "4"]
    assert page.locator(".akv-colhead").all_text_contents() == ["0", "3"]
    assert page.locator(".akv-zoom-title").inner_text() == "Layer 4, head 3"
    page.hover(".akv-zoom rect.akv-cell[data-i='2'][data-j='1']")
    assert tip(page).endswith(f": {float(w[4, 3, 2, 1]):.3f}")
    drawn, _ = levels(page, "canvas[data-layer='1'][data-head='3']")
    np.testing.assert_allclose(drawn, w[1, 3].numpy(), atol=0.005)
    show(page, head_view(w, layers=[2, 4], layer=4))
    menu = page.locator("select.akv-layer option")
    assert menu.all_text_contents() == ["2", "4"]
    assert page.locator("select.akv-layer").input_value() == "1"  # layer 4, second embedded


def test_head_view_separate_draws_key_zero_as_bars(page):
    w = torch.tensor(SINKY)[None, None].expand(1, 2, 4, 4)  # two equal heads
    show(page, head_view(w, TOKENS, sink="separate", min_weight=0.0))
    assert page.locator("line.akv-line[data-k='0']").count() == 0
    assert page.locator("line.akv-line").count() == 2 * 4 * 3
    widths = [float(b.get_attribute("width")) for b in page.locator("rect.akv-sinkbar").all()]
    frame = float(page.get_attribute("rect.akv-sinkframe", "width"))
    np.testing.assert_allclose(np.array(widths) / frame, SINKY[:, 0], atol=1e-3)
    line = "line[data-head='1'][data-q='2'][data-k='1']"
    opacity = float(page.get_attribute(line, "stroke-opacity"))
    assert abs(opacity - 0.75) < 1e-3  # 0.3 / (0.3 + 0.1): renormalised over keys 1..


def test_cross_view_mean_of_heads_renormalises_the_mean(page):
    a, b = SINKY, np.array([[0.2, 0.3, 0.5, 0.0]] * 4)
    w = torch.tensor(np.stack([a, b]))  # (H = 2, Tq, Tk)
    show(page, cross_view(w, TOKENS, TOKENS, sink="drop"))  # default: the mean of the heads
    page.hover("rect.akv-cell[data-i='2'][data-j='1']")
    mean = (a + b) / 2
    want = renormalised(mean)[2, 1]  # the mean of the raw weights, renormalised
    assert tip(page) == f"cat \u2192 the: {mean[2, 1]:.3f} ({want:.3f} renormalised without key 0)"
    assert page.locator("svg.akv-align line[data-k='0']").count() == 0
