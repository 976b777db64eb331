"""The captioning task (Xu et al. 2015 on generated scenes) behind ``attnkit train/evaluate``.

A run directory holds ``config.yaml``, ``model.safetensors`` (best by validation exact match,
then validation BLEU), ``vocab.json``, ``metrics.json`` (history, validation and test scores)
and ``checkpoints/last/`` for ``--resume``. Python API::

    from attnkit.apps.captioning.task import load_experiment, train, load_captioner, caption_scenes
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import torch

from attnkit.apps.captioning.model import Captioner, CaptionerConfig, caption_loss
from attnkit.apps.captioning.scenes import BOS, EOS, PAD, Vocabulary, as_arrays, make_split
from attnkit.apps.captioning.views import score_captions
from attnkit.config import load_yaml, save_yaml
from attnkit.engine.checkpoint import load_model, load_trainer, save_model, save_trainer

log = logging.getLogger(__name__)


@dataclass
class SceneDataConfig:
    """The generated scenes (:mod:`attnkit.apps.captioning.scenes`)."""

    seed: int = 0  # every split is a pure function of the seed
    canvas: int = 32  # image side in pixels (must equal model.canvas)
    n_train: int = 4000
    n_valid: int = 300
    n_test: int = 500
    noise: float = 0.03  # standard deviation of the pixel noise
    max_objects: int = 3  # scenes hold 2 to max_objects (2 or 3) shapes
    min_size: int = 8  # shape sizes in pixels
    max_size: int = 11

    def __post_init__(self) -> None:
        if self.max_objects not in (2, 3):
            raise ValueError(f"max_objects must be 2 or 3, got {self.max_objects}")
        if not 3 <= self.min_size <= self.max_size or 2 * self.max_size > self.canvas:
            raise ValueError(
                f"shape sizes {self.min_size}..{self.max_size} do not fit a {self.canvas}px canvas"
            )
        if min(self.n_train, self.n_valid, self.n_test) < 1:
            raise ValueError("n_train, n_valid and n_test must each be at least 1")


@dataclass
class CaptionTrainConfig:
    """Adam on teacher-forced batches; Xu et al.'s loss weights."""

    steps: int = 3000
    batch_size: int = 64
    learning_rate: float = 3.0e-3
    clip_norm: float = 5.0
    seed: int = 0
    penalty: float = 0.01  # lambda of the doubly stochastic penalty, eq. (14) (soft only)
    reinforce: float = 1.0  # lambda_r of the REINFORCE term, eq. (12) (hard only)
    entropy: float = 0.01  # lambda_e of the entropy bonus, §4.1 (hard only)
    baseline_decay: float = 0.9  # b_k = decay * b_{k-1} + (1 - decay) * log p(y|s,a), §4.1
    eval_every: int = 500  # steps between validations (and checkpoints)
    max_len: int = 20  # longest caption greedy decoding emits


@dataclass
class CaptionExperiment:
    """A captioning experiment: ``task: captioning`` and the three sections."""

    name: str = "scenes"
    task: Literal["captioning"] = "captioning"
    data: SceneDataConfig = field(default_factory=SceneDataConfig)
    model: CaptionerConfig = field(default_factory=CaptionerConfig)
    train: CaptionTrainConfig = field(default_factory=CaptionTrainConfig)

    def __post_init__(self) -> None:
        if self.model.canvas != self.data.canvas:
            raise ValueError(
                f"model.canvas {self.model.canvas} differs from data.canvas {self.data.canvas}"
            )


def load_experiment(path: str | Path) -> CaptionExperiment:
    """Read a captioning YAML config; errors name the file, line and key."""
    return load_yaml(CaptionExperiment, path)


load_config = load_experiment  # the attnkit.apps interface


def scenes_for(cfg: CaptionExperiment, split: str):
    """The scenes of ``split`` as configured."""
    n = {"train": cfg.data.n_train, "valid": cfg.data.n_valid, "test": cfg.data.n_test}[split]
    d = cfg.data
    return make_split(
        split,
        n,
        d.seed,
        d.canvas,
        noise=d.noise,
        max_objects=d.max_objects,
        min_size=d.min_size,
        max_size=d.max_size,
    )


