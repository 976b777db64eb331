"""Downloads against a local HTTP server (127.0.0.1, loopback only) serving the shared Multi30k.

The test server implements ``Range: bytes=N-`` itself, records every request, and can be told
to ignore ranges or to corrupt a file, so resume, fallback and checksum handling are all seen.
"""

from __future__ import annotations

import hashlib
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from attnkit.apps.translation.data.download import REGISTRY, DownloadError, download, download_file
from attnkit.apps.translation.data.named import load_corpus


class _Server:
    def __init__(self, root: Path):
        self.root = root
        self.requests: list[tuple[str, str | None]] = []  # (path, Range header)
        self.sent: dict[str, int] = {}  # bytes of body sent per path
        self.ignore_range = False
        self.corrupt: set[str] = set()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's naming)
                server.requests.append((self.path, self.headers.get("Range")))
                path = server.root / self.path.lstrip("/")
                if ".." in self.path or not path.is_file():
                    self.send_error(404, "Not Found")
                    return
                data = path.read_bytes()
                if path.name in server.corrupt:
                    data = data[:-1] + bytes([data[-1] ^ 0xFF])
                start = 0
                wanted = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
                if wanted and not server.ignore_range:
                    start = int(wanted.group(1))
                    if start >= len(data):
                        self.send_error(416, "Range Not Satisfiable")
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                self.wfile.write(data[start:])
                server.sent[self.path] = server.sent.get(self.path, 0) + len(data) - start

            def log_message(self, *args):  # keep the test output clean
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()
        self.closed = False

    def close(self):
        if not self.closed:
            self.closed = True
            self.httpd.shutdown()
            self.httpd.server_close()
            self.thread.join(timeout=5)


@pytest.fixture
def server(multi30k_raw):
    srv = _Server(multi30k_raw)
    yield srv
    srv.close()


def _get(server, to_dir, progress=False):
    return download("multi30k", to_dir, base_url=server.url, progress=progress, timeout=10)


def test_download_verify_and_skip(server, tmp_path, multi30k_raw):
    paths = _get(server, tmp_path)
    assert len(paths) == 12 and all(p.is_file() for p in paths)
    for p in paths:
        assert p.read_bytes() == (multi30k_raw / p.name).read_bytes()
    assert not list(tmp_path.rglob("*.part"))
    corpus = load_corpus("multi30k", tmp_path)  # the layout load_corpus reads
    assert [len(corpus[s]) for s in ("train", "valid", "test")] == [29000, 1014, 1000]
    before = len(server.requests)
    _get(server, tmp_path)  # everything present with the right checksum
    assert len(server.requests) == before


def test_checksum_mismatch_leaves_nothing(server, tmp_path):
    server.corrupt = {"train.en.gz"}
    with pytest.raises(DownloadError) as err:
        _get(server, tmp_path)
    message = str(err.value)
    assert message.startswith(f"{server.url}train.en.gz: sha256 mismatch (expected d79cfa99")
    assert "deleted" in message and "\n" not in message
    raw = tmp_path / "multi30k" / "task1" / "raw"
    assert not (raw / "train.en.gz").exists() and not (raw / "train.en.gz.part").exists()


def test_resume_from_a_partial_file(server, tmp_path, multi30k_raw):
    raw = tmp_path / "multi30k" / "task1" / "raw"
    raw.mkdir(parents=True)
    whole = (multi30k_raw / "train.de.gz").read_bytes()
    (raw / "train.de.gz.part").write_bytes(whole[:100_000])
    _get(server, tmp_path, progress=True)
    assert ("/train.de.gz", "bytes=100000-") in server.requests
    assert server.sent["/train.de.gz"] == len(whole) - 100_000  # only the rest was sent
    assert (raw / "train.de.gz").read_bytes() == whole
    assert not (raw / "train.de.gz.part").exists()


def test_server_ignoring_range_gives_a_full_download(server, tmp_path, multi30k_raw):
    server.ignore_range = True
    raw = tmp_path / "multi30k" / "task1" / "raw"
    raw.mkdir(parents=True)
    whole = (multi30k_raw / "val.en.gz").read_bytes()
    (raw / "val.en.gz.part").write_bytes(whole[:5000])
    _get(server, tmp_path)
    assert ("/val.en.gz", "bytes=5000-") in server.requests
    assert (raw / "val.en.gz").read_bytes() == whole


def test_stale_partial_file_is_fetched_again(server, tmp_path, multi30k_raw):
    raw = tmp_path / "multi30k" / "task1" / "raw"
    raw.mkdir(parents=True)
    (raw / "val.de.gz.part").write_bytes(b"garbage" * 100)  # not a prefix of the real file
    (raw / "val.fr.gz").write_bytes(b"a corrupt final file")  # replaced, not trusted
    _get(server, tmp_path)
    for name in ("val.de.gz", "val.fr.gz"):
        assert (raw / name).read_bytes() == (multi30k_raw / name).read_bytes()


def test_complete_part_file_answered_416(server, tmp_path, multi30k_raw):
    whole = (multi30k_raw / "val.cs.gz").read_bytes()
    target = tmp_path / "val.cs.gz"
    (tmp_path / "val.cs.gz.part").write_bytes(whole)
    sha = hashlib.sha256(whole).hexdigest()
    download_file(server.url + "val.cs.gz", target, sha, timeout=10, progress=True)
    assert target.read_bytes() == whole


def test_404_is_a_clear_error(server, tmp_path):
    with pytest.raises(DownloadError) as err:
        download("multi30k", tmp_path, base_url=server.url + "missing", progress=False)
    assert str(err.value).startswith(f"{server.url}missing/")
    assert "HTTP 404" in str(err.value)
    assert not list(tmp_path.rglob("*.gz"))


def test_other_errors(tmp_path, server):
    with pytest.raises(DownloadError, match="unknown corpus 'nope'; known: multi30k"):
        download("nope", tmp_path)
    with pytest.raises(DownloadError, match="only http and https"):
        download_file("file:///etc/passwd", tmp_path / "x", "0" * 64)
    port = server.httpd.server_address[1]
    server.close()  # nothing listens there any more: connection refused, at once
    with pytest.raises(DownloadError, match=f"127.0.0.1:{port}/.*: cannot connect"):
        download("multi30k", tmp_path, base_url=f"http://127.0.0.1:{port}/", timeout=5)


def test_registry_matches_the_documented_layout():
    multi30k = REGISTRY["multi30k"]
    assert multi30k.base_url == (
        "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/"
    )
    assert len(multi30k.files) == 12
    tatoeba = REGISTRY["tatoeba-eng-deu"].files[0]
    assert tatoeba.path == "tatoeba-eng-deu/deu-eng.zip"
    assert tatoeba.sha256.startswith("b7688f84")
