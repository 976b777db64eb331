"""Helpers of the explorer tests: the tiny experiment, a urllib client, servers in threads."""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass

from attnkit.apps.translation.config import (
    DataConfig,
    DecodeConfig,
    ModelConfig,
    TrainConfig,
    TranslationConfig,
)
from attnkit.apps.translation.explorer import make_server

SENTENCE = "The small cat sees the big blue table."


def tiny_config(**model) -> TranslationConfig:
    """The training tests' ``tiny_config()`` with one epoch on (200, 20, 20) pairs."""
    return TranslationConfig(
        name="tiny",
        data=DataConfig(generated_sizes=(200, 20, 20), vocab_size=200, max_len=120),
        model=ModelConfig(embed_dim=16, hidden_dim=32, dropout=0.1, **model),
        train=TrainConfig(
            epochs=1, max_tokens=1500, learning_rate=0.01, schedule="constant", threads=1
        ),
        decode=DecodeConfig(beam_size=2, max_len_ratio=1.2, max_len_offset=5),
    )


class Headers(dict):
    """Response headers by name, whatever its case (uvicorn sends them in lower case)."""

    def __init__(self, pairs=()) -> None:
        super().__init__((name.lower(), value) for name, value in dict(pairs).items())

    def __getitem__(self, name: str):
        return super().__getitem__(name.lower())

    def get(self, name: str, default=None):
        return super().get(name.lower(), default)

    def __contains__(self, name) -> bool:
        return super().__contains__(name.lower())


@dataclass
class Answer:
    status: int
    headers: dict
    body: bytes

    def json(self):
        return json.loads(self.body.decode("utf-8"))


class Client:
    """``urllib`` requests against one running server; HTTP errors are answers too."""

    def __init__(self, server) -> None:
        self.server = server
        self.url = server.url.rstrip("/")

    def request(self, method: str, path: str, body=None, headers=None) -> Answer:
        data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
        heads = {"Content-Type": "application/json"} if data is not None else {}
        heads |= headers or {}
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=heads)
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return Answer(resp.status, Headers(resp.headers.items()), resp.read())
        except urllib.error.HTTPError as err:
            return Answer(err.code, Headers(err.headers.items()), err.read())

    def get(self, path: str, **kwargs) -> Answer:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, body, **kwargs) -> Answer:
        return self.request("POST", path, body, **kwargs)


def parse_answer(raw: bytes) -> Answer:
    """An HTTP/1.x answer read off a socket: status line, headers, body."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("iso-8859-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines[0].startswith("HTTP/1.") else 0
    headers = Headers(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return Answer(status, headers, body)


def raw_exchange(server, data: bytes, timeout: float = 10, half_close: bool = True) -> Answer:
    """Send ``data`` as it is on a new connection (then, with ``half_close``, end the sending
    side: the server reads end-of-file after it) and read the answer until the server closes
    (status 0 when it answered nothing)."""
    host, port = server.server_address[:2]
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return parse_answer(b"".join(chunks))


def start(run_dir=None, **kwargs):
    server = make_server(run_dir, host="127.0.0.1", port=0, **kwargs)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread


def stop(server, thread) -> None:
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)
