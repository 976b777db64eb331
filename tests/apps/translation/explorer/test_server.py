"""The explorer's HTTP API against real servers on 127.0.0.1 (urllib, a server thread each)."""

import json
import re
import threading
from dataclasses import replace
from importlib import resources

import pytest
import torch
from explorer_helpers import SENTENCE, Client

from attnkit.apps.translation.decode.run import load_run
from attnkit.apps.translation.decode.translate import translate_texts
from attnkit.apps.translation.explorer import make_server
from attnkit.interpret.explain import builtin_examples

STATIC = resources.files("attnkit.apps.translation.explorer") / "static"
CORE_STATIC = resources.files("attnkit.server") / "static"  # the heatmap, shared with the core
CORE_PAGE = {"index.html", "page.js", "page.css"}  # the core's generic page, not this one's


def _alive(client: Client) -> None:
    answer = client.get("/api/info")
    assert answer.status == 200 and answer.json()["mode"] in ("run", "demo")


def _shape(nested) -> tuple:
    out = []
    while isinstance(nested, list):
        out.append(len(nested))
        nested = nested[0] if nested else None
    return tuple(out)


# ------------------------------------------------------------------------------ translate


@pytest.mark.parametrize("beam", [1, 3])
def test_translate_matches_the_library(rnn_client, rnn_run, beam):
    answer = rnn_client.post("/api/translate", {"text": SENTENCE, "beam": beam})
    assert answer.status == 200, answer.body
    assert answer.headers["Content-Type"].startswith("application/json")
    got = answer.json()
    cfg, tokenizer, model = load_run(rnn_run)
    (want,) = translate_texts(
        model, tokenizer, [SENTENCE], cfg.decode, beam_size=beam, need_weights=True
    )
    assert got["src_pieces"] == want.src_pieces
    assert got["tgt_pieces"] == want.tgt_pieces[0]
    assert got["output"] == want.text and got["finished"] == want.finished[0]
    assert got["rows"] == want.tgt_pieces[0] + (["</s>"] if want.finished[0] else [])
    assert list(got["attention"]) == ["cross"]
    cross = got["attention"]["cross"]
    assert cross["kind"] == "cross" and cross["cols"] == want.src_pieces
    t_out, s = len(got["rows"]), len(got["src_pieces"])
    assert _shape(cross["heads"]) == (1, t_out, s)
    expected = want.attention[0]["cross"].double()  # (1, T_out, S)
    assert torch.allclose(
        torch.tensor(cross["heads"], dtype=torch.float64), expected, atol=1e-6, rtol=0
    )
    for row in cross["heads"][0]:
        assert sum(row) == pytest.approx(1.0, abs=1e-4)
    assert len(got["steps"]) == t_out
    assert [step["token"] for step in got["steps"]] == got["rows"]
    assert all(0.0 <= step["prob"] <= 1.0 for step in got["steps"])
    assert all(len(step["alternatives"]) <= 3 for step in got["steps"])
    assert 1 <= len(got["hypotheses"]) <= beam
    assert got["hypotheses"][0]["text"] == got["output"]
    scores = [h["score"] for h in got["hypotheses"]]
    assert scores == sorted(scores, reverse=True)


def test_every_beam_hypothesis_carries_its_own_attention_and_steps(rnn_client, rnn_run):
    """The page can step through any hypothesis: each has the library's attention for it."""
    got = rnn_client.post("/api/translate", {"text": SENTENCE, "beam": 4}).json()
    cfg, tokenizer, model = load_run(rnn_run)
    decode = replace(cfg.decode, n_best=4)
    (want,) = translate_texts(model, tokenizer, [SENTENCE], decode, beam_size=4, need_weights=True)
    assert len(got["hypotheses"]) == len(want.outputs) > 1
    for k, hyp in enumerate(got["hypotheses"]):
        assert hyp["text"] == want.outputs[k] and hyp["tgt_pieces"] == want.tgt_pieces[k]
        assert hyp["rows"] == want.tgt_pieces[k] + (["</s>"] if want.finished[k] else [])
        heads = torch.tensor(hyp["attention"]["cross"]["heads"], dtype=torch.float64)
        expected = want.attention[k]["cross"].double()  # (1, T_out, S)
        assert torch.allclose(heads, expected, atol=1e-6, rtol=0)
        assert [step["token"] for step in hyp["steps"]] == hyp["rows"]
    best = got["hypotheses"][0]
    assert best["attention"] == got["attention"] and best["steps"] == got["steps"]
    assert got["hypotheses"][1]["attention"] != got["attention"]


