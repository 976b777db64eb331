"""The explorer's limits (issue 15, item 4): malformed input of any kind is a JSON 4xx naming the
field at fault, never HTML or a 500; stalled connections are dropped; connections and answers
are bounded. Against real servers on 127.0.0.1 (the session's tiny runs, or demo servers)."""

import json
import math
import re
import socket
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from explorer_helpers import SENTENCE, Client, parse_answer, raw_exchange, start, stop
from hypothesis import given
from hypothesis import strategies as st

from fuzz_counts import record

JSON = "application/json"
LONG_TEXT = ((SENTENCE + " ") * 13)[:500].strip()  # the reported request: 500 characters
HOST = b"Host: 127.0.0.1\r\n"
POST = b"POST /api/translate HTTP/1.1\r\n" + HOST + b"Content-Type: application/json\r\n"
ROOT = Path(__file__).resolve().parents[4]


def _limits(**fields):
    """``Limits`` with ``fields`` changed (imported late, so the other tests can run without)."""
    from attnkit.apps.translation.explorer.limits import LIMITS

    return replace(LIMITS, **fields)


def _error(answer, status: int) -> str:
    """The JSON error message of ``answer``, after checking its status and content type."""
    assert answer.status == status, (answer.status, answer.body[:300])
    assert answer.headers.get("Content-Type", "").startswith(JSON), answer.headers
    error = answer.json()
    assert error["status"] == status and error["error"]
    return error["error"]


def _wait_until(condition, seconds: float = 10) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


# ------------------------------------------------------------------------ bad bodies


@pytest.mark.parametrize("escaped", [r"\ud800", r"The \udfff dog.", r"The dog \ud83d."])
def test_a_lone_surrogate_is_a_400_naming_text(rnn_client, escaped):
    answer = rnn_client.post("/api/translate", b'{"text": "' + escaped.encode() + b'"}')
    assert _error(answer, 400).startswith("text: character")
    paired = rnn_client.post("/api/translate", b'{"text": "The dog \\ud83d\\ude00."}')
    assert paired.status == 200  # a proper pair is one character


@pytest.mark.parametrize(
    "body",
    [b"[" * 30000 + b"]" * 30000, b'{"text":' * 6000 + b'"x"' + b"}" * 6000],
    ids=["lists", "objects"],
)
def test_deeply_nested_json_is_a_400(rnn_client, body):
    assert len(body) < 64 * 1024  # under the body limit: the parser sees it
    message = _error(rnn_client.post("/api/translate", body), 400)
    assert message.startswith("body: JSON nested too deeply")


@pytest.mark.parametrize("field", ["beam", "text", "n_best"])
def test_a_5000_digit_number_is_a_400_naming_its_field(rnn_client, field):
    body = b'{"text": "The dog.", "' + field.encode() + b'": ' + b"9" * 5000 + b"}"
    message = _error(rnn_client.post("/api/translate", body), 400)
    assert message.startswith(f"{field}: ") and "a number of 5000 digits" in message


# ------------------------------------------------------------ methods and request lines


