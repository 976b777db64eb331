"""The text-classification task behind ``attnkit train`` / ``attnkit evaluate``.

Training: cross-entropy, Adam(W), gradient clipping, a constant or linear warm-up/decay
learning rate; the model with the best dev accuracy is kept. The run directory holds
``config.yaml``, ``model.safetensors`` (best), the tokenizer, ``metrics.json`` (per-epoch
history, best dev accuracy, wall time) and ``checkpoints/last/`` for ``--resume``.
"""

from __future__ import annotations

import logging
import random
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from attnkit.apps.classification.config import TextClassificationConfig, load_classifier_config
from attnkit.apps.classification.data import LabelledText, load_sst2, read_labelled

log = logging.getLogger(__name__)


load_config = load_classifier_config  # the attnkit.apps interface


def load_split(
    cfg: TextClassificationConfig, split: str, data_dir: str | None = None
) -> list[LabelledText]:
    """The examples of ``split`` (``train``, ``dev`` or ``test``) that ``cfg.data`` names."""
    d = cfg.data
    if d.source == "rationales":
        from attnkit.apps.classification.rationales import generate_rationales

        sizes = dict(zip(("train", "dev", "test"), d.generated_sizes, strict=True))
        if split not in sizes:
            raise ValueError(f"split must be train, dev or test, got {split!r}")
        examples = generate_rationales(split, sizes[split], d.seed)
    elif d.source == "sst2":
        if split == "test":
            raise ValueError("the SST-2 test split is unlabelled; use --split dev")
        examples = load_sst2(data_dir or d.data_dir, split)
    else:
        files = {"train": d.train_file, "dev": d.dev_file, "test": d.test_file}
        if split not in files or not files[split]:
            raise ValueError(f"data.{split}_file is not set in the config")
        examples = read_labelled(files[split], d.text_column, d.label_column)
    bad = [e.label for e in examples if not 0 <= e.label < cfg.num_classes]
    if bad:
        raise ValueError(f"{split}: label {bad[0]} is outside 0..{cfg.num_classes - 1}")
    if split == "train" and d.train_size is not None:
        examples = examples[: d.train_size]
    return examples