def test_step_probabilities_are_the_greedy_choice(rnn_client):
    """Under greedy search each chosen token is the most likely one at its step."""
    got = rnn_client.post("/api/translate", {"text": SENTENCE, "beam": 1}).json()
    for step in got["steps"]:
        assert all(step["prob"] >= p - 1e-6 for _, p in step["alternatives"])


def test_transformer_gives_every_layer_and_head(transformer_client, transformer_run):
    got = transformer_client.post("/api/translate", {"text": "The red dog sleeps."}).json()
    cfg = load_run(transformer_run)[0]
    assert got["arch"] == "transformer" and got["beam"] == cfg.decode.beam_size
    names = {f"layer{layer}.{kind}" for layer in range(2) for kind in ("self", "cross")}
    assert set(got["attention"]) == names
    t_out, s = len(got["rows"]), len(got["src_pieces"])
    for name, entry in got["attention"].items():
        assert entry["layer"] == int(name[5])
        if entry["kind"] == "self":
            assert entry["cols"] == ["<s>", *got["rows"][:-1]]  # the decoder inputs
            assert _shape(entry["heads"]) == (2, t_out, t_out)
            weights = torch.tensor(entry["heads"])
            assert torch.all(weights.triu(diagonal=1) == 0)  # no peeking at later outputs
        else:
            assert entry["cols"] == got["src_pieces"]
            assert _shape(entry["heads"]) == (2, t_out, s)


def test_text_is_one_line(rnn_client):
    got = rnn_client.post("/api/translate", {"text": "  The red\n dog   sleeps. "}).json()
    assert got["source"] == "The red dog sleeps."


def test_parallel_requests_all_answer(rnn_client):
    answers = [None] * 4

    def ask(i):
        answers[i] = rnn_client.post("/api/translate", {"text": SENTENCE, "beam": 1 + i % 2})

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert [a.status for a in answers] == [200] * 4
    assert answers[0].json() == answers[2].json()


# --------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "body, needle",
    [
        ({"text": ""}, "empty"),
        ({"text": "   \n "}, "empty"),
        ({"text": "x" * 121}, "121 characters; the limit is 120"),
        ({"text": 42}, "must be a string"),
        ({"text": "The dog.", "beam": 0}, "beam"),
        ({"text": "The dog.", "beam": "2"}, "beam"),
        ({"text": "The dog.", "beam": True}, "beam"),
        ({"text": "The dog.", "beam": 17}, "beam"),
        ({"text": "The dog.", "colour": "red"}, "unknown field"),
        (["The dog."], "JSON object"),
        (b'{"text": "The dog."', "malformed JSON"),
        (b"\xff\xfe", "malformed JSON"),
    ],
)
def test_bad_input_is_a_400_and_the_server_goes_on(rnn_client, body, needle):
    answer = rnn_client.post("/api/translate", body)
    assert answer.status == 400
    error = answer.json()
    assert needle in error["error"] and error["status"] == 400
    _alive(rnn_client)


def test_the_limit_itself_is_accepted(rnn_client):
    assert rnn_client.post("/api/translate", {"text": "a " * 59 + "b."}).status == 200  # 120


@pytest.mark.parametrize(
    "method, path, body, headers, status",
    [
        ("GET", "/api/translate", None, None, 405),
        ("GET", "/nowhere", None, None, 404),
        ("POST", "/api/nowhere", {"text": "x"}, None, 404),
        ("POST", "/nowhere", {"text": "x"}, None, 404),
        ("POST", "/api/translate", b"text=x", {"Content-Type": "text/plain"}, 415),
        ("POST", "/api/translate", b"x" * 70000, None, 413),
        ("GET", "/api/info", None, {"Host": "attacker.example:80"}, 403),
    ],
)
def test_other_errors_are_json(rnn_client, method, path, body, headers, status):
    answer = rnn_client.request(method, path, body, headers)
    assert answer.status == status
    assert answer.headers["Content-Type"].startswith("application/json")
    assert answer.json()["error"]
    _alive(rnn_client)