def tensors(scenes, vocab: Vocabulary) -> tuple[torch.Tensor, torch.Tensor]:
    """Images ``(N, 3, S, S)`` and BOS...EOS token ids padded with PAD ``(N, T+1)``."""
    ids = [vocab.encode(s.caption) for s in scenes]
    tokens = torch.full((len(ids), max(map(len, ids))), PAD, dtype=torch.long)
    for n, row in enumerate(ids):
        tokens[n, : len(row)] = torch.tensor(row)
    return torch.from_numpy(as_arrays(scenes)), tokens


@dataclass
class Caption:
    """One generated caption: its words and the attention map ``(T, L)`` used for each."""

    words: list[str]
    alpha: np.ndarray

    @property
    def text(self) -> str:
        return " ".join(self.words)


def caption_images(model: Captioner, vocab: Vocabulary, images, max_len: int = 20, batch=256):
    """Greedy captions of ``images (N, 3, S, S)`` (tensor or array), with attention maps."""
    model.eval()
    images = torch.as_tensor(images, dtype=torch.float32)
    out: list[Caption] = []
    for start in range(0, images.size(0), batch):
        dec = model.greedy(images[start : start + batch], BOS, EOS, max_len)
        for tokens, alpha in zip(dec.tokens, dec.alpha, strict=True):
            words = vocab.decode(tokens.tolist())
            out.append(Caption(words, alpha[: len(words)].numpy()))
    return out


def caption_scenes(model, vocab, scenes, max_len: int = 20) -> list[Caption]:
    """:func:`caption_images` of generated :class:`~attnkit.apps.captioning.scenes.Scene`
    objects."""
    return caption_images(model, vocab, as_arrays(scenes), max_len)


def build(cfg: CaptionExperiment, vocab: Vocabulary) -> Captioner:
    return Captioner(cfg.model, len(vocab.words), PAD)


