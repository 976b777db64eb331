"""JoeyNMT 2.3.0, run as a separate program in its own virtual environment (a benchmark peer).

Nothing of JoeyNMT is imported or copied here: the benchmark writes a config from the peer
configs in ``../shared/peers/joeynmt`` (paths, vocabulary, sizes and batch filled in), runs
``run_joey.py`` (the launcher that :file:`install.sh` copies into the venv) and reads the
figures JoeyNMT logs itself: the epoch line ``num. of tokens: N, S[sec]`` for training and
``Generation took S[sec]`` for decoding.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

PEER_CONFIGS = {"rnn": "rnn_bahdanau_256.yaml", "transformer": "transformer_3x3_d256.yaml"}
_EPOCH = re.compile(r"num\. of tokens: (\d+), ([\d.]+)\[sec\]")
_GENERATION = re.compile(r"Generation took ([\d.]+)\[sec\]")
_PARAMS = re.compile(r"Total params: (\d+)")
FORCED_LENGTH_SHIM = Path(__file__).with_name("joey_forced_length.py")


@dataclass
class Joey:
    python: Path
    launcher: Path
    configs: Path
    version: str


def _peer_dir() -> Path:
    env = os.environ.get("ATTNKIT_JOEY_CONFIGS")
    if env:
        return Path(env)
    for base in (Path.cwd(), Path(__file__).resolve().parents[2]):
        candidate = base.parent / "shared" / "peers" / "joeynmt"
        if candidate.is_dir():
            return candidate
    return Path("../shared/peers/joeynmt")


def find_joey(venv: str | None) -> Joey | None:
    """The JoeyNMT install in ``venv``, or None when not given; an error when broken."""
    if not venv:
        return None
    root = Path(venv)
    python, launcher = root / "bin" / "python", root / "run_joey.py"
    if not python.exists() or not launcher.exists():
        raise FileNotFoundError(
            f"{root}: no JoeyNMT venv here (bin/python and run_joey.py); create it with "
            "../shared/peers/joeynmt/install.sh DIR"
        )
    version = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('joeynmt'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    configs = _peer_dir()
    if not (configs / PEER_CONFIGS["rnn"]).exists():
        raise FileNotFoundError(f"{configs}: JoeyNMT peer configs not found (ATTNKIT_JOEY_CONFIGS)")
    return Joey(python, launcher, configs, version)


class JoeyRunner:
    """One model's JoeyNMT config and runs, in ``directory``."""

    def __init__(self, joey: Joey, directory: Path, data, model: str, tiny: bool) -> None:
        self.joey, self.dir = joey, Path(directory).resolve()
        self.dir.mkdir(parents=True, exist_ok=True)
        cfg = yaml.safe_load((joey.configs / PEER_CONFIGS[model]).read_text(encoding="utf-8"))
        prefix = Path(data.joey_dir).resolve()
        cfg["name"] = f"bench-{model}"
        cfg["model_dir"] = str(self.dir / "model")
        cfg["data"].update(
            train=str(prefix / "train"), dev=str(prefix / "dev"), test=str(prefix / "test")
        )
        for side in ("src", "trg"):
            cfg["data"][side]["voc_file"] = str(Path(data.vocab_file).resolve())
        cfg["training"].update(epochs=1, batch_size=4000, shuffle=True, validation_freq=10**9)
        cfg["testing"]["batch_size"] = 4000
        enc, dec = cfg["model"]["encoder"], cfg["model"]["decoder"]
        if model == "rnn":  # attnkit's sizes: biGRU 256 per direction, decoder 512
            enc["hidden_size"], dec["hidden_size"] = 256, 512
            enc["dropout"] = dec["dropout"] = 0.2
        if tiny:
            for part in (enc, dec):
                part["embeddings"]["embedding_dim"] = 32
                part["hidden_size"] = 32
                if "ff_size" in part:
                    part.update(ff_size=64, num_layers=1, num_heads=2)
        self.cfg = cfg
        self.threads = os.environ.get("OMP_NUM_THREADS")

    def _run(self, mode: str, cfg: dict, *extra: str, min_output: int | None = None) -> str:
        path = self.dir / f"{mode}.yaml"
        path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
        command = [str(self.joey.python), str(self.joey.launcher), mode, str(path), *extra]
        env = dict(os.environ)
        if min_output is not None:  # JoeyNMT 2.3.0 drops testing.min_output_length: see the shim
            command[1:1] = [str(FORCED_LENGTH_SHIM)]
            env["ATTNKIT_JOEY_MIN_OUTPUT"] = str(min_output)
        done = subprocess.run(command, capture_output=True, text=True, cwd=self.dir, env=env)
        log = done.stdout + done.stderr
        (self.dir / f"{mode}.log").write_text(log, encoding="utf-8")
        if done.returncode != 0:
            tail = log.strip().splitlines()[-1] if log.strip() else "no output"
            raise RuntimeError(f"JoeyNMT {mode} failed ({self.dir / f'{mode}.log'}): {tail}")
        return log

    def train(self) -> tuple[float, int, int, int]:
        """One epoch: (seconds, target tokens, steps, parameters) from JoeyNMT's own log."""
        self.cfg["training"]["overwrite"] = True
        log = self._run("train", self.cfg, "-t")
        found = _EPOCH.findall(log)
        if not found:
            raise RuntimeError(f"JoeyNMT train: no epoch line in {self.dir / 'train.log'}")
        tokens, seconds = int(found[-1][0]), float(found[-1][1])
        model_dir = Path(self.cfg["model_dir"])
        ckpts = sorted(model_dir.glob("*.ckpt"), key=lambda p: p.stat().st_mtime)
        steps = max((int(p.stem) for p in ckpts if p.stem.isdigit()), default=0)
        best = model_dir / "best.ckpt"
        if steps and not best.exists():
            best.symlink_to(f"{steps}.ckpt")
        params = _PARAMS.findall(log)
        return seconds, tokens, steps, int(params[-1]) if params else 0

    def decode(self, beam: int, max_output: int) -> tuple[float, float]:
        """(seconds of generation on the test file, mean output tokens)."""
        cfg = yaml.safe_load(yaml.safe_dump(self.cfg))
        # the end token is forbidden until max_output: every sentence takes max_output steps
        cfg["testing"].update(
            beam_size=beam, max_output_length=max_output, min_output_length=max_output, n_best=1
        )
        # `test` decodes the (20-sentence) dev file, then the test file: time the last
        out = self.dir / f"hyp-beam{beam}"
        log = self._run("test", cfg, "-o", str(out), min_output=max_output)
        times = _GENERATION.findall(log)
        if not times:
            raise RuntimeError(f"JoeyNMT test: no 'Generation took' line in {self.dir}/test.log")
        hyps = Path(f"{out}.test")
        lines = hyps.read_text(encoding="utf-8").splitlines() if hyps.exists() else []
        mean = sum(len(x.split()) for x in lines) / len(lines) if lines else float("nan")
        return float(times[-1]), mean