def test_an_exception_is_a_500_and_the_server_goes_on(rnn_server, rnn_client, monkeypatch):
    def broken(request):
        raise RuntimeError("the model fell over")

    with monkeypatch.context() as patch:
        patch.setattr(rnn_server.explorer, "translate", broken)
        answer = rnn_client.post("/api/translate", {"text": SENTENCE})
        assert answer.status == 500
        assert answer.json()["error"] == "internal error: RuntimeError: the model fell over"
        assert rnn_client.get("/api/examples").status == 200
    assert rnn_client.post("/api/translate", {"text": SENTENCE}).status == 200


def test_demo_mode_has_no_translation(demo_client):
    info = demo_client.get("/api/info").json()
    assert info["mode"] == "demo"
    answer = demo_client.post("/api/translate", {"text": SENTENCE})
    assert answer.status == 404
    assert (
        "demo mode" in answer.json()["error"] and "attnkit serve RUN_DIR" in answer.json()["error"]
    )
    _alive(demo_client)


def test_a_missing_run_directory_is_reported(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a run directory"):
        make_server(tmp_path / "missing")


# ------------------------------------------------------------------------------- examples


def test_examples_are_the_explain_walkthroughs(demo_client):
    got = demo_client.get("/api/examples").json()["examples"]
    want = json.loads(json.dumps([w.to_dict() for w in builtin_examples()]))
    assert got == want
    two_word = got[0]
    assert two_word["scores"] == [[112.0, 96.0]] and two_word["scaled_scores"] == [[14.0, 12.0]]
    assert [round(w, 2) for w in two_word["weights"][0]] == [0.88, 0.12]


# ---------------------------------------------------------------------------- static files


def _static_names():
    core = {entry.name for entry in CORE_STATIC.iterdir() if entry.is_file()} - CORE_PAGE
    return sorted(core | {entry.name for entry in STATIC.iterdir() if entry.is_file()})


def _static(name: str):
    """The vendored file ``name``: the explorer's own, else the core's."""
    return STATIC / name if (STATIC / name).is_file() else CORE_STATIC / name


def test_the_page_and_every_static_file_are_served(demo_client):
    page = demo_client.get("/")
    assert page.status == 200 and page.headers["Content-Type"].startswith("text/html")
    assert b'src="/static/app.js"' in page.body
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]
    kinds = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}
    kinds[".svg"] = "image/svg+xml"
    for name in _static_names():
        answer = demo_client.get(f"/static/{name}")
        assert answer.status == 200, name
        assert answer.body == _static(name).read_bytes()
        assert answer.headers["Content-Type"].startswith(kinds[name[name.rindex(".") :]])
    head = demo_client.request("HEAD", "/static/app.js")
    assert head.status == 200 and head.body == b""


def test_every_module_the_page_imports_is_served(demo_client):
    names = set(_static_names())
    for name in names:
        text = _static(name).read_text(encoding="utf-8")
        for target in re.findall(r'from "\./([^"]+)"', text):
            assert target in names, f"{name} imports {target}, which is not vendored"
        for target in re.findall(r'(?:src|href)="/static/([^"]+)"', text):
            assert target in names, f"{name} links {target}, which is not vendored"


@pytest.mark.parametrize(
    "path", ["/static/../app.py", "/static/%2e%2e/app.py", "/static/missing.js", "/static/"]
)
def test_nothing_else_is_served(demo_client, path):
    assert demo_client.get(path).status == 404


SVG_NAMESPACE = "http://www.w3.org/2000/svg"  # an XML name, never fetched


def test_no_static_file_points_outside(demo_client):
    names = _static_names()
    assert {"index.html", "app.js", "style.css"} <= set(names)
    for name in names:
        text = _static(name).read_text(encoding="utf-8").replace(SVG_NAMESPACE, "")
        assert not re.search(r"(https?:)?//[\w.-]+\.\w", text), name
        assert not re.search(r"\b(https?|ftp|wss?):", text), name
        assert "@import" not in text and "url(" not in text and "cdn" not in text.lower(), name
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    for target in re.findall(r'(?:src|href)="([^"]+)"', page):
        assert target.startswith("/static/"), target