def train(
    cfg: CaptionExperiment, run_dir: Path, *, resume: bool = False, progress: bool = False
) -> dict:
    """Train ``cfg`` into ``run_dir``; returns the metrics written to ``metrics.json``."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(cfg.train.seed)
    vocab = Vocabulary.for_scenes()
    save_yaml(cfg, run_dir / "config.yaml")
    vocab.save(run_dir / "vocab.json")
    start = time.perf_counter()
    images, tokens = tensors(scenes_for(cfg, "train"), vocab)
    valid = scenes_for(cfg, "valid")
    log.info("generated %d training scenes in %.1f s", len(images), time.perf_counter() - start)
    model = build(cfg, vocab)
    t = cfg.train
    optimizer = torch.optim.Adam(model.parameters(), lr=t.learning_rate)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 100))
    state = {"step": 0, "baseline": 0.0, "best": None, "history": [], "seconds": 0.0}
    last = run_dir / "checkpoints" / "last"
    if resume and (last / "trainer.json").is_file():
        load_model(model, last / "model.safetensors")
        state = load_trainer(last, optimizer=optimizer, scheduler=schedule)["extra"]
        log.info("resumed at step %d", state["step"])
    generator = torch.Generator().manual_seed(cfg.train.seed + state["step"])
    penalty = t.penalty if cfg.model.attention == "soft" else 0.0
    began, running = time.perf_counter() - state["seconds"], []
    while state["step"] < t.steps:
        model.train()
        batch = torch.randint(0, len(images), (t.batch_size,), generator=generator)
        out = model(images[batch], tokens[batch])
        loss, stats = caption_loss(
            out,
            tokens[batch, 1:],
            PAD,
            penalty=penalty,
            reinforce=t.reinforce,
            entropy=t.entropy,
            baseline=state["baseline"],
        )
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), t.clip_norm)
        optimizer.step()
        schedule.step()
        if "reward" in stats:  # moving-average baseline, Xu et al. §4.1
            b = stats["reward"] if state["step"] == 0 else state["baseline"]
            state["baseline"] = t.baseline_decay * b + (1 - t.baseline_decay) * stats["reward"]
        running.append(stats)
        state["step"] += 1
        if state["step"] % t.eval_every == 0 or state["step"] == t.steps:
            _validate(cfg, model, vocab, valid, state, running, began, run_dir, progress)
            running = []
            save_model(model, last / "model.safetensors")
            save_trainer(
                last,
                optimizer=optimizer,
                scheduler=schedule,
                step=state["step"],
                epoch=0,
                extra=state,
            )
    metrics = {"best": state["best"], "history": state["history"], "seconds": state["seconds"]}
    _write_metrics(run_dir, metrics)
    return metrics


def _validate(cfg, model, vocab, valid, state, running, began, run_dir, progress) -> None:
    scores = score_captions(
        caption_scenes(model, vocab, valid, cfg.train.max_len), valid, cfg.model.grid
    )
    mean = {k: float(np.mean([s[k] for s in running if k in s])) for k in running[-1]}
    state["seconds"] = time.perf_counter() - began
    row = {
        "step": state["step"],
        "seconds": round(state["seconds"], 1),
        "train": mean,
        "valid": scores,
    }
    state["history"].append(row)
    key = (scores["exact_match"], scores["bleu"])
    best = state["best"]
    if best is None or key > (best["valid"]["exact_match"], best["valid"]["bleu"]):
        state["best"] = row
        save_model(model, run_dir / "model.safetensors")
    message = (
        f"step {state['step']}: nll {mean['nll']:.3f}, valid BLEU {scores['bleu']:.1f}, "
        f"exact {scores['exact_match']:.3f}, pointing {scores['pointing']:.3f} "
        f"({state['seconds']:.0f} s)"
    )
    log.info(message)
    _write_metrics(run_dir, {k: state[k] for k in ("best", "history", "seconds")})
    if progress:
        print(message, flush=True)


def _write_metrics(run_dir: Path, metrics: dict) -> None:
    path = run_dir / "metrics.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(metrics, indent=2), encoding="utf-8")
    tmp.replace(path)


def load_captioner(run_dir: str | Path) -> tuple[CaptionExperiment, Vocabulary, Captioner]:
    """Load a trained run: its config, vocabulary and best model (in eval mode)."""
    run_dir = Path(run_dir)
    if not (run_dir / "config.yaml").is_file():
        raise FileNotFoundError(f"{run_dir / 'config.yaml'}: missing; is {run_dir} a run?")
    cfg = load_experiment(run_dir / "config.yaml")
    vocab = Vocabulary.load(run_dir / "vocab.json")
    model = build(cfg, vocab)
    load_model(model, run_dir / "model.safetensors")
    return cfg, vocab, model.eval()


def evaluate(run_dir: str | Path, split: str = "test") -> dict:
    """Score a run on ``split`` and record the scores under ``split`` in ``metrics.json``."""
    if split not in ("train", "valid", "test"):
        raise ValueError(f"unknown split {split!r}; choose train, valid or test")
    cfg, vocab, model = load_captioner(run_dir)
    scenes = scenes_for(cfg, split)
    scores = score_captions(
        caption_scenes(model, vocab, scenes, cfg.train.max_len), scenes, cfg.model.grid
    )
    path = Path(run_dir) / "metrics.json"
    metrics = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    metrics[split] = scores
    _write_metrics(Path(run_dir), metrics)
    return scores


def train_from_config(
    config: Path, run_dir: Path | None, *, resume: bool = False, progress: bool = False
) -> str:
    """``attnkit train CONFIG`` for ``task: captioning``."""
    cfg = load_experiment(config)
    out = Path(run_dir) if run_dir is not None else Path("runs") / cfg.name
    metrics = train(cfg, out, resume=resume, progress=progress)
    v = metrics["best"]["valid"]
    return (
        f"{out}: best step {metrics['best']['step']}, valid BLEU {v['bleu']:.2f}, "
        f"exact match {v['exact_match']:.3f}, pointing {v['pointing']:.3f} "
        f"({metrics['seconds']:.0f} s)"
    )


def evaluate_run_dir(run_dir: Path, *, split: str = "test", data_dir: str | None = None) -> str:
    """``attnkit evaluate RUN_DIR`` for a captioning run (the data are generated: no data_dir)."""
    s = evaluate(run_dir, split)
    return (
        f"{run_dir} {split}: BLEU {s['bleu']:.2f} ({s['bleu_signature']}), exact match "
        f"{s['exact_match']:.3f}, attention in box {s['mass_in_box']:.3f}, pointing "
        f"{s['pointing']:.3f} ({s['nouns']} nouns, {s['n']} captions)"
    )
