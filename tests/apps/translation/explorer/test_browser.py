"""The explorer page in a real browser: headless Chromium driven by Playwright's Python client.

Needs the ``playwright`` package (its own driver, no downloaded browsers) and Debian's
``/usr/bin/chromium``; ``.ci/install-browser`` installs both. Without them the tests skip,
saying why, except in CI (``CI=true``), where they fail: a failed browser install must not
pass green (the decision is :func:`browser_policy.require_browser`).
Set ``ATTNKIT_EXPLORER_SCREENSHOT=PATH`` to save a screenshot of the page after a translation.
"""

from __future__ import annotations

import os
import struct
import xml.etree.ElementTree as ET

import pytest
from explorer_helpers import SENTENCE

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def page(browser):
    """A fresh page that fails the test on a script error or a request to another host."""
    context = browser.new_context(viewport={"width": 1200, "height": 900}, accept_downloads=True)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: (
            problems.append(f"console: {message.text}")
            if message.type == "error" and "status of 400" not in message.text
            else None
        ),
    )
    page.on(
        "request",
        lambda request: (
            None
            if request.url.startswith(("http://127.0.0.1:", "blob:", "data:"))
            else problems.append(f"request outside: {request.url}")
        ),
    )
    page.set_default_timeout(30_000)
    yield page
    context.close()
    assert not problems, problems


def _open(page, server):
    page.goto(server.url)
    page.wait_for_selector("body[data-ready=true]")


def _translate(page, text=SENTENCE, beam=1) -> dict:
    page.fill("#text", text)
    page.fill("#beam", str(beam))
    with page.expect_response("**/api/translate") as response:
        page.click("#translate-btn")
    page.wait_for_selector("#heatmap rect.cell")
    return response.value.json()


def _cells(page) -> list[tuple[int, int, float]]:
    return page.eval_on_selector_all(
        "#heatmap rect.cell",
        "cells => cells.map(c => [+c.dataset.row, +c.dataset.col, +c.dataset.weight])",
    )


def _hover_weight(page, i: int, j: int) -> tuple[float, str, str]:
    page.hover(f'#heatmap rect.cell[data-row="{i}"][data-col="{j}"]')
    page.wait_for_selector("#tooltip:not([hidden])")
    weight = float(page.inner_text("#tooltip .tip-weight"))
    return weight, page.inner_text("#tooltip .tip-row"), page.inner_text("#tooltip .tip-col")


def test_heatmap_has_one_cell_per_pair_and_hover_shows_the_weight(page, rnn_server):
    _open(page, rnn_server)
    result = _translate(page)
    rows, cols = result["rows"], result["src_pieces"]
    weights = result["attention"]["cross"]["heads"][0]  # (T_out, S)
    cells = _cells(page)
    assert len(cells) == len(rows) * len(cols)
    assert {(i, j) for i, j, _ in cells} == {
        (i, j) for i in range(len(rows)) for j in range(len(cols))
    }
    assert all(w == weights[i][j] for i, j, w in cells)
    strongest = max(
        ((i, j) for i in range(len(rows)) for j in range(len(cols))),
        key=lambda p: weights[p[0]][p[1]],
    )
    for i, j in [(0, 0), (len(rows) - 1, len(cols) - 1), strongest]:
        weight, row, col = _hover_weight(page, i, j)
        assert weight == pytest.approx(weights[i][j], abs=5e-7)
        assert row == rows[i] and col == cols[j]
    assert page.inner_text("#translation") == result["output"]
    # one attention, one head: the view picker offers it and its Shift-Att reading
    assert page.is_visible("#view-box") and page.is_hidden("#head-box")
    assert page.input_value("#view") == "cross"
    page.select_option("#view", "cross (shift)")  # row k shows step k + 1; the last row is 0
    shifted = {(i, j): w for i, j, w in _cells(page)}
    assert all(
        shifted[i, j] == weights[i + 1][j] for i in range(len(rows) - 1) for j in range(len(cols))
    )
    assert all(shifted[len(rows) - 1, j] == 0 for j in range(len(cols)))
    if os.environ.get("ATTNKIT_EXPLORER_SCREENSHOT"):
        page.mouse.move(0, 0)
        page.screenshot(path=os.environ["ATTNKIT_EXPLORER_SCREENSHOT"], full_page=True)


def test_export_gives_a_valid_svg_and_a_png(page, rnn_server, tmp_path):
    _open(page, rnn_server)
    result = _translate(page)
    with page.expect_download() as download:
        page.click("#export-svg")
    assert download.value.suggested_filename == "attention-heatmap.svg"
    path = tmp_path / "heatmap.svg"
    download.value.save_as(path)
    root = ET.parse(path).getroot()  # raises on malformed XML
    assert root.tag == f"{SVG}svg" and float(root.get("width")) > 0
    cells = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "cell"]
    assert len(cells) == len(result["rows"]) * len(result["src_pieces"])
    assert all(c.get("fill", "").startswith("rgb(") for c in cells)  # styled without CSS
    labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "col-label"]
    assert len(labels) == len(result["src_pieces"])

    with page.expect_download() as download:
        page.click("#export-png")
    png = tmp_path / "heatmap.png"
    download.value.save_as(png)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width == 2 * int(float(root.get("width"))) and height > 0