def _batches(lengths: list[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches of similar lengths: sort within chunks of 50 batches, then shuffle."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    batches = []
    chunk = batch_size * 50
    for start in range(0, len(order), chunk):
        part = sorted(order[start : start + chunk], key=lambda i: lengths[i])
        batches += [part[i : i + batch_size] for i in range(0, len(part), batch_size)]
    rng.shuffle(batches)
    return batches


def _scheduler(optimizer, cfg: TextClassificationConfig, total_steps: int):
    if cfg.train.schedule == "constant":
        return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    warmup = max(1, int(cfg.train.warmup_ratio * total_steps))

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def train_from_config(
    config: Path, run_dir: Path | None, *, resume: bool = False, progress: bool = False
) -> str:
    """Train the classifier ``config`` describes into ``run_dir`` (default ``runs/NAME``)."""
    from attnkit.engine.rundir import RunDir

    cfg = load_classifier_config(config)
    run = RunDir(run_dir or Path("runs") / cfg.name)
    t = cfg.train
    threads_before = torch.get_num_threads()
    if t.threads:
        torch.set_num_threads(t.threads)
    try:
        return _train(cfg, run, resume, progress)
    finally:
        torch.set_num_threads(threads_before)


def _train(cfg: TextClassificationConfig, run, resume: bool, progress: bool) -> str:
    from attnkit.apps.classification.classifier import (
        TextClassifier,
        new_tokenizer_and_model,
        pick_device,
    )
    from attnkit.engine.checkpoint import load_model, load_trainer, save_model, save_trainer

    t = cfg.train
    torch.manual_seed(t.seed)
    device = pick_device(t.device)
    train_set, dev_set = load_split(cfg, "train"), load_split(cfg, "dev")
    if resume and run.config.is_file():
        clf = TextClassifier.load(run.root, device=str(device))
        tokenizer, model = clf.tokenizer, clf.model.train()
    else:
        tokenizer, model, bert_config = new_tokenizer_and_model(cfg, [e.text for e in train_set])
        TextClassifier(cfg, tokenizer, model).save(run.root, bert_config)
    model.to(device)
    clf = TextClassifier(cfg, tokenizer, model, device)
    train_items = tokenizer.encode([e.text for e in train_set])
    labels = torch.tensor([e.label for e in train_set])
    dev_labels = [e.label for e in dev_set]

    rng = random.Random(t.seed)
    steps_per_epoch = -(-len(train_items) // t.batch_size)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=t.learning_rate, weight_decay=t.weight_decay
    )
    scheduler = _scheduler(optimizer, cfg, steps_per_epoch * t.epochs)
    metrics = run.read_metrics() if resume else {}
    history: list[dict] = metrics.get("history", [])
    first_epoch, best = len(history) + 1, metrics.get("best_dev_accuracy", -1.0)
    if resume and (run.last / "trainer.json").is_file():
        load_model(model, run.last / "model.safetensors")
        first_epoch = load_trainer(run.last, optimizer=optimizer, scheduler=scheduler)["epoch"] + 1
        rng.seed(f"{t.seed}/{first_epoch}")
    started = time.perf_counter()
    stopped_early = False
    for epoch in range(first_epoch, t.epochs + 1):
        model.train()
        epoch_start, total_loss, seen = time.perf_counter(), 0.0, 0
        batches = _batches([len(e.ids) for e in train_items], t.batch_size, rng)
        for step, batch in enumerate(batches):
            out = clf.run([train_items[i] for i in batch])
            loss = F.cross_entropy(out.logits.float(), labels[batch].to(device))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), t.clip_norm)
            optimizer.step()
            scheduler.step()
            total_loss, seen = total_loss + loss.item() * len(batch), seen + len(batch)
            if progress and step % 100 == 0:
                log.info("epoch %d step %d/%d loss %.4f", epoch, step, len(batches), loss.item())
            if t.max_minutes and time.perf_counter() - started > 60 * t.max_minutes:
                stopped_early = True
                break
        model.eval()
        dev_acc = clf.accuracy([e.text for e in dev_set], dev_labels) if dev_set else 0.0
        row = {
            "epoch": epoch,
            "train_loss": total_loss / max(1, seen),
            "train_examples": seen,
            "dev_accuracy": dev_acc,
            "seconds": time.perf_counter() - epoch_start,
        }
        history.append(row)
        log.info("epoch %d: loss %.4f, dev accuracy %.4f", epoch, row["train_loss"], dev_acc)
        if dev_acc > best:
            best = dev_acc
            save_model(model, run.model)
        save_model(model, run.last / "model.safetensors")
        save_trainer(run.last, optimizer=optimizer, scheduler=scheduler, step=0, epoch=epoch,
                     extra={})  # fmt: skip
        run.write_metrics({
            "history": history,
            "best_dev_accuracy": best,
            "best_epoch": max(history, key=lambda h: h["dev_accuracy"])["epoch"],
            "seconds": sum(h["seconds"] for h in history),
            "device": str(device),
            "stopped_early": stopped_early,
        })  # fmt: skip
        if stopped_early:
            log.info("stopped after %.1f minutes (train.max_minutes)", t.max_minutes)
            break
    seconds = sum(h["seconds"] for h in history)
    return f"{run.root}: best dev accuracy {100 * best:.2f}% ({seconds:.0f} s on {device})"


def evaluate_run_dir(
    run_dir: Path, *, split: str = "dev", data_dir: str | None = None, tfidf: bool | None = None
) -> str:
    """Accuracy of a trained run on ``split``; with ``tfidf`` (default: the config's
    ``evaluate.tfidf_baseline``) also TF-IDF + logistic regression trained on the same data."""
    from attnkit.apps.classification.classifier import TextClassifier

    clf = TextClassifier.load(run_dir)
    cfg = clf.config
    examples = load_split(cfg, split, data_dir)
    acc = clf.accuracy([e.text for e in examples], [e.label for e in examples])
    lines = [f"{run_dir} {split}: accuracy {100 * acc:.2f}% ({len(examples)} examples)"]
    if cfg.evaluate.tfidf_baseline if tfidf is None else tfidf:
        from attnkit.apps.classification.token_weights import TfidfBaseline

        train = load_split(cfg, "train", data_dir)
        baseline = TfidfBaseline.fit([e.text for e in train], [e.label for e in train])
        base_acc = baseline.accuracy([e.text for e in examples], [e.label for e in examples])
        lines.append(f"TF-IDF + logistic regression {split}: accuracy {100 * base_acc:.2f}%")
    return "\n".join(lines)
