"""Load test of the translation explorer (issue 15, item 4): many clients, bad requests among
good ones and the largest requests the limits allow, on a loopback address only.

    OMP_NUM_THREADS=1 python benchmarks/explorer_load.py RUN_DIR \\
        --requests 2000 --clients 20 --time-limit 900 \\
        --out benchmarks/results/explorer-load.json

Starts ``attnkit serve RUN_DIR --port 0`` in a subprocess on ``--host`` (127.0.0.1 by default;
any address that is not loopback is refused), finds the largest request the server's limits
allow (a ``max_chars`` text with the largest beam and ``n_best`` it accepts), then sends
``--requests`` requests from ``--clients`` threads, one connection each: translations of
short sentences (60 %), page and info requests (10 %), malformed requests of every kind the
explorer refuses (25 %: garbage request lines, other methods, lone surrogates, nested JSON,
5,000-digit numbers, over-long lines and bodies, ...), the largest allowed request (4 %) and
stalled connections the server must drop (1 %). No new request starts after
``--time-limit`` seconds. Reports the requests served, the status counts per kind, the errors
(any 5xx, a dropped connection, an unexpected status) and the server's RSS and threads before,
at their peak and after (``/proc/PID/status``), as JSON to ``--out``.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from attnkit.apps.translation.explorer.limits import LIMITS

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script, too
from benchmarks.explorer_requests import (  # noqa: E402
    SENTENCES,
    exchange,
    malformed,
    post_head,
    request,
)
from benchmarks.suites.environment import machine, versions  # noqa: E402
from benchmarks.suites.report import script_command  # noqa: E402

SCHEMA = "attnkit-explorer-load/1"
SERVE = "from attnkit.cli import app; app()"


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def proc_status(pid: int) -> dict:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM", "Threads"):
            fields[name] = int(value.split()[0])
    mb = {name: round(fields[name] / 1024, 1) for name in ("VmRSS", "VmHWM")}
    return {"rss_mb": mb["VmRSS"], "hwm_mb": mb["VmHWM"], "threads": fields["Threads"]}


def start_server(run_dir: str, host: str) -> tuple[subprocess.Popen, tuple[str, int]]:
    command = [sys.executable, "-c", SERVE, "serve", run_dir, "--host", host, "--port", "0"]
    env = os.environ | {"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    line = process.stdout.readline()
    match = re.search(r"on http://\[?([^\]\s]+?)\]?:(\d+)/", line)
    if not match:
        process.kill()
        raise SystemExit(f"error: the server did not start: {line!r}")
    return process, (match.group(1), int(match.group(2)))


def largest_request(address, host: str, max_chars: int) -> tuple[dict, int]:
    """The largest request the server accepts: ``max_chars`` characters, the largest beam and
    n_best, and (only if the whole attention cannot fit) one layer and head; its answer size."""
    text = " ".join(SENTENCES * 50)[:max_chars].strip()
    body, error = {"text": text, "beam": LIMITS.max_beam, "n_best": LIMITS.max_n_best}, ""
    for _ in range(8):
        data = request(host, "POST", "/api/translate", json.dumps(body).encode())
        status, answer = exchange(address, data, 600)
        if status == 200:
            return body, len(answer)
        error = json.loads(answer.partition(b"\r\n\r\n")[2]).get("error", "")
        if found := re.match(r"(beam|n_best): at most (\d+)", error):
            body[found.group(1)] = int(found.group(2))
            body["n_best"] = min(body["n_best"], body["beam"])
        elif error.startswith("text: ") and "layers" not in body:
            body |= {"layers": [0], "heads": [0]}
        else:
            break
    raise SystemExit(f"error: no large request was accepted ({error})")


def plan(args, host: str, largest: dict) -> list[tuple[str, str, bytes, int]]:
    """``(kind, name, raw request, expected status)`` for every request, shuffled (seeded)."""
    rng = random.Random(args.seed)
    bad = malformed(host)

    def post(body: bytes) -> bytes:
        return request(host, "POST", "/api/translate", body)

    pages = ["/", "/api/info", "/api/examples", "/static/app.js"]
    big = post(json.dumps(largest).encode())
    stalled = post_head(host, "Content-Length: 50\r\n", b'{"te')  # 4 bytes of 50, then nothing
    jobs = []
    for i in range(args.requests):
        roll = rng.random()
        if roll < 0.60:
            body = json.dumps({"text": rng.choice(SENTENCES), "beam": rng.randint(1, 4)})
            jobs.append(("normal", "translate", post(body.encode()), 200))
        elif roll < 0.70:
            page = pages[i % len(pages)]
            jobs.append(("page", page, request(host, "GET", page), 200))
        elif roll < 0.95:
            jobs.append(("malformed", *bad[i % len(bad)]))
        elif roll < 0.99:
            jobs.append(("largest", "largest", big, 200))
        else:
            jobs.append(("stalled", "stalled body", stalled, 0))
    return jobs


def run(args) -> dict:
    if not loopback(args.host):
        raise SystemExit(f"error: --host {args.host} is not a loopback address; refusing")
    process, address = start_server(args.run_dir, args.host)
    sampler_stop, peak, timeline = threading.Event(), {"rss_mb": 0.0, "threads": 0}, []

    def sample() -> None:  # every 0.2 s; the timeline keeps one sample in 25 (5 s)
        for tick in range(10**9):
            if sampler_stop.wait(0.2):
                return
            now = proc_status(process.pid)
            peak["rss_mb"] = max(peak["rss_mb"], now["rss_mb"])
            peak["threads"] = max(peak["threads"], now["threads"])
            if tick % 25 == 0:
                timeline.append([round(time.monotonic() - began, 1), now["rss_mb"]])

    try:
        before = proc_status(process.pid)
        largest, largest_bytes = largest_request(address, args.host, LIMITS.max_chars)
        after_probe = proc_status(process.pid)
        jobs = plan(args, args.host, largest)
        outcomes, began = [], time.monotonic()
        deadline = began + args.time_limit

        def one(job) -> tuple:
            kind, name, data, expected = job
            if time.monotonic() > deadline:
                return kind, name, expected, "not sent", 0
            try:
                status, answer = exchange(address, data, args.timeout)
                return kind, name, expected, status, len(answer)
            except OSError as err:
                return kind, name, expected, f"{type(err).__name__}: {err}", 0

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        with ThreadPoolExecutor(args.clients) as pool:
            outcomes = list(pool.map(one, jobs))
        seconds = time.monotonic() - began
        time.sleep(2.0)  # let the last connections close
        sampler_stop.set()
        after = proc_status(process.pid)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
    memory = {
        "start": before,
        "after_probe": after_probe,
        "peak": peak,
        "end": after,
        "timeline_s_rss_mb": timeline,
    }
    return summary(args, outcomes, seconds, largest, largest_bytes, memory)


def summary(args, outcomes, seconds, largest, largest_bytes, memory) -> dict:
    counts: dict[str, Counter] = {}
    errors, served, not_sent = [], 0, 0
    for kind, name, expected, status, _ in outcomes:
        counts.setdefault(kind, Counter())[str(status)] += 1
        if status == "not sent":
            not_sent += 1
            continue
        served += 1
        bad = not isinstance(status, int) or status >= 500 or status != expected
        if bad:
            errors.append({"kind": kind, "name": name, "expected": expected, "got": status})
    largest_view = {k: (v if k != "text" else f"{len(v)} characters") for k, v in largest.items()}
    return {
        "schema": SCHEMA,
        "command": script_command("benchmarks/explorer_load.py", args.argv),
        "settings": {
            "run_dir": args.run_dir,
            "host": args.host,
            "requests": args.requests,
            "clients": args.clients,
            "time_limit_s": args.time_limit,
            "seed": args.seed,
            "limits": LIMITS.as_dict(),
        },
        "machine": machine(),
        "versions": versions(),
        "seconds": round(seconds, 1),
        "served": served,
        "not_sent": not_sent,
        "status_counts": {kind: dict(sorted(c.items())) for kind, c in sorted(counts.items())},
        "errors": len(errors),
        "error_examples": errors[:20],
        "largest_request": largest_view,
        "largest_answer_bytes": largest_bytes,
        "answer_bytes_max": max((o[4] for o in outcomes), default=0),
        "memory": memory,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", help="a trained translation run directory")
    parser.add_argument("--host", default="127.0.0.1", help="a loopback address only")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--time-limit", type=float, default=900.0, help="seconds; then stop")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per request")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/explorer-load.json"))
    args = parser.parse_args(argv)
    args.argv = sys.argv[1:] if argv is None else argv
    result = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    memory = result["memory"]
    print(
        f"{result['served']} requests served in {result['seconds']} s from {args.clients} "
        f"clients; errors {result['errors']}; RSS {memory['start']['rss_mb']} MB at start, "
        f"{memory['peak']['rss_mb']} MB at peak, {memory['end']['rss_mb']} MB after; "
        f"largest answer {result['largest_answer_bytes']:,} bytes -> {args.out}"
    )
    print(json.dumps(result["status_counts"]))
    return result


if __name__ == "__main__":
    main()