def test_step_through_reveals_one_row_at_a_time(page, rnn_server):
    _open(page, rnn_server)
    result = _translate(page)
    n_cols = len(result["src_pieces"])
    visible = "#heatmap rect.cell:not([visibility=hidden])"
    page.click("#step-first")
    assert page.locator(visible).count() == 0
    assert page.inner_text("#step-label") == f"step 0 of {len(result['rows'])}"
    page.click("#step-next")
    assert page.locator(visible).count() == n_cols
    assert page.locator("#output .piece:not(.future)").count() == 1
    assert result["steps"][0]["token"] in page.inner_text("#step-info")
    page.click("#step-next")
    assert page.locator(visible).count() == 2 * n_cols
    page.click("#step-last")
    assert page.locator(visible).count() == len(result["rows"]) * n_cols


def test_choosing_a_beam_hypothesis_shows_its_attention(page, rnn_server):
    _open(page, rnn_server)
    result = _translate(page, beam=4)
    hyps = result["hypotheses"]
    assert len(hyps) > 1 and page.is_visible("#hypotheses-box")
    assert page.get_attribute('button.hyp[data-hyp="0"]', "aria-pressed") == "true"
    page.click('button.hyp[data-hyp="1"]')
    assert page.get_attribute('button.hyp[data-hyp="1"]', "aria-pressed") == "true"
    assert page.get_attribute('button.hyp[data-hyp="0"]', "aria-pressed") == "false"
    assert page.inner_text("#translation") == hyps[1]["text"]
    weights = hyps[1]["attention"]["cross"]["heads"][0]  # (T_out, S) of hypothesis 1
    cells = _cells(page)
    assert len(cells) == len(hyps[1]["rows"]) * len(result["src_pieces"])
    assert all(w == weights[i][j] for i, j, w in cells)
    page.click("#step-first")
    page.click("#step-next")
    assert hyps[1]["steps"][0]["token"] in page.inner_text("#step-info")


def test_alignment_lines_follow_the_threshold_and_top_k(page, rnn_server):
    _open(page, rnn_server)
    result = _translate(page)
    weights = result["attention"]["cross"]["heads"][0]
    page.fill("#filter", "0.3")
    expected = sum(w >= 0.3 for row in weights for w in row)
    assert page.locator("#lines line.link").count() == expected
    page.fill("#filter", "0")
    assert page.locator("#lines line.link").count() == len(weights) * len(weights[0])
    page.select_option("#filter-mode", "topk")
    assert page.locator("#lines line.link").count() == len(weights)  # top 1 per row
    page.fill("#filter", "2")
    assert page.locator("#lines line.link").count() == 2 * len(weights)


def test_layer_and_head_selectors_for_a_transformer(page, transformer_server):
    _open(page, transformer_server)
    result = _translate(page, "The red dog sleeps.")
    assert page.is_visible("#view-box") and page.is_visible("#head-box")
    assert page.input_value("#view") == "layer1.cross"  # the last layer's cross-attention
    heads = result["attention"]["layer1.cross"]["heads"]
    page.select_option("#head", "1")
    weight, _, _ = _hover_weight(page, 0, 1)
    assert weight == pytest.approx(heads[1][0][1], abs=5e-7)
    page.select_option("#head", "mean")
    weight, _, _ = _hover_weight(page, 0, 1)
    assert weight == pytest.approx((heads[0][0][1] + heads[1][0][1]) / 2, abs=1e-6)
    page.select_option("#view", "layer0.self")
    t_out = len(result["rows"])
    assert page.locator("#heatmap rect.cell").count() == t_out * t_out
    assert page.text_content("#heatmap .col-label >> nth=0") == "<s>"


def test_worked_example_panel_computes_a_clicked_word(page, demo_server):
    _open(page, demo_server)
    assert page.is_hidden("#translate-form") and page.is_visible("#demo-note")
    assert page.locator("#heatmap rect.cell").count() == 2  # the two-word example, shown at once
    assert page.locator("#computation td.weight").all_inner_texts() == ["0.88", "0.12"]
    assert page.locator("#computation td.score").all_inner_texts() == ["112", "96"]
    page.select_option("#example", index=2)  # the sentence with the scaled dot product
    page.click('#example-words .word[data-index="1"]')  # "cat"
    assert page.get_attribute('#example-words .word[data-index="1"]', "aria-pressed") == "true"
    table = page.locator("#computation table")
    assert table.locator("tbody tr").count() == 6
    assert "“cat”" in page.inner_text("#computation .explanation")
    assert float(table.locator("tfoot td").all_inner_texts()[-2]) == pytest.approx(1.0)
    page.click("#example-heatmap")
    assert page.locator("#heatmap rect.cell").count() == 36


def test_errors_are_shown_and_the_page_recovers(page, rnn_server):
    _open(page, rnn_server)
    page.fill("#text", "   ")
    page.click("#translate-btn")
    page.wait_for_selector("#status.error")
    assert "empty" in page.inner_text("#status")
    result = _translate(page)
    assert page.locator("#heatmap rect.cell").count() == len(result["rows"]) * len(
        result["src_pieces"]
    )