@pytest.mark.parametrize("method", ["PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "BREW"])
@pytest.mark.parametrize("path, allow", [("/api/translate", "POST"), ("/api/info", "GET, HEAD")])
def test_other_methods_are_a_405_in_json_with_allow(rnn_client, method, path, allow):
    answer = rnn_client.request(method, path, b"{}")
    assert _error(answer, 405).startswith("method: ")
    assert answer.headers["Allow"] == allow


def test_get_on_the_translation_names_the_method_to_use(rnn_client):
    answer = rnn_client.get("/api/translate")
    assert _error(answer, 405) == "method: use POST for /api/translate"
    assert answer.headers["Allow"] == "POST"


MAXLINE = 65537  # one byte over the line limit (64 KiB for the request line and headers)
RAW = {
    "garbage": (b"GARBAGE\r\n\r\n", 400, "request line: "),
    "four words": (b"GET / HTTP/1.1 x\r\n\r\n", 400, "request line: "),
    "bad version": (b"GET / HTTX/1.1\r\n\r\n", 400, "request line: "),
    "binary": (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400, "request line: "),
    "empty": (b"\r\n", 400, "request line: empty"),
    "HTTP/0.9": (b"GET /\r\n", 400, "request: ended before its headers did"),
    "HTTP/2 without Host": (b"GET / HTTP/2.0\r\n\r\n", 403, "Host: "),
    "long line": (b"GET /" + b"a" * (MAXLINE - 5), 431, "headers: "),
    "long header": (b"GET / HTTP/1.0\r\nX: " + b"a" * (MAXLINE - 3), 431, "headers: "),
    "many headers": (b"GET / HTTP/1.0\r\n" + HOST + b"X: y\r\n" * 101 + b"\r\n", 431, "headers: "),
    "bad Host": (b"GET /api/info HTTP/1.1\r\nHost: [\r\n\r\n", 403, "Host: "),
    "bad target": (b"GET http://[ HTTP/1.1\r\n" + HOST + b"\r\n", 404, "path: "),
    "no length": (POST + b"\r\n", 411, "Content-Length: "),
    "bad length": (POST + b"Content-Length: ten\r\n\r\n", 400, "Content-Length: "),
    "huge length": (
        POST + b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n",
        400,
        "Content-Length: ",
    ),
    "too long": (POST + b"Content-Length: 70000\r\n\r\n", 413, "body: 70000 bytes"),
    "chunked": (POST + b"Transfer-Encoding: chunked\r\n\r\n", 400, "Transfer-Encoding: "),
    "short body": (POST + b"Content-Length: 20\r\n\r\n{}", 400, "body: ended before the Content"),
    "form": (b"POST /api/translate HTTP/1.1\r\n" + HOST + b"\r\n", 415, "Content-Type: "),
}


@pytest.mark.parametrize("name", list(RAW))
def test_the_protocols_errors_are_json_too(rnn_server, name):
    """What the HTTP parser refuses itself (uvicorn answers it in text), and transport
    errors."""
    data, status, start_of_message = RAW[name]
    answer = raw_exchange(rnn_server, data)
    assert _error(answer, status).startswith(start_of_message)
    assert b"<html" not in answer.body.lower()
    assert Client(rnn_server).get("/api/info").status == 200


# ------------------------------------------------------------------------ connections


def _connections(server) -> int:
    return len(server.uvicorn.server_state.connections)


def test_stalled_connections_are_dropped():
    """30 stalled sockets would be held for ever; the default timeout (5 s) drops them."""
    server, thread = start(None)
    stalls = [
        b"",  # connected, says nothing
        b"GET /api/info HTTP/1.1\r\n",  # stops in the headers
        POST + b'Content-Length: 100\r\n\r\n{"te',  # stops in the body
    ]
    sockets = []
    try:
        began = time.monotonic()
        sockets = [socket.create_connection(server.server_address[:2]) for _ in range(30)]
        for i, sock in enumerate(sockets):
            sock.settimeout(15)
            sock.sendall(stalls[i % 3])
        assert _wait_until(lambda: _connections(server) == 30, 5)
        assert all(sock.recv(65536) == b"" for sock in sockets)  # closed by the server
        assert 4 < time.monotonic() - began < 9
        assert _wait_until(lambda: _connections(server) == 0, 5)
        assert Client(server).get("/api/info").status == 200
    finally:
        for sock in sockets:
            sock.close()
        stop(server, thread)


def test_connections_beyond_the_limit_get_a_503_in_json():
    """At most 32 connections at once (the default): the 33rd is answered at once and closed."""
    server, thread = start(None)
    address = server.server_address[:2]
    held = [socket.create_connection(address) for _ in range(32)]
    try:
        assert _wait_until(lambda: _connections(server) == 32, 5)
        with socket.create_connection(address, timeout=3) as extra:
            chunks = []
            while chunk := extra.recv(65536):  # answered before it says anything
                chunks.append(chunk)
        message = _error(parse_answer(b"".join(chunks)), 503)
        assert message.startswith("connections: at most 32 at once")
        for sock in held:
            sock.close()
        assert _wait_until(lambda: Client(server).get("/api/info").status == 200, 5)
    finally:
        for sock in held:
            sock.close()
        stop(server, thread)


# ---------------------------------------------------------------------- answer sizes


def _weights(payload: dict) -> int:
    """Attention weights in an answer: its hypotheses' and the top level's (the best again)."""

    def count(nested):
        return sum(count(x) for x in nested) if isinstance(nested, list) else 1

    attentions = [payload["attention"], *(hyp["attention"] for hyp in payload["hypotheses"])]
    return sum(count(view["heads"]) for views in attentions for view in views.values())


def test_the_reported_request_is_refused_and_the_largest_allowed_is_a_few_mb(transformer_client):
    """500 characters with beam 16 answered 15 to 65 MB; now the beam is bounded for the text,
    and so is the answer (all layers and heads of this text would not fit: one of each)."""
    answer = transformer_client.post("/api/translate", {"text": LONG_TEXT, "beam": 16})
    message = _error(answer, 400)
    from attnkit.apps.translation.explorer.limits import LIMITS

    most = int(re.match(r"beam: at most (\d+) for this text, got 16", message).group(1))
    assert 1 <= most < 16
    request = {"text": LONG_TEXT, "beam": most, "layers": [1], "heads": [0]}
    largest = transformer_client.post("/api/translate", request)  # all would not fit
    assert largest.status == 200 and len(largest.body) < 5_000_000
    payload = largest.json()
    assert 1 <= len(payload["hypotheses"]) <= LIMITS.max_n_best
    assert LIMITS.max_weights // 2 < _weights(payload) <= LIMITS.max_weights


@pytest.mark.parametrize(
    "body, message",
    [
        ({"beam": 8, "n_best": 5}, "n_best: at most 4, got 5"),
        ({"beam": 2, "n_best": 3}, "n_best: at most the beam (2), got 3"),
        ({"n_best": 0}, "n_best: at least 1, got 0"),
        ({"beam": 17}, "beam: at most 16, got 17"),
        ({"layers": [0]}, "layers: this model's attention has no layers"),
        ({"heads": [1]}, "heads: each must be a head number from 0 to 0, got 1"),
        ({"heads": []}, "heads: must be a non-empty list"),
    ],
)
def test_requests_beyond_a_limit_are_refused_naming_the_field(rnn_client, body, message):
    answer = rnn_client.post("/api/translate", {"text": SENTENCE, **body})
    assert _error(answer, 400).startswith(message)


def test_n_best_defaults_to_at_most_four_hypotheses(rnn_client):
    got = rnn_client.post("/api/translate", {"text": SENTENCE, "beam": 8}).json()
    assert 1 <= len(got["hypotheses"]) <= 4
    three = rnn_client.post("/api/translate", {"text": SENTENCE, "beam": 8, "n_best": 3}).json()
    assert three["hypotheses"] == got["hypotheses"][:3]


@pytest.fixture
def limited(rnn_run, monkeypatch):
    """A server on the tiny GRU run whose ``limits`` a test may change."""
    server, thread = start(rnn_run, max_chars=120)
    yield server, Client(server)
    stop(server, thread)


def test_the_answer_holds_as_many_hypotheses_as_fit(limited):
    server, client = limited
    full = client.post("/api/translate", {"text": SENTENCE, "beam": 4, "n_best": 4}).json()
    sizes = [len(h["rows"]) * len(full["src_pieces"]) for h in full["hypotheses"]]  # 1 head
    assert len(sizes) >= 3 and _weights(full) == sizes[0] + sum(sizes)  # the best twice
    server.explorer.limits = _limits(max_chars=120, max_weights=2 * sizes[0] + sizes[1])
    two = client.post("/api/translate", {"text": SENTENCE, "beam": 4}).json()
    assert two["hypotheses"] == full["hypotheses"][:2]
    refused = client.post("/api/translate", {"text": SENTENCE, "beam": 4, "n_best": 3})
    assert _error(refused, 400).startswith("n_best: at most 2 for this text, got 3")
    server.explorer.limits = _limits(max_chars=120, max_weights=2 * sizes[0] - 1)
    refused = client.post("/api/translate", {"text": SENTENCE, "beam": 4})
    assert _error(refused, 400).startswith("text: the translation's attention holds")


def test_the_search_is_bounded_before_it_runs(limited):
    from attnkit.apps.translation.explorer.budget import search_steps

    server, client = limited
    pieces = len(client.post("/api/translate", {"text": SENTENCE, "beam": 1}).json()["src_pieces"])
    each = pieces * search_steps(server.explorer.cfg.decode, pieces)  # 1 head: T_max x S
    server.explorer.limits = _limits(max_chars=120, max_search_weights=2 * each + 1)
    assert client.post("/api/translate", {"text": SENTENCE, "beam": 2}).status == 200
    refused = client.post("/api/translate", {"text": SENTENCE, "beam": 3})
    assert _error(refused, 400).startswith("beam: at most 2 for this text, got 3")
    server.explorer.limits = _limits(max_chars=120, max_search_weights=each - 1)
    refused = client.post("/api/translate", {"text": SENTENCE, "beam": 1})
    assert _error(refused, 400).startswith("text: too long for this model's attention")


def test_layers_and_heads_choose_what_is_returned(transformer_client):
    text = {"text": "The red dog sleeps.", "beam": 1}
    full = transformer_client.post("/api/translate", text).json()
    part = transformer_client.post("/api/translate", {**text, "layers": [1], "heads": [1]}).json()
    assert set(part["attention"]) == {"layer1.self", "layer1.cross"}
    for name, view in part["attention"].items():
        assert view["head_ids"] == [1]
        assert view["heads"] == [full["attention"][name]["heads"][1]]
    assert full["attention"]["layer0.cross"]["head_ids"] == [0, 1]
    for body, message in [
        ({"layers": [2]}, "layers: each must be a layer number from 0 to 1, got 2"),
        ({"heads": [0, 0]}, "heads: each head at most once"),
        ({"layers": "1"}, "layers: must be a non-empty list of layer numbers"),
    ]:
        answer = transformer_client.post("/api/translate", {**text, **body})
        assert _error(answer, 400).startswith(message)


# ------------------------------------------------------------------------------- fuzz

CHARACTERS = st.characters() | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(CHARACTERS, max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)
FIELDS = st.sampled_from(["text", "beam", "n_best", "layers", "heads", "other"])
BODIES = st.one_of(
    st.dictionaries(FIELDS, VALUES, max_size=5).map(lambda body: json.dumps(body).encode()),
    VALUES.map(lambda value: json.dumps(value).encode()),
    st.binary(max_size=80),
)
REFUSED = re.compile(r"^(text|beam|n_best|layers|heads|body): ")


@given(body=BODIES)
def test_no_body_gets_a_500(rnn_server, body):
    answer = Client(rnn_server).post("/api/translate", body)
    assert answer.status in (200, 400), (body, answer.status, answer.body[:300])
    record("explorer request body", f"{answer.status}")
    payload = answer.json()
    if answer.status == 400:
        assert REFUSED.match(payload["error"]), payload
    else:
        assert payload["hypotheses"] and math.isfinite(payload["score"])


# -------------------------------------------------------------------------- load test


def _load_script():
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from benchmarks import explorer_load

    return explorer_load


@pytest.mark.parametrize("host", ["0.0.0.0", "10.1.2.3", "::", "example.org"])
def test_the_load_test_targets_loopback_only(tmp_path, host):
    with pytest.raises(SystemExit, match="not a loopback address"):
        _load_script().main([str(tmp_path), "--host", host, "--out", str(tmp_path / "x.json")])
    assert not (tmp_path / "x.json").exists()


@pytest.mark.slow
def test_a_reduced_load_test_serves_every_request(rnn_run, tmp_path):
    """``benchmarks/explorer_load.py`` with 300 requests from 20 clients (2,000 for the note)."""
    out = tmp_path / "load.json"
    args = [str(rnn_run), "--requests", "300", "--time-limit", "300", "--out", str(out)]
    result = _load_script().main(args)
    assert json.loads(out.read_text()) == result
    assert result["served"] == 300 and result["errors"] == 0, result["error_examples"]
    assert 0 < result["largest_answer_bytes"] < 6_000_000
    memory = result["memory"]
    assert memory["end"]["threads"] <= 2  # the main thread and the translation worker
    assert memory["end"]["rss_mb"] < memory["after_probe"]["rss_mb"] + 150
