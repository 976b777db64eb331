"""A trained language-model run as ``attnkit.load_run`` gives it: the kept model and its
character vocabulary, to generate text, score it and show its attention::

    attnkit train configs/shakespeare-gpt-cpu.yaml -o runs/gpt
    attnkit predict runs/gpt --prompt "ROMEO:" --max-new 200 --seed 1

    import attnkit
    run = attnkit.load_run("runs/gpt")
    print(run.generate("ROMEO:", max_new=200, seed=1))
    record = run.attention("ROMEO: But soft")     # every layer's and head's weights
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from attnkit import devices
from attnkit.apps.gpt.config import GPTConfig, load_config
from attnkit.apps.gpt.data import CharVocab
from attnkit.apps.gpt.generate import Sampling, generate
from attnkit.apps.gpt.model import GPT
from attnkit.apps.gpt.task import VOCAB_FILE
from attnkit.engine.checkpoint import load_model
from attnkit.engine.rundir import RunDir


@dataclass
class GPTRun:
    """``attnkit.load_run`` of a language-model run."""

    path: Path
    config: GPTConfig
    model: GPT
    vocab: CharVocab
    task: str = "language-model"

    def encode(self, text: str, what: str = "the prompt") -> torch.Tensor:
        """``text`` as ids ``(1, T)`` on the model's device; characters the model never saw
        are a ``ValueError`` naming them."""
        ids = self.vocab.encode(text, what)
        return torch.tensor([ids], dtype=torch.long, device=devices.of(self.model))  # (1, T)

    def generate(
        self,
        prompt: str,
        max_new: int = 200,
        *,
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
        seed: int | None = None,
        use_cache: bool = True,
    ) -> str:
        """``prompt`` continued by ``max_new`` characters (the prompt not repeated)."""
        if not prompt:
            raise ValueError("the prompt is empty: give at least one character")
        how = Sampling(temperature, top_k, top_p)
        ids = generate(
            self.model, self.encode(prompt), max_new, how, seed=seed, use_cache=use_cache
        )
        return self.vocab.decode(ids[0, len(prompt) :].tolist())

    @torch.no_grad()
    def attention(self, text: str):
        """The core attention record of ``text`` (its last ``block_size`` characters where
        positions are learned): stack ``"self"``, one ``(H, T, T)`` per layer, rows and columns
        labelled by character."""
        from attnkit.interpret.structure import AttentionRecord

        if self.model.positions is not None:
            text = text[-self.model.block_size :]
        self.model.eval()
        out = self.model(self.encode(text, "the text"), need_weights=True)
        layers = [w[0].float().cpu() for w in out.weights]  # (H, T, T) each
        labels = [_visible(c) for c in text]
        return AttentionRecord({"self": layers}, {"self": (labels, labels)})

    def loss(self, text: str) -> float:
        """Mean cross-entropy (nats per character) of predicting each next character of
        ``text``, read in consecutive blocks of ``block_size`` predicted characters."""
        return self._blocks_loss(self.encode(text, "the text")[0], "the text")[0]

    def file_loss(self, path: str | Path) -> tuple[float, int]:
        """:meth:`loss` of a UTF-8 text file, and how many characters it predicted."""
        from attnkit.textfiles import read_text

        return self._blocks_loss(self.encode(read_text(path), str(path))[0], str(path))

    @torch.no_grad()
    def _blocks_loss(self, ids: torch.Tensor, where: str) -> tuple[float, int]:
        """Mean cross-entropy of ``ids (N,)`` block by block, and the ``N - 1`` predicted."""
        if len(ids) < 2:
            raise ValueError(f"{where}: give at least two characters to score")
        block, total = self.model.block_size, 0.0
        self.model.eval()
        for start in range(0, len(ids) - 1, block):
            chunk = ids[start : start + block + 1]  # (<= T + 1,)
            logits = self.model(chunk[None, :-1]).logits[0]  # (T, V)
            loss = torch.nn.functional.cross_entropy(logits.float(), chunk[1:], reduction="sum")
            total += float(loss)
        return total / (len(ids) - 1), len(ids) - 1


def _visible(c: str) -> str:
    return {"\n": "⏎", " ": "␣"}.get(c, c)


def open_gpt_run(path: str | Path) -> GPTRun:
    """The run at ``path``: config, vocabulary and kept model (a run of another kind is refused,
    named)."""
    from attnkit.apps import require_kind

    require_kind(path, "language-model")
    run = RunDir(path)
    cfg = load_config(run.existing_config())
    vocab_file = run.root / VOCAB_FILE
    if not vocab_file.is_file():
        raise ValueError(f"{vocab_file}: missing; did training start?")
    vocab = CharVocab.load(vocab_file)
    model = GPT(cfg.model, len(vocab), cfg.data.block_size)
    load_model(model, run.model)
    return GPTRun(Path(path), cfg, model.eval(), vocab)
