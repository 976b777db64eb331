"""The raw HTTP/1.1 requests of the explorer's load test (benchmarks/explorer_load.py): a
well-formed request, a POST with header lines as they are, every kind of bad request the
explorer refuses with the status it must answer, and one exchange over a socket."""

from __future__ import annotations

import json
import re
import socket

SENTENCES = [
    "The small cat sees the big blue table.",
    "The red dog sleeps.",
    "A man reads a book in the garden.",
    "Two children play with a ball.",
    "The old woman drinks hot tea.",
]


def request(host: str, method: str, path: str, body: bytes | None = None, kind=None) -> bytes:
    """One HTTP/1.1 request with ``Connection: close`` (a JSON body unless ``kind`` says)."""
    head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n"
    if body is not None:
        head += f"Content-Type: {kind or 'application/json'}\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + (body or b"")


def post_head(host: str, extra: str, body: bytes = b"") -> bytes:
    """A JSON POST to the translation with ``extra`` header lines as they are, then ``body``."""
    head = f"POST /api/translate HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
    return (head + extra + "\r\n").encode() + body


def malformed(host: str) -> list[tuple[str, bytes, int]]:
    """``(name, raw request, expected status)`` for each kind of bad request."""

    def post(body: bytes, kind=None) -> bytes:
        return request(host, "POST", "/api/translate", body, kind)

    def js(**fields) -> bytes:
        return json.dumps({"text": SENTENCES[0], **fields}).encode()

    return [
        ("garbage line", b"GARBAGE\r\n\r\n", 400),
        ("HTTP/0.9", b"GET /\r\n", 400),
        ("binary", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400),
        *((m, request(host, m, "/api/translate", b"{}"), 405) for m in ("PUT", "DELETE")),
        *((m, request(host, m, "/api/info"), 405) for m in ("OPTIONS", "PATCH")),
        ("lone surrogate", post(b'{"text": "The \\ud800 dog."}'), 400),
        ("nested lists", post(b"[" * 30000 + b"]" * 30000), 400),
        ("5000 digits", post(b'{"text": "x", "beam": ' + b"9" * 5000 + b"}"), 400),
        ("NaN", post(b'{"text": "x", "beam": NaN}'), 400),
        ("beam 17", post(js(beam=17)), 400),
        ("n_best 5", post(js(beam=8, n_best=5)), 400),
        ("heads 99", post(js(heads=[99])), 400),
        ("text too long", post(js(text="x" * 5000)), 400),
        ("empty text", post(js(text="  ")), 400),
        ("not JSON", post(b"{'text': 1}"), 400),
        ("text/plain", post(b"text=x", "text/plain"), 415),
        ("body too large", post(b"x" * 70000), 413),
        ("no length", post_head(host, ""), 411),
        ("unknown page", request(host, "GET", "/nowhere"), 404),
        ("POST elsewhere", request(host, "POST", "/api/info", b"{}"), 405),
        ("long line", b"GET /" + b"a" * 65532, 414),
        ("many headers", b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 101, 431),
        ("foreign Host", request("attacker.example", "GET", "/api/info"), 403),
    ]


def exchange(address, data: bytes, timeout: float) -> tuple[int, bytes]:
    """Send ``data``, read until the server closes: ``(status, answer)``; status 0 when the
    server closed without a word."""
    with socket.create_connection(address, timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(1 << 20):
            chunks.append(chunk)
    answer = b"".join(chunks)
    match = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
    return (int(match.group(1)) if match else 0), answer
