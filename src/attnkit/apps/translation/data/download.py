"""Fetch a known corpus over HTTP(S), verify its sha256 checksums, resume partial downloads.

``download("multi30k", "data/")`` writes the layout
:func:`attnkit.apps.translation.data.named.load_corpus`
reads (``data/multi30k/task1/raw/*.gz``). Each file is fetched into ``NAME.part``; a ``.part``
left by an interrupted run is resumed with an HTTP ``Range`` request (RFC 9110, section 14.2),
or fetched again from the start if the server answers ``200`` instead of ``206``. Only a file
whose sha256 matches is renamed (atomically, :func:`os.replace`) to its final name; a mismatch
deletes the ``.part`` and raises :class:`DownloadError`. Files already present with the right
checksum are skipped. Only :mod:`urllib` is used.
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

CHUNK = 1 << 20
USER_AGENT = "attnkit-download/0.1 (python urllib)"


class DownloadError(RuntimeError):
    """A download failed; the one-line message names the URL or file and what to do."""


@dataclass(frozen=True)
class RemoteFile:
    """One file: ``url`` relative to the corpus' base URL, ``path`` relative to the data dir."""

    url: str
    path: str
    sha256: str


@dataclass(frozen=True)
class Source:
    base_url: str
    files: tuple[RemoteFile, ...]
    note: str = ""


_MULTI30K_SHA = {  # /work/shared/data/multi30k/SOURCE.md, commit a3d2e0d of multi30k/dataset
    "test_2016_flickr.cs.gz": "200a4a74cc9560f051924abb9803be008d1908d77f747e9141aeb86dfd2797f1",
    "test_2016_flickr.de.gz": "9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8",
    "test_2016_flickr.en.gz": "611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9",
    "test_2016_flickr.fr.gz": "6d326e188d259fb1d04ac19eae3af956559b3a0b93d7635e56c90987c40c8b90",
    "train.cs.gz": "a65adb8b32e3bc664f21ecba7a6e7f6950fd1f405e135f7c312faabdb6255077",
    "train.de.gz": "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6",
    "train.en.gz": "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f",
    "train.fr.gz": "622e75069e9f4c577425c4f277116ce66e63a2401c0a2312d90073cb12379a3c",
    "val.cs.gz": "b63226e05c4bd5dd6a42897d74b86a1b9d2c31498252c572b1ea7f7996927fcc",
    "val.de.gz": "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a",
    "val.en.gz": "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28",
    "val.fr.gz": "ca3106f1a72390591d25f6c45cb4cd39dec4cd3f123e099748a3ce5256c160e9",
}

REGISTRY: dict[str, Source] = {
    "multi30k": Source(
        "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/",
        tuple(RemoteFile(f, f"multi30k/task1/raw/{f}", h) for f, h in _MULTI30K_SHA.items()),
    ),
    "tatoeba-eng-deu": Source(
        "https://www.manythings.org/anki/",
        (
            RemoteFile(
                "deu-eng.zip",
                "tatoeba-eng-deu/deu-eng.zip",
                "b7688f84f99fa33c17397c14d8bd9cef1fdeb2ee0bf50074767023aee8926e28",
            ),
        ),
        note="the checksum is of the 2018-05-13 export; manythings.org republishes its files, "
        "so a newer download fails the check",
    ),
}


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _open(url: str, start: int, timeout: float):
    headers = {"User-Agent": USER_AGENT}
    if start:
        headers["Range"] = f"bytes={start}-"
    try:
        return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout)
    except urllib.error.HTTPError as err:
        if err.code == 416 and start:  # the .part may already be complete
            return None
        raise DownloadError(f"{url}: HTTP {err.code} {err.reason}") from None
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise DownloadError(f"{url}: cannot connect ({reason})") from None


def _fetch(url: str, part: Path, timeout: float, progress: bool) -> None:
    """Fetch ``url`` into ``part``, resuming from its current size when the server allows."""
    start = part.stat().st_size if part.exists() else 0
    response = _open(url, start, timeout)
    if response is None:
        return
    if start and not (
        response.status == 206
        and response.headers.get("Content-Range", "").startswith(f"bytes {start}-")
    ):
        log.info("%s: the server did not resume at byte %d; downloading from the start", url, start)
        if response.status == 206:  # some other range: ask again for the whole file
            response.close()
            response = _open(url, 0, timeout)
        start = 0
    total = response.headers.get("Content-Length")
    total = int(total) + start if total else None
    bar = _Progress(part.name.removesuffix(".part"), total, start, progress)
    try:
        with response, open(part, "ab" if start else "wb") as out:
            while block := response.read(CHUNK):
                out.write(block)
                bar.advance(len(block))
    except (OSError, http.client.HTTPException) as err:
        raise DownloadError(
            f"{url}: interrupted ({err!r}); partial file kept at {part}, run again to resume"
        ) from None
    finally:
        bar.close()


class _Progress:
    """A rich progress bar, or nothing."""

    def __init__(self, label: str, total: int | None, done: int, enabled: bool):
        self.bar = None
        if enabled:
            from rich.progress import Progress

            self.bar = Progress(transient=True)
            self.bar.start()
            self.task = self.bar.add_task(label, total=total, completed=done)

    def advance(self, n: int) -> None:
        if self.bar is not None:
            self.bar.advance(self.task, n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def download_file(
    url: str,
    target: Path,
    sha256: str,
    *,
    timeout: float = 60.0,
    progress: bool = True,
    note: str = "",
) -> Path:
    """Download one file to ``target`` (via ``target.part``) and check its sha256.

    A resumed ``.part`` that fails the check may have been stale: it is fetched once more from
    the start before giving up. ``note`` is added to a checksum error.
    """
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise DownloadError(f"{url}: only http and https URLs are supported")
    if target.exists():
        if sha256_of(target) == sha256:
            log.info("%s: present with the right checksum, skipped", target)
            return target
        log.warning("%s: wrong checksum, downloading it again", target)
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    resuming = part.exists()
    _fetch(url, part, timeout, progress)
    got = sha256_of(part)
    if got != sha256 and resuming:
        log.warning("%s: resumed file fails its checksum; downloading from the start", part)
        part.unlink()
        _fetch(url, part, timeout, progress)
        got = sha256_of(part)
    if got != sha256:
        part.unlink()
        hint = f"; {note}" if note else ""
        raise DownloadError(
            f"{url}: sha256 mismatch (expected {sha256}, got {got}); deleted {part}{hint}"
        )
    os.replace(part, target)
    log.info("%s: downloaded and verified", target)
    return target


def download(
    name: str,
    to_dir: str | Path,
    *,
    base_url: str | None = None,
    progress: bool = True,
    timeout: float = 60.0,
) -> list[Path]:
    """Fetch the corpus ``name`` (a key of :data:`REGISTRY`) into the data directory ``to_dir``.

    Args:
        base_url: replaces the corpus' host and folder (tests point it at a local server).
        progress: show a progress bar per file.
        timeout: seconds to wait for the server on each connection.

    Returns the paths of the verified files.
    """
    if name not in REGISTRY:
        raise DownloadError(f"unknown corpus {name!r}; known: {', '.join(sorted(REGISTRY))}")
    source = REGISTRY[name]
    base = base_url or source.base_url
    base = base if base.endswith("/") else base + "/"
    target = Path(to_dir)
    return [
        download_file(
            urllib.parse.urljoin(base, remote.url),
            target / remote.path,
            remote.sha256,
            timeout=timeout,
            progress=progress,
            note=source.note,
        )
        for remote in source.files
    ]
