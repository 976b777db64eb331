"""Summaries of papers by a trained pointer-generator: beam search (or greedy) over the
extended vocabulary, then one teacher-forced pass over the words chosen, which gives each
word's attention over the source, its generation probability ``p_gen`` and the coverage (the
same numbers the search computed: teacher forcing and stepping agree, a tested property)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from attnkit.apps.summarization.batches import Example, make_example, pad, source_batch
from attnkit.apps.summarization.data import BOS, EOS, Paper, Vocabulary, decode_extended
from attnkit.decoding import beam_search, greedy_decode


@dataclass
class Summary:
    """One paper's summary: ``words`` (EOS left out) and ``text``; the source ``words`` it
    attended; ``attention (T, S)``: each output step's weights over the source (the EOS step
    included, so ``T = len(words) + 1`` when the summary ended); ``p_gen (T,)`` (ones without
    the pointer: every word generated); ``coverage (S,)``: the attention summed over all
    steps; ``copied``: per word, whether it came from the source alone (an unknown word that
    only the pointer can write)."""

    paper_id: str
    words: list[str]
    source: list[str]
    attention: np.ndarray
    p_gen: np.ndarray
    coverage: np.ndarray
    copied: list[bool] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(self.words)


@torch.no_grad()
def search(model, examples: Sequence[Example], beam: int, max_len: int, alpha: float):
    """The best hypothesis of each example (``beam`` 1: greedy)."""
    device = next(model.parameters()).device
    src, mask = (t.to(device) for t in source_batch(examples))
    common = dict(bos_id=BOS, eos_id=EOS, max_len=max_len, max_len_ratio=1e9, max_len_offset=0)
    if beam == 1:
        return greedy_decode(model, src, mask, **common)
    found = beam_search(model, src, mask, beam_size=beam, length_penalty=alpha, **common)
    return [hyps[0] for hyps in found]


@torch.no_grad()
def explain(model, examples: Sequence[Example], outputs: Sequence[Sequence[int]]) -> list[dict]:
    """Teacher-forced attention, ``p_gen`` and coverage of each example's ``outputs`` (ids,
    EOS left out; the EOS step is scored too)."""
    device = next(model.parameters()).device
    src, mask = (t.to(device) for t in source_batch(examples))
    tgt_in = pad([[BOS, *o] for o in outputs]).to(device)  # (B, T)
    out = model(src, mask, tgt_in)
    weights = out.attention["cross"][:, 0].float().cpu()  # (B, T, S)
    p_gen = out.attention.get("p_gen")
    found = []
    for i, (e, o) in enumerate(zip(examples, outputs, strict=True)):
        steps, s = len(o) + 1, len(e.source_ids)
        a = weights[i, :steps, :s].numpy()  # (T, S)
        g = p_gen[i, :steps].float().cpu().numpy() if p_gen is not None else np.ones(steps)
        found.append({"attention": a, "p_gen": g, "coverage": a.sum(0)})
    return found


def summarize_examples(model, vocab: Vocabulary, examples, beam, max_len, alpha) -> list[Summary]:
    """:class:`Summary` of each example, decoded in one batch."""
    if not examples:
        return []
    model.eval()
    hyps = search(model, examples, beam, max_len, alpha)
    outputs = [h.tokens for h in hyps]
    shown = explain(model, examples, outputs)
    summaries = []
    for e, o, x in zip(examples, outputs, shown, strict=True):
        words = decode_extended(o, vocab, e.oovs)
        copied = [i >= len(vocab) for i in o]
        summaries.append(Summary(e.paper_id, words, e.source, **x, copied=copied))
    return summaries


def summarize_papers(
    model, vocab: Vocabulary, cfg, papers: Sequence[Paper], batch_size: int = 32
) -> list[Summary]:
    """Summaries of ``papers`` with ``cfg.train``'s beam, length limit and length penalty."""
    data, t = cfg.data, cfg.train
    examples = [
        make_example(p, vocab, data.max_source, data.max_target, cfg.model.copy) for p in papers
    ]
    found = []
    for k in range(0, len(examples), batch_size):
        chunk = examples[k : k + batch_size]
        found += summarize_examples(model, vocab, chunk, t.beam, t.max_len, t.length_penalty)
    return found
